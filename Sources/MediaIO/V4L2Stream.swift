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
}

/// One filled buffer, valid until it is handed back with `requeue`.
public struct CapturedBuffer {
    public var index: Int
    public var bytes: UnsafeRawBufferPointer
    /// Seconds on CLOCK_MONOTONIC when the frame was captured.
    public var timestamp: Double
    public var sequence: UInt32
}

extension V4L2Device {
    /// Asks for a format; the driver may adjust the size (it snaps to what it has).
    public func setFormat(_ fourcc: FourCC, width: Int, height: Int) throws(V4L2Error) -> StreamFormat {
        var f = v4l2_format()
        f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        f.fmt.pix.width = UInt32(width)
        f.fmt.pix.height = UInt32(height)
        f.fmt.pix.pixelformat = fourcc.rawValue
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try ioctl(dc_VIDIOC_S_FMT(), "VIDIOC_S_FMT", &f)
        // Most webcams (sRGB, JPEG colorspaces) encode with BT.601 whatever the size.
        let encoding = f.fmt.pix.ycbcr_enc, space = f.fmt.pix.colorspace
        let matrix: YCbCrMatrix
        if encoding == UInt32(V4L2_YCBCR_ENC_709.rawValue) || (encoding == 0 && space == V4L2_COLORSPACE_REC709.rawValue) {
            matrix = .bt709
        } else if encoding == UInt32(V4L2_YCBCR_ENC_BT2020.rawValue) || (encoding == 0 && space == V4L2_COLORSPACE_BT2020.rawValue) {
            matrix = .bt2020
        } else {
            matrix = .bt601
        }
        return StreamFormat(fourcc: FourCC(f.fmt.pix.pixelformat), width: Int(f.fmt.pix.width),
                            height: Int(f.fmt.pix.height), bytesPerLine: Int(f.fmt.pix.bytesperline),
                            imageSize: Int(f.fmt.pix.sizeimage), framesPerSecond: 0, matrix: matrix)
    }

    /// Asks for a frame rate; returns the one the driver chose (0 if it cannot say).
    public func setFrameRate(_ fps: Double) throws(V4L2Error) -> Double {
        var p = v4l2_streamparm()
        p.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        p.parm.capture.timeperframe = v4l2_fract(numerator: 1000, denominator: UInt32((fps * 1000).rounded()))
        do { try ioctl(dc_VIDIOC_S_PARM(), "VIDIOC_S_PARM", &p) } catch where error.code == ENOTTY || error.code == EINVAL {
            return 0
        }
        let t = p.parm.capture.timeperframe
        return t.numerator > 0 ? Double(t.denominator) / Double(t.numerator) : 0
    }

    /// Maps `count` driver buffers, queues them all and starts streaming. ENOSPC here means
    /// the bus has no bandwidth left for this format (two USB 2.0 cameras, uncompressed).
    public func startStreaming(buffers count: Int = 4) throws(V4L2Error) {
        var req = v4l2_requestbuffers()
        req.count = UInt32(count)
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        req.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(dc_VIDIOC_REQBUFS(), "VIDIOC_REQBUFS", &req)
        guard req.count >= 2 else { throw V4L2Error(device: path, operation: "VIDIOC_REQBUFS", code: ENOMEM) }
        for i in 0..<Int(req.count) {
            var b = v4l2_buffer()
            b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            b.memory = V4L2_MEMORY_MMAP.rawValue
            b.index = UInt32(i)
            try ioctl(dc_VIDIOC_QUERYBUF(), "VIDIOC_QUERYBUF", &b)
            let p = dc_v4l2_mmap(nil, Int(b.length), PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(b.m.offset))
            guard let p, p != MAP_FAILED else { throw V4L2Error(device: path, operation: "mmap", code: errno) }
            addMapping(p, Int(b.length))
            try ioctl(dc_VIDIOC_QBUF(), "VIDIOC_QBUF", &b)
        }
        var type = UInt32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try ioctl(dc_VIDIOC_STREAMON(), "VIDIOC_STREAMON", &type)
        markStreaming(true)
    }

    /// Stops streaming and releases the buffers, so the format can be changed again.
    public func stopStreaming() {
        var type = UInt32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        _ = try? ioctl(dc_VIDIOC_STREAMOFF(), "VIDIOC_STREAMOFF", &type)
        markStreaming(false)
        unmapAll()
        var req = v4l2_requestbuffers()
        req.count = 0
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
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
        var b = v4l2_buffer()
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        b.memory = V4L2_MEMORY_MMAP.rawValue
        do { try ioctl(dc_VIDIOC_DQBUF(), "VIDIOC_DQBUF", &b) } catch where error.code == EAGAIN { return nil }
        let i = Int(b.index)
        guard let m = mapping(i) else { throw V4L2Error(device: path, operation: "VIDIOC_DQBUF", code: EINVAL) }
        let ts = Double(b.timestamp.tv_sec) + Double(b.timestamp.tv_usec) / 1e6
        return CapturedBuffer(index: i, bytes: UnsafeRawBufferPointer(start: m.pointer, count: min(Int(b.bytesused), m.length)),
                              timestamp: ts, sequence: b.sequence)
    }

    public func requeue(_ buffer: CapturedBuffer) throws(V4L2Error) {
        var b = v4l2_buffer()
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        b.memory = V4L2_MEMORY_MMAP.rawValue
        b.index = UInt32(buffer.index)
        try ioctl(dc_VIDIOC_QBUF(), "VIDIOC_QBUF", &b)
    }
}
