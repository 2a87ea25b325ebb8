import Compositor
import MediaIO

/// Turns one camera buffer into the I420 picture the composer takes, on the camera's
/// capture thread: uncompressed formats converted by our kernels, JPEGs decoded (and packed
/// 4:2:2 converted) no larger than the camera's role needs (the inset's size while it is the
/// inset; packed 4:2:2 only in the columns the inset reads). Damaged buffers give nil.
/// `dualcam bench` runs this same code on made-up buffers.
package final class CameraFrameMaker {
    package let name: String
    private var decoders: [Int: MJPEGDecoder] = [:]
    /// The matrix of the last picture made: the output's for packed 4:2:2 (re-encoded as
    /// it is unpacked), the driver's for the other uncompressed formats, the JPEG's own for
    /// MJPEG.
    package private(set) var matrix: YCbCrMatrix
    /// What the compositor writes.
    let output: YCbCrMatrix
    /// Frames are converted on two threads: the frame waits for its conversion (measured,
    /// 1080p YUYV cold: 1.4 ms on one thread, 0.8 on two).
    private lazy var fork = ForkJoin(name: "dualcam-convert")
    private let packed422Job = CameraFormats.Packed422Job()

    package init(name: String, matrix: YCbCrMatrix, output: YCbCrMatrix) {
        self.name = name
        self.matrix = matrix
        self.output = output
    }

    /// `inset`: where the inset is on the canvas while this camera is in it, nil while it is
    /// full frame.
    package func make(_ bytes: UnsafeRawBufferPointer, isDamaged: Bool, stream: StreamFormat, inset: Rect?,
              exchange: FrameExchange) -> (frame: LiveFrame, shift: Int)? {
        guard !isDamaged else { return nil }
        let full = Size(width: stream.width, height: stream.height)
        guard CameraPixelFormat.isJPEG(stream.fourcc) else {
            let shift = RawFrameConverter.shift(stream, inset: inset?.size)
            let size = DecodeScale.reduced(full, shift: shift)
            let columns = shift > 0 ? inset.map { insetColumns(of: size, in: $0) } : nil
            let frame = exchange.frameToFill(size: size)
            guard let m = RawFrameConverter.convert(bytes, stream, into: frame.buffer.view, shift: shift, columns: columns,
                                                    output: output, fork: (fork, packed422Job))
            else { return nil }
            frame.madeFor = inset == nil ? .fullFrame : .inset
            matrix = m
            lastFormat = stream.fourcc
            return (frame, shift)
        }
        let shift = inset.map { DecodeScale.largestShift(source: full, covering: $0.size) } ?? 0
        guard let decoder = decoder(shift: shift) else { return nil }
        let frame = exchange.frameToFill(size: DecodeScale.reduced(full, shift: shift))
        frame.madeFor = inset == nil ? .fullFrame : .inset
        guard let m = try? decoder.decode(bytes, into: frame.buffer, output: output, fork: fork) else { return nil }
        matrix = m
        lastFormat = stream.fourcc
        return (frame, shift)
    }

    /// The scale of the last picture made, and what made it at that scale.
    private var lastShift = 0
    private var lastFormat: FourCC?

    /// The line that says at what size this source's frames are made from now on, when a
    /// picture made at `shift` changes it; nil otherwise.
    func scaleChange(_ shift: Int) -> String? {
        guard shift != lastShift else { return nil }
        lastShift = shift
        let reducing = lastFormat.map { CameraPixelFormat.isJPEG($0) ? "decoding MJPG" : "converting \($0)" } ?? "decoding MJPG"
        return shift == 0 ? "\(name): \(reducing) at full size (full frame)" : "\(name): \(reducing) at 1/\(1 << shift) size for the inset"
    }

    /// The columns of a picture of `size` that the inset at `rect` reads (a 1080p camera's
    /// picture for the default inset: 42 % of them, and of its memory traffic), worked out
    /// once per size and place: a swap moves between two every few seconds.
    private func insetColumns(of size: Size, in rect: Rect) -> Range<Int> {
        if let known = columnsRead, known.size == size, known.rect == rect { return known.columns }
        let columns = ScalePlan.lumaColumnsRead(source: size, aspectFilling: rect)
        columnsRead = (size, rect, columns)
        return columns
    }
    private var columnsRead: (size: Size, rect: Rect, columns: Range<Int>)?

    /// One decoder per scale, kept: a swap moves between two of them every few seconds.
    private func decoder(shift: Int) -> MJPEGDecoder? {
        if let d = decoders[shift] { return d }
        let d = try? MJPEGDecoder(name: name, shift: shift)
        decoders[shift] = d
        return d
    }
}
