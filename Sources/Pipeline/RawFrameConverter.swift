import Compositor
import MediaIO

/// Turns one uncompressed camera buffer into I420. A buffer shorter than its format needs
/// (a transfer cut short) is refused rather than shown with stale bytes at its end.
enum RawFrameConverter {
    /// The bytes a whole frame of `stream` takes.
    static func requiredBytes(_ stream: StreamFormat) -> Int {
        let rows = stream.height, line = stream.bytesPerLine
        switch stream.fourcc {
        case .yuyv, .uyvy: return line * (rows - 1) + 2 * stream.width
        case .nv12: return line * rows + line * ((rows + 1) / 2 - 1) + 2 * ((stream.width + 1) / 2)
        default:  // YU12: the two chroma planes at half the luma stride
            let cs = line / 2, ch = (rows + 1) / 2
            return line * rows + cs * ch + cs * (ch - 1) + (stream.width + 1) / 2
        }
    }

    /// Converts `bytes` into `out` (sized as the stream) and returns the matrix of what it
    /// wrote: packed 4:2:2 is re-encoded to `output` in the same pass (no second pass over
    /// the frame in the compositor); the planar formats keep the stream's. nil when the
    /// buffer is short. With `fork`, packed 4:2:2 is converted on two threads.
    static func convert(_ bytes: UnsafeRawBufferPointer, _ stream: StreamFormat, into out: I420View,
                        output: YCbCrMatrix, fork: (fork: ForkJoin, job: CameraFormats.Packed422Job)? = nil) -> YCbCrMatrix? {
        guard let raw = bytes.baseAddress, bytes.count >= requiredBytes(stream) else { return nil }
        let base = raw.assumingMemoryBound(to: UInt8.self), line = stream.bytesPerLine
        switch stream.fourcc {
        case .yuyv, .uyvy:
            let order: CameraFormats.Packed422 = stream.fourcc == .yuyv ? .yuyv : .uyvy
            guard let conversion = ColorConversion.between(stream.matrix, output) else {
                CameraFormats.packed422SIMD(base, stride: line, order: order, into: out)
                return stream.matrix
            }
            guard let fork else {
                CameraFormats.packed422SIMD(base, stride: line, order: order, into: out, converting: conversion)
                return output
            }
            let job = fork.job
            (job.source, job.stride, job.order, job.output, job.conversion) = (base, line, order, out, conversion)
            fork.fork.run(job)
            (job.source, job.output) = (nil, nil)
            return output
        case .nv12:
            CameraFormats.nv12SIMD(luma: base, lumaStride: line, chroma: base + line * stream.height,
                                   chromaStride: line, into: out)
        default:
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
