import Compositor
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A negotiated capture format.
public struct StreamFormat: Sendable, Equatable, CustomStringConvertible {
    public var fourcc: FourCC
    public var width: Int
    public var height: Int
    public var bytesPerLine: Int
    public var imageSize: Int
    public var framesPerSecond: Double
    /// The Y'CbCr matrix the driver says its YUV frames use.
    public var matrix: YCbCrMatrix = .bt601
    public var description: String { "\(fourcc) \(width)x\(height) @ \(String(format: "%g", framesPerSecond)) fps" }
    public init(fourcc: FourCC, width: Int, height: Int, bytesPerLine: Int, imageSize: Int, framesPerSecond: Double,
                matrix: YCbCrMatrix = .bt601) {
        self.fourcc = fourcc
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine
        self.imageSize = imageSize
        self.framesPerSecond = framesPerSecond
        self.matrix = matrix
    }
}

/// One filled buffer, valid until it is handed back with `requeue`.
public struct CapturedBuffer {
    public var index: Int
    public var bytes: UnsafeRawBufferPointer
    /// Seconds on CLOCK_MONOTONIC when the frame was captured (see `Timing`).
    public var timestamp: Double
    public var sequence: UInt32
    /// The driver says the frame is damaged (`V4L2_BUF_FLAG_ERROR`: a torn or lost transfer).
    public var isDamaged: Bool
    public var timing: Timing
    /// Seconds on CLOCK_MONOTONIC when the buffer was dequeued.
    public var dequeuedAt: Double

    /// What the driver's stamp stands for.
    public struct Timing: Equatable, Sendable {
        /// The stamp is on CLOCK_MONOTONIC (`V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`); if not,
        /// `timestamp` is when the buffer was dequeued.
        public var monotonic: Bool
        /// The stamp marks the start of exposure (`V4L2_BUF_FLAG_TSTAMP_SRC_SOE`) rather than
        /// the end of the frame.
        public var startOfExposure: Bool
        public init(monotonic: Bool, startOfExposure: Bool) {
            self.monotonic = monotonic
            self.startOfExposure = startOfExposure
        }
    }
}

extension V4L2Device {
    /// Asks for a format; the driver may adjust the size (it snaps to what it has).
    public func setFormat(_ fourcc: FourCC, width: Int, height: Int) throws(V4L2Error) -> StreamFormat {
        var f = v4l2_format()
        f.type = bufferType
        if isMultiplanar {
            f.fmt.pix_mp.width = UInt32(width)
            f.fmt.pix_mp.height = UInt32(height)
            f.fmt.pix_mp.pixelformat = fourcc.rawValue
            f.fmt.pix_mp.field = V4L2_FIELD_NONE.rawValue
            f.fmt.pix_mp.num_planes = 1
        } else {
            f.fmt.pix.width = UInt32(width)
            f.fmt.pix.height = UInt32(height)
            f.fmt.pix.pixelformat = fourcc.rawValue
            f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        }
        try ioctl(dc_VIDIOC_S_FMT(), "VIDIOC_S_FMT", &f)
        if isMultiplanar {
            let mp = f.fmt.pix_mp
            // Formats whose planes live in separate buffers (NV12M ...) are not ones we ask for.
            guard mp.num_planes == 1 else { throw V4L2Error(device: path, operation: "VIDIOC_S_FMT (\(mp.num_planes) planes)", code: EINVAL) }
            return StreamFormat(fourcc: FourCC(mp.pixelformat), width: Int(mp.width), height: Int(mp.height),
                                bytesPerLine: Int(mp.plane_fmt.0.bytesperline), imageSize: Int(mp.plane_fmt.0.sizeimage),
                                framesPerSecond: 0,
                                matrix: Self.matrix(encoding: UInt32(mp.ycbcr_enc), colorspace: mp.colorspace))
        }
        return StreamFormat(fourcc: FourCC(f.fmt.pix.pixelformat), width: Int(f.fmt.pix.width),
                            height: Int(f.fmt.pix.height), bytesPerLine: Int(f.fmt.pix.bytesperline),
                            imageSize: Int(f.fmt.pix.sizeimage), framesPerSecond: 0,
                            matrix: Self.matrix(encoding: f.fmt.pix.ycbcr_enc, colorspace: f.fmt.pix.colorspace))
    }

    /// Most webcams (sRGB, JPEG colorspaces) encode with BT.601 whatever the size.
    static func matrix(encoding: UInt32, colorspace space: UInt32) -> YCbCrMatrix {
        if encoding == UInt32(V4L2_YCBCR_ENC_709.rawValue) || (encoding == 0 && space == V4L2_COLORSPACE_REC709.rawValue) {
            return .bt709
        }
        if encoding == UInt32(V4L2_YCBCR_ENC_BT2020.rawValue) || (encoding == 0 && space == V4L2_COLORSPACE_BT2020.rawValue) {
            return .bt2020
        }
        return .bt601
    }

    /// Asks for a frame rate; returns the one the driver chose (0 if it cannot say).
    public func setFrameRate(_ fps: Double) throws(V4L2Error) -> Double {
        var p = v4l2_streamparm()
        p.type = bufferType
        p.parm.capture.timeperframe = v4l2_fract(numerator: 1000, denominator: UInt32((fps * 1000).rounded()))
        do { try ioctl(dc_VIDIOC_S_PARM(), "VIDIOC_S_PARM", &p) } catch where error.code == ENOTTY || error.code == EINVAL {
            return 0
        }
        let t = p.parm.capture.timeperframe
        return t.numerator > 0 ? Double(t.denominator) / Double(t.numerator) : 0
    }

    /// A buffer descriptor for buffer `index`, with room for the planes of a multi-planar one.
    private func withBuffer<R>(index: UInt32 = 0, _ body: (inout v4l2_buffer) throws(V4L2Error) -> R) throws(V4L2Error) -> R {
        var b = v4l2_buffer()
        b.type = bufferType
        b.memory = V4L2_MEMORY_MMAP.rawValue
        b.index = index
        guard isMultiplanar else { return try body(&b) }
        let planes = UnsafeMutablePointer<v4l2_plane>.allocate(capacity: Int(VIDEO_MAX_PLANES))
        planes.initialize(repeating: v4l2_plane(), count: Int(VIDEO_MAX_PLANES))
        defer { planes.deallocate() }
        b.length = UInt32(VIDEO_MAX_PLANES)
        b.m.planes = planes
        return try body(&b)
    }

    /// Maps `count` driver buffers, queues them all and starts streaming. ENOSPC here means
    /// the bus has no bandwidth left for this format (two USB 2.0 cameras, uncompressed).
    public func startStreaming(buffers count: Int = 4) throws(V4L2Error) {
        var req = v4l2_requestbuffers()
        req.count = UInt32(count)
        req.type = bufferType
        req.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(dc_VIDIOC_REQBUFS(), "VIDIOC_REQBUFS", &req)
        guard req.count >= 2 else { throw V4L2Error(device: path, operation: "VIDIOC_REQBUFS", code: ENOMEM) }
        for i in 0..<req.count {
            try withBuffer(index: i) { (b: inout v4l2_buffer) throws(V4L2Error) in
                try ioctl(dc_VIDIOC_QUERYBUF(), "VIDIOC_QUERYBUF", &b)
                let (length, offset) = isMultiplanar ? (Int(b.m.planes[0].length), Int64(b.m.planes[0].m.mem_offset))
                    : (Int(b.length), Int64(b.m.offset))
                guard let p = map(length: length, offset: offset) else {
                    throw V4L2Error(device: path, operation: "mmap", code: errno)
                }
                addMapping(p, length)
                try ioctl(dc_VIDIOC_QBUF(), "VIDIOC_QBUF", &b)
            }
        }
        var type = bufferType
        try ioctl(dc_VIDIOC_STREAMON(), "VIDIOC_STREAMON", &type)
        markStreaming(true)
    }

    /// Stops streaming and releases the buffers, so the format can be changed again.
    public func stopStreaming() {
        var type = bufferType
        _ = try? ioctl(dc_VIDIOC_STREAMOFF(), "VIDIOC_STREAMOFF", &type)
        markStreaming(false)
        unmapAll()
        var req = v4l2_requestbuffers()
        req.count = 0
        req.type = bufferType
        req.memory = V4L2_MEMORY_MMAP.rawValue
        _ = try? ioctl(dc_VIDIOC_REQBUFS(), "VIDIOC_REQBUFS", &req)
    }

    /// The next filled buffer, or nil if none came within `timeout` seconds.
    public func dequeue(timeout: Double) throws(V4L2Error) -> CapturedBuffer? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let rc = poll(&pfd, 1, Int32(timeout * 1000))
        if rc < 0 {
            if errno == EINTR { return nil }
            throw V4L2Error(device: path, operation: "poll", code: errno)
        }
        if rc == 0 { return nil }
        // On POLLERR/POLLHUP (device gone, stream broken) DQBUF below says which.
        return try withBuffer { (b: inout v4l2_buffer) throws(V4L2Error) -> CapturedBuffer? in
            do throws(V4L2Error) { try ioctl(dc_VIDIOC_DQBUF(), "VIDIOC_DQBUF", &b) } catch where error.code == EAGAIN {
                return nil
            }
            let i = Int(b.index)
            guard let m = mapping(i) else { throw V4L2Error(device: path, operation: "VIDIOC_DQBUF", code: EINVAL) }
            let (used, offset) = isMultiplanar ? (Int(b.m.planes[0].bytesused), Int(b.m.planes[0].data_offset))
                : (Int(b.bytesused), 0)
            let start = min(offset, m.length)
            let timing = CapturedBuffer.Timing(
                monotonic: b.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC),
                startOfExposure: b.flags & UInt32(V4L2_BUF_FLAG_TSTAMP_SRC_MASK) == UInt32(V4L2_BUF_FLAG_TSTAMP_SRC_SOE))
            let stamp = Double(b.timestamp.tv_sec) + Double(b.timestamp.tv_usec) / 1e6
            let now = monotonicNow()
            return CapturedBuffer(index: i, bytes: UnsafeRawBufferPointer(start: m.pointer + start,
                                                                          count: max(0, min(used - start, m.length - start))),
                                  timestamp: timing.monotonic ? stamp : now, sequence: b.sequence,
                                  isDamaged: b.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0, timing: timing, dequeuedAt: now)
        }
    }

    public func requeue(_ buffer: CapturedBuffer) throws(V4L2Error) {
        _ = try withBuffer(index: UInt32(buffer.index)) { (b: inout v4l2_buffer) throws(V4L2Error) in
            try ioctl(dc_VIDIOC_QBUF(), "VIDIOC_QBUF", &b)
        }
    }

    /// A control's value, or nil when the device has no such control.
    public func control(_ id: UInt32) -> Int32? {
        var c = v4l2_control(id: id, value: 0)
        return (try? ioctl(dc_VIDIOC_G_CTRL(), "VIDIOC_G_CTRL", &c)) != nil ? c.value : nil
    }
}
