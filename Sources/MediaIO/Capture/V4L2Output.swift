import CV4L2
import Compositor
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 output device that other programs read as a camera: v4l2loopback's, which is
/// what a browser, Zoom or Meet sees as "DualCam". Frames are I420 (YU12), which browsers
/// take, limited-range BT.709, written whole with write(2).
public final class V4L2Output {
    public let path: String
    public let size: Size
    private let fd: Int32
    /// Bytes of one frame: the three planes one after another, no padding.
    public var frameBytes: Int { size.width * size.height + 2 * (size.width / 2) * (size.height / 2) }

    /// Why a device cannot be written to, in one line that says what to do.
    public struct Problem: Error, CustomStringConvertible, Equatable, Sendable {
        public let description: String
    }

    /// The line that says how to make a virtual camera at `path`.
    static func howToLoad(_ path: String) -> String {
        let number = path.hasPrefix("/dev/video") ? String(path.dropFirst("/dev/video".count)) : ""
        let nr = Int(number).map { " video_nr=\($0)" } ?? ""
        return "load v4l2loopback: sudo modprobe v4l2loopback exclusive_caps=1 card_label=DualCam\(nr)"
    }

    /// Opens `path` and sets it to `size` at `framesPerSecond`. The width must be even (the
    /// chroma planes are half of it; browsers refuse odd ones).
    public init(path: String, size: Size, framesPerSecond: Int) throws(Problem) {
        guard size.width % 2 == 0, size.height % 2 == 0 else {
            throw Problem(description: "--virtual-camera needs an even width and height; the output is \(size)")
        }
        self.path = path
        self.size = size
        var status = stat()
        if stat(path, &status) != 0 {
            let e = errno
            throw Problem(description: e == ENOENT ? "\(path) does not exist: \(Self.howToLoad(path))"
                          : "\(path): \(String(cString: strerror(e)))")
        }
        guard status.st_mode & S_IFMT == S_IFCHR else {
            throw Problem(description: "\(path) is not a video device: \(Self.howToLoad("/dev/video10"))")
        }
        let fd: Int32
        do { fd = try systemCall { dc_raw_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) } } catch {
            throw Problem(description: V4L2Error(device: path, operation: "open", code: error.rawValue).description)
        }
        self.fd = fd
        var cap = v4l2_capability()
        guard (try? systemCall { dc_raw_ioctl(fd, dc_VIDIOC_QUERYCAP(), &cap) }) != nil else {
            _ = dc_raw_close(fd)
            throw Problem(description: "\(path) is not a V4L2 device: \(Self.howToLoad(path))")
        }
        guard V4L2Device.deviceCaps(cap) & UInt32(V4L2_CAP_VIDEO_OUTPUT) != 0 else {
            _ = dc_raw_close(fd)
            let driver = withUnsafeBytes(of: cap.driver) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // With exclusive_caps, a loopback device that another program is writing to shows
            // as a camera only.
            throw Problem(description: driver == "v4l2 loopback"
                          ? "\(path) is taken: another program writes to it (each virtual camera has one writer)"
                          : "\(path) is a camera (\(driver)), not a virtual camera: \(Self.howToLoad("/dev/video10"))")
        }
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        format.fmt.pix.width = UInt32(size.width)
        format.fmt.pix.height = UInt32(size.height)
        format.fmt.pix.pixelformat = dc_V4L2_PIX_FMT_YUV420()
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        format.fmt.pix.bytesperline = UInt32(size.width)
        format.fmt.pix.sizeimage = UInt32(size.width * size.height * 3 / 2)
        format.fmt.pix.colorspace = V4L2_COLORSPACE_REC709.rawValue
        format.fmt.pix.quantization = UInt32(V4L2_QUANTIZATION_LIM_RANGE.rawValue)
        do { _ = try systemCall { dc_raw_ioctl(fd, dc_VIDIOC_S_FMT(), &format) } } catch {
            _ = dc_raw_close(fd)
            throw Problem(description: error.rawValue == EBUSY
                          ? "\(path) is taken: another program writes to it, or reads it at another size"
                          : "\(path) does not take \(size.width)x\(size.height) I420: VIDIOC_S_FMT: \(error)")
        }
        guard format.fmt.pix.width == UInt32(size.width), format.fmt.pix.height == UInt32(size.height),
              format.fmt.pix.pixelformat == dc_V4L2_PIX_FMT_YUV420() else {
            _ = dc_raw_close(fd)
            throw Problem(description: "\(path) does not take \(size.width)x\(size.height) I420 (it offers "
                          + "\(format.fmt.pix.width)x\(format.fmt.pix.height) \(FourCC(format.fmt.pix.pixelformat)))")
        }
        // The rate readers are told; a device that keeps its own is no reason to fail.
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        parm.parm.output.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(framesPerSecond))
        _ = try? systemCall { dc_raw_ioctl(fd, dc_VIDIOC_S_PARM(), &parm) }
    }

    deinit { _ = dc_raw_close(fd) }

    /// Writes one frame (`frameBytes` bytes). Nil when written; the error otherwise (EAGAIN:
    /// the device had no room, the frame is skipped; ENODEV: the module went away).
    public func write(_ frame: UnsafeRawBufferPointer) -> Errno? {
        precondition(frame.count == frameBytes)
        do {
            let written = try systemCall { Glibc.write(fd, frame.baseAddress, frame.count) }
            return written == frame.count ? nil : Errno(EIO)
        } catch {
            return error
        }
    }
}
