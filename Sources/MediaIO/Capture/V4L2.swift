import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failed V4L2 call: which one, on which device, and errno.
public struct V4L2Error: Error, CustomStringConvertible, Equatable, Sendable {
    public let device: String
    public let operation: String
    public let code: Int32

    public init(device: String, operation: String, code: Int32) {
        self.device = device
        self.operation = operation
        self.code = code
    }

    /// What failed, and for the failures a user can mend, how.
    public var description: String {
        switch code {
        case EBUSY: return "\(device) is busy: another program has it open (close it; `fuser -v \(device)` names it)"
        case EACCES, EPERM:
            return "\(device): permission denied: is the user in the 'video' group? (`sudo usermod -aG video $USER`, then log in again)"
        case ENOENT: return "\(device) does not exist: `dualcam devices` lists the cameras there are"
        case ENODEV, ENXIO:
            // A device of another kind (/dev/tty with no terminal gives ENXIO) is not a camera that went.
            return isVideoDevice ? "\(device) is gone (unplugged?): \(operation) failed"
                : "\(device) is not a camera (no V4L2 device): `dualcam devices` lists the cameras there are"
        case ENOTTY: return "\(device) is not a camera (no V4L2 device): `dualcam devices` lists the cameras there are"
        default: return "\(device): \(operation) failed: \(String(cString: strerror(code)))"
        }
    }
    /// Whether the path is a video4linux device node (major 81), or is no longer there.
    private var isVideoDevice: Bool {
        var st = stat()
        guard stat(device, &st) == 0 else { return true }
        return (st.st_mode & S_IFMT) == S_IFCHR && (st.st_rdev >> 8) & 0xfff == 81
    }

    /// The camera is gone (unplugged) or broken beyond this stream.
    public var isFatal: Bool { code == ENODEV || code == EIO || code == ENXIO }
}

/// A four-character pixel format code.
public struct FourCC: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ text: String) {
        let b = Array(text.utf8) + [32, 32, 32, 32]
        rawValue = UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }
    public var description: String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespaces)
    }
    public static let yuyv = FourCC(dc_V4L2_PIX_FMT_YUYV())
    public static let uyvy = FourCC(dc_V4L2_PIX_FMT_UYVY())
    public static let nv12 = FourCC(dc_V4L2_PIX_FMT_NV12())
    public static let yu12 = FourCC(dc_V4L2_PIX_FMT_YUV420())
    public static let mjpeg = FourCC(dc_V4L2_PIX_FMT_MJPEG())
}

/// What one capture device offers.
public struct CaptureDeviceInfo: Sendable, Codable {
    public struct Mode: Sendable, Codable {
        public var width: Int
        public var height: Int
        public var framesPerSecond: [Double]
        public init(width: Int, height: Int, framesPerSecond: [Double]) {
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
        }
    }
    public struct Format: Sendable, Codable {
        public var fourcc: String
        public var description: String
        public var emulated: Bool
        public var modes: [Mode]
        public init(fourcc: String, description: String, emulated: Bool, modes: [Mode]) {
            self.fourcc = fourcc
            self.description = description
            self.emulated = emulated
            self.modes = modes
        }
    }
    public var path: String
    public var card: String
    public var driver: String
    public var bus: String
    public var formats: [Format]
    /// Its controls with their current values (`dualcam controls` and `--control` set them).
    public var controls: [CameraControl]
    public init(path: String, card: String, driver: String, bus: String, formats: [Format], controls: [CameraControl] = []) {
        self.path = path
        self.card = card
        self.driver = driver
        self.bus = bus
        self.formats = formats
        self.controls = controls
    }
}

/// An open V4L2 device. Owns the descriptor and, while streaming, the mapped buffers;
/// `deinit` stops streaming, unmaps and closes. Single-planar devices go through libv4l2
/// (which fixes up quirky webcams); multi-planar-only ones (`V4L2_CAP_VIDEO_CAPTURE_MPLANE`)
/// are driven directly, as libv4l2 would only hand them to a plugin that copies each frame.
public final class V4L2Device {
    public let path: String
    let fd: Int32
    /// Whether calls go through libv4l2 (else straight to the kernel).
    let throughLibv4l2: Bool
    /// `V4L2_BUF_TYPE_VIDEO_CAPTURE`, or `_MPLANE` for a multi-planar device.
    public let bufferType: UInt32
    public var isMultiplanar: Bool { bufferType == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.rawValue }
    private var mapped: [(pointer: UnsafeMutableRawPointer, length: Int)] = []
    private var streaming = false

    public init(path: String) throws(V4L2Error) {
        self.path = path
        let flags = O_RDWR | O_NONBLOCK | O_CLOEXEC
        let raw = dc_raw_open(path, flags)
        guard raw >= 0 else { throw V4L2Error(device: path, operation: "open", code: errno) }
        var cap = v4l2_capability()
        // Not a V4L2 device at all: said here, before libv4l2 (which prints its own line to
        // stderr for it) is asked to open it.
        guard dc_raw_ioctl(raw, dc_VIDIOC_QUERYCAP(), &cap) == 0 else {
            let code = errno
            _ = dc_raw_close(raw)
            throw V4L2Error(device: path, operation: "open", code: code)
        }
        let caps = Self.deviceCaps(cap)
        if caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) == 0 && caps & UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0 {
            fd = raw
            throughLibv4l2 = false
            bufferType = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.rawValue
            return
        }
        _ = dc_raw_close(raw)
        dc_v4l2_quiet()
        let fd = dc_v4l2_open(path, flags)
        guard fd >= 0 else { throw V4L2Error(device: path, operation: "open", code: errno) }
        self.fd = fd
        throughLibv4l2 = true
        bufferType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    }

    deinit {
        if streaming { var type = bufferType; _ = call(dc_VIDIOC_STREAMOFF(), &type) }
        for m in mapped { _ = unmap(m.pointer, m.length) }
        _ = throughLibv4l2 ? dc_v4l2_close(fd) : dc_raw_close(fd)
    }

    static func deviceCaps(_ cap: v4l2_capability) -> UInt32 {
        cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
    }

    private func call<T>(_ request: UInt, _ argument: inout T) -> Int32 {
        withUnsafeMutablePointer(to: &argument) {
            throughLibv4l2 ? dc_v4l2_ioctl(fd, request, $0) : dc_raw_ioctl(fd, request, $0)
        }
    }
    func map(length: Int, offset: Int64) -> UnsafeMutableRawPointer? {
        let p = throughLibv4l2 ? dc_v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset)
            : mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, __off_t(offset))
        return p == MAP_FAILED ? nil : p
    }
    private func unmap(_ p: UnsafeMutableRawPointer, _ length: Int) -> Int32 {
        throughLibv4l2 ? dc_v4l2_munmap(p, length) : munmap(p, length)
    }

    func addMapping(_ p: UnsafeMutableRawPointer, _ length: Int) { mapped.append((p, length)) }
    func mapping(_ i: Int) -> (pointer: UnsafeMutableRawPointer, length: Int)? { i < mapped.count ? mapped[i] : nil }
    func markStreaming(_ on: Bool) { streaming = on }
    func unmapAll() {
        for m in mapped { _ = unmap(m.pointer, m.length) }
        mapped.removeAll()
    }

    /// The one place ioctls are issued: EINTR is retried here, failures become typed errors.
    @discardableResult
    func ioctl<T>(_ request: UInt, _ name: String, _ argument: inout T) throws(V4L2Error) -> Int32 {
        do { return try systemCall { call(request, &argument) } } catch {
            throw V4L2Error(device: path, operation: name, code: error.rawValue)
        }
    }

    /// ioctl for enumerations: EINVAL means "no more entries".
    func enumerate<T>(_ request: UInt, _ name: String, _ argument: inout T) throws(V4L2Error) -> Bool {
        do {
            try ioctl(request, name, &argument)
            return true
        } catch {
            if error.code == EINVAL { return false }
            throw error
        }
    }

    public struct Capabilities: Sendable {
        public var card: String
        public var driver: String
        public var bus: String
        public var canCapture: Bool
    }

    public func capabilities() throws(V4L2Error) -> Capabilities {
        var cap = v4l2_capability()
        try ioctl(dc_VIDIOC_QUERYCAP(), "VIDIOC_QUERYCAP", &cap)
        let caps = Self.deviceCaps(cap)
        func text<U>(_ t: U) -> String {
            withUnsafeBytes(of: t) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return Capabilities(card: text(cap.card), driver: text(cap.driver), bus: text(cap.bus_info),
                            canCapture: caps & UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0
                                && caps & UInt32(V4L2_CAP_STREAMING) != 0)
    }

    public func formats() throws(V4L2Error) -> [CaptureDeviceInfo.Format] {
        var result: [CaptureDeviceInfo.Format] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = bufferType
            guard try enumerate(dc_VIDIOC_ENUM_FMT(), "VIDIOC_ENUM_FMT", &desc) else { break }
            let name = withUnsafeBytes(of: desc.description) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            result.append(CaptureDeviceInfo.Format(
                fourcc: FourCC(desc.pixelformat).description, description: name,
                emulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0, modes: try modes(desc.pixelformat)))
            index += 1
        }
        return result
    }

    private func modes(_ pixelformat: UInt32) throws(V4L2Error) -> [CaptureDeviceInfo.Mode] {
        var modes: [CaptureDeviceInfo.Mode] = []
        var index: UInt32 = 0
        while true {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = pixelformat
            guard try enumerate(dc_VIDIOC_ENUM_FRAMESIZES(), "VIDIOC_ENUM_FRAMESIZES", &size) else { break }
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                let w = Int(size.discrete.width), h = Int(size.discrete.height)
                modes.append(.init(width: w, height: h, framesPerSecond: try rates(pixelformat, w, h)))
            } else {
                // Stepwise or continuous: report the largest, which is what matters most.
                let w = Int(size.stepwise.max_width), h = Int(size.stepwise.max_height)
                modes.append(.init(width: w, height: h, framesPerSecond: try rates(pixelformat, w, h)))
                break
            }
            index += 1
        }
        return modes
    }

    private func rates(_ pixelformat: UInt32, _ w: Int, _ h: Int) throws(V4L2Error) -> [Double] {
        var rates: [Double] = []
        var index: UInt32 = 0
        while true {
            var ival = v4l2_frmivalenum()
            ival.index = index
            ival.pixel_format = pixelformat
            ival.width = UInt32(w)
            ival.height = UInt32(h)
            guard try enumerate(dc_VIDIOC_ENUM_FRAMEINTERVALS(), "VIDIOC_ENUM_FRAMEINTERVALS", &ival) else { break }
            if ival.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                if ival.discrete.numerator > 0 { rates.append(Double(ival.discrete.denominator) / Double(ival.discrete.numerator)) }
            } else {
                if ival.stepwise.min.numerator > 0 {
                    rates.append(Double(ival.stepwise.min.denominator) / Double(ival.stepwise.min.numerator))
                }
                break
            }
            index += 1
        }
        return rates
    }

    /// /dev/video0, /dev/video1, ... as they are now, in number order (capture or not).
    public static func nodePaths() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }.map { "/dev/\($0)" }
    }

    /// Video nodes this user may not open: why "no camera found" when cameras are plugged in.
    public static func nodesWithoutPermission() -> [String] {
        nodePaths().filter { access($0, R_OK | W_OK) != 0 && (errno == EACCES || errno == EPERM) }.sorted()
    }

    /// Every V4L2 capture device on this machine, by path order; without `formats`, only
    /// what identifies each (a cheap scan, for finding a camera plugged back in).
    public static func list(formats withFormats: Bool = true) -> [CaptureDeviceInfo] {
        var result: [CaptureDeviceInfo] = []
        for path in nodePaths() {
            guard let device = try? V4L2Device(path: path), let caps = try? device.capabilities(), caps.canCapture
            else { continue }
            result.append(CaptureDeviceInfo(path: path, card: caps.card, driver: caps.driver, bus: caps.bus,
                                            formats: withFormats ? (try? device.formats()) ?? [] : [],
                                            controls: withFormats ? device.controls() : []))
        }
        return result
    }
}
