import CFFmpeg
import Compositor

/// A refcounted I420 AVFrame of the output size: composed into by the compositor and handed
/// to the encoder as it is, so no whole-frame copy sits between composing and encoding.
// Sendable: its AVFrame is written by one thread at a time, handed over through the encoder's queue (a lock).
public final class EncoderFrame: @unchecked Sendable {
    public let frame: Frame
    public let size: Size

    public init(size: Size) throws(MediaError) {
        self.size = size
        frame = Frame()
        let f = frame.pointer
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        f.pointee.width = Int32(size.width)
        f.pointee.height = Int32(size.height)
        try check(av_frame_get_buffer(f, Int32(I420Buffer.rowAlignment))) { .encoderFailed(name: "frame pool", reason: $0) }
    }

    /// A frame of `size` for a camera's pictures, which may end up composed in place and
    /// encoded. Allocation fails only when memory is exhausted: one line and exit 1, as for
    /// FFmpeg's other allocations.
    public static func camera(size: Size) -> EncoderFrame {
        guard let f = try? EncoderFrame(size: size) else { outOfMemory("a \(size) frame") }
        return f
    }

    /// Another reference to `other`'s pixels (no copy): while it lives, `other` is not
    /// exclusive, so nobody writes into what is waiting to be encoded.
    public init(referencing other: EncoderFrame) {
        frame = Frame()
        size = other.size
        // Fails only when memory is exhausted.
        if av_frame_ref(frame.pointer, other.frame.pointer) < 0 { outOfMemory("a frame reference") }
    }

    /// A decoded frame, composed into where it lies (see `VideoPicture.composableFrame`).
    init(decoded: Frame) {
        frame = decoded
        size = Size(width: Int(decoded.pointer.pointee.width), height: Int(decoded.pointer.pointee.height))
    }

    /// The picture, to compose into once `prepareForWriting` has been called.
    public var view: I420View { VideoReader.view(of: frame.pointer) }

    /// Call before composing into it. FFmpeg's x264/x265 wrappers copy a picture while it is
    /// sent and keep no reference, so this does nothing; an encoder that kept one would
    /// otherwise see its picture change, and then it costs a copy instead.
    public func prepareForWriting() throws(MediaError) {
        try check(av_frame_make_writable(frame.pointer)) { .encoderFailed(name: "frame pool", reason: $0) }
    }

    /// True when nothing but this object references the pixels.
    public var isExclusive: Bool { av_frame_is_writable(frame.pointer) != 0 }
}
