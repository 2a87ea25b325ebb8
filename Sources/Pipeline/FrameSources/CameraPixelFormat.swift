import Compositor
import MediaIO

/// The camera pixel formats `record` takes: one row each, in the order they are preferred
/// (uncompressed first: no decoding, no JPEG artefacts; MJPEG for what they cannot do). A
/// row gives the format's code, its CLI name (the code as `v4l2-ctl` prints it) and how
/// its buffers are laid out, which says how they become I420. A new format is a row here;
/// one with a layout not yet known is also a case of `Layout` and its kernel.
public struct CameraPixelFormat: Sendable, Equatable {
    enum Layout: Sendable, Equatable {
        /// Packed 4:2:2, two bytes a pixel, in this order.
        case packed422(CameraFormats.Packed422)
        /// A luma plane, then interleaved Cb/Cr at half size.
        case semiPlanar
        /// Luma, Cb and Cr planes, the chroma ones at half the luma's stride.
        case planar
        /// A JPEG per buffer, of any length.
        case jpeg
    }

    public let fourcc: FourCC
    let layout: Layout

    static let all: [CameraPixelFormat] = [
        CameraPixelFormat(fourcc: .yuyv, layout: .packed422(.yuyv)),
        CameraPixelFormat(fourcc: .uyvy, layout: .packed422(.uyvy)),
        CameraPixelFormat(fourcc: .nv12, layout: .semiPlanar),
        CameraPixelFormat(fourcc: .yu12, layout: .planar),
        CameraPixelFormat(fourcc: .mjpeg, layout: .jpeg),
    ]

    /// The codes in order of preference.
    static var preference: [FourCC] { all.map(\.fourcc) }
    /// The names `--pixel-format` takes, as `v4l2-ctl` prints them.
    public static var names: [String] { all.map(\.fourcc.description) }
    public static func named(_ name: String) -> CameraPixelFormat? { all.first { $0.fourcc.description == name.uppercased() } }
    /// The row of `fourcc`; nil for a format `record` does not take.
    static func row(_ fourcc: FourCC) -> CameraPixelFormat? { all.first { $0.fourcc == fourcc } }
    static func isJPEG(_ fourcc: FourCC) -> Bool { row(fourcc)?.layout == .jpeg }
}

/// Turns one uncompressed camera buffer into I420. A buffer shorter than its format needs
/// (a transfer cut short) is refused rather than shown with stale bytes at its end.
enum RawFrameConverter {
    /// The fewest bytes from one row to the next a frame of `stream` can have: a driver that
    /// reports fewer would have its rows read past their ends.
    static func minimumStride(_ stream: StreamFormat) -> Int {
        switch CameraPixelFormat.row(stream.fourcc)?.layout {
        case .packed422: return 2 * stream.width
        // Chroma rows of planar formats are half as long, so the luma row is made even.
        case .semiPlanar, .planar: return 2 * ((stream.width + 1) / 2)
        case .jpeg, nil: return 0
        }
    }

    /// Whether the driver's description of `stream` can be read as it says: a size within the
    /// pixel cap files have, and rows no shorter than the format's minimum (nor absurdly long).
    static func isSound(_ stream: StreamFormat) -> Bool {
        guard stream.width > 0, stream.height > 0, Int64(stream.width) * Int64(stream.height) <= PictureLimit.maxPixels else {
            return false
        }
        guard CameraPixelFormat.row(stream.fourcc)?.layout != .jpeg else { return true }
        return stream.bytesPerLine >= minimumStride(stream) && stream.bytesPerLine <= 16 * stream.width + 4096
    }

    /// The bytes a whole frame of `stream` takes.
    static func requiredBytes(_ stream: StreamFormat) -> Int {
        let rows = stream.height, line = stream.bytesPerLine
        switch CameraPixelFormat.row(stream.fourcc)?.layout {
        case .packed422: return line * (rows - 1) + 2 * stream.width
        case .semiPlanar: return line * rows + line * ((rows + 1) / 2 - 1) + 2 * ((stream.width + 1) / 2)
        case .planar:
            let cs = line / 2, ch = (rows + 1) / 2
            return line * rows + cs * ch + cs * (ch - 1) + (stream.width + 1) / 2
        case .jpeg, nil: return 0
        }
    }

    /// How far a frame of `stream` is reduced while it is converted, for a camera whose
    /// picture fills `inset` (nil: it is full frame): packed 4:2:2 only, by as much as
    /// still covers the inset (as a JPEG's decoding is), in whole blocks.
    static func shift(_ stream: StreamFormat, inset: Size?) -> Int {
        guard let inset, case .packed422 = CameraPixelFormat.row(stream.fourcc)?.layout else { return 0 }
        let full = Size(width: stream.width, height: stream.height)
        let covering = DecodeScale.largestShift(source: full, covering: inset, maxShift: CameraFormats.packed422Shifts.upperBound)
        return stride(from: covering, through: 1, by: -1).first { CameraFormats.packed422Reduces(full, shift: $0) } ?? 0
    }

    /// Converts `bytes` into `out` (sized as the stream, reduced by `shift`, which only
    /// packed 4:2:2 takes) and returns the matrix of what it wrote: packed 4:2:2 is
    /// re-encoded to `output` in the same pass (no second pass over the frame in the
    /// compositor); the planar formats keep the stream's. nil when the buffer is short.
    /// With `fork`, packed 4:2:2 is converted on two threads; a reduced one only in `columns`
    /// (of `out`, nil: all), which the inset reads.
    static func convert(_ bytes: UnsafeRawBufferPointer, _ stream: StreamFormat, into out: I420View, shift: Int = 0,
                        columns: Range<Int>? = nil, output: YCbCrMatrix,
                        fork: (fork: ForkJoin, job: CameraFormats.Packed422Job)? = nil) -> YCbCrMatrix? {
        guard let raw = bytes.baseAddress, isSound(stream), bytes.count >= requiredBytes(stream),
              let layout = CameraPixelFormat.row(stream.fourcc)?.layout else { return nil }
        let base = raw.assumingMemoryBound(to: UInt8.self), line = stream.bytesPerLine
        let packed = if case .packed422 = layout { true } else { false }
        precondition(shift == 0 || packed, "only packed 4:2:2 is converted reduced")
        switch layout {
        case let .packed422(order):
            let conversion = ColorConversion.between(stream.matrix, output)
            if let fork {
                let job = fork.job
                (job.source, job.stride, job.order, job.shift, job.output, job.conversion, job.columns)
                    = (base, line, order, shift, out, conversion, columns)
                fork.fork.run(job)
                (job.source, job.output) = (nil, nil)
            } else {
                CameraFormats.packed422Picture(base, stride: line, order: order, shift: shift, into: out, converting: conversion,
                                               columns: columns)
            }
            return conversion == nil ? stream.matrix : output
        case .semiPlanar:
            CameraFormats.nv12SIMD(luma: base, lumaStride: line, chroma: base + line * stream.height,
                                   chromaStride: line, into: out)
        case .jpeg:
            return nil  // decoded by MJPEGDecoder, never here
        case .planar:
            let cs = line / 2, ch = (stream.height + 1) / 2, cw = (stream.width + 1) / 2
            let luma = UnsafeMutablePointer(mutating: base)
            out.copy(from: I420View(
                y: PlaneView(base: luma, width: stream.width, height: stream.height, stride: line),
                u: PlaneView(base: luma + line * stream.height, width: cw, height: ch, stride: cs),
                v: PlaneView(base: luma + line * stream.height + cs * ch, width: cw, height: ch, stride: cs)))
        }
        return stream.matrix
    }
}
