import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// The pure pieces of the camera path: finding a camera again, what its stamps mean, when a
/// buffer is too short, and who takes which role when cameras come and go.
@Suite(.timeLimit(.minutes(10))) struct CameraPiecesTests {
    func device(_ path: String, bus: String, card: String = "HD Webcam C920", driver: String = "uvcvideo") -> CaptureDeviceInfo {
        CaptureDeviceInfo(path: path, card: card, driver: driver, bus: bus, formats: [])
    }

    @Test func aCameraIsFoundAgainByItsBusPathWhateverItsNode() {
        let me = CameraIdentity(bus: "usb-0000:00:14.0-2", card: "HD Webcam C920", driver: "uvcvideo")
        let now = [device("/dev/video0", bus: "usb-0000:00:14.0-1"), device("/dev/video4", bus: "usb-0000:00:14.0-2")]
        #expect(me.find(among: now, claimed: ["/dev/video0"])?.path == "/dev/video4")
    }

    @Test func onAnotherPortItIsFoundByNameOnlyWhenThatIsUnambiguous() {
        let me = CameraIdentity(bus: "usb-0000:00:14.0-2", card: "HD Webcam C920", driver: "uvcvideo")
        // Same model as the other camera, whose node is claimed: the free one is ours.
        let moved = [device("/dev/video0", bus: "usb-0000:00:14.0-1"), device("/dev/video6", bus: "usb-0000:00:14.0-3")]
        #expect(me.find(among: moved, claimed: ["/dev/video0"])?.path == "/dev/video6")
        // Two free cameras of that name: which one is ours cannot be told.
        #expect(me.find(among: moved, claimed: []) == nil)
        // Another model on the port is not ours.
        let stranger = [device("/dev/video2", bus: "usb-0000:00:14.0-3", card: "Integrated Camera")]
        #expect(me.find(among: stranger, claimed: []) == nil)
    }

    @Test func stampsAreMovedToTheMiddleOfTheExposure() {
        let period = 1.0 / 30
        let eof = CapturedBuffer.Timing(monotonic: true, startOfExposure: false)
        let soe = CapturedBuffer.Timing(monotonic: true, startOfExposure: true)
        #expect(abs(CaptureTiming.middleOfExposure(stamp: 10, timing: eof, exposure: nil, framePeriod: period) - (10 - period / 2)) < 1e-9)
        #expect(abs(CaptureTiming.middleOfExposure(stamp: 10, timing: eof, exposure: 0.01, framePeriod: period) - 9.995) < 1e-9)
        // An exposure longer than a frame (a dark room) cannot have ended earlier than a frame ago.
        #expect(abs(CaptureTiming.middleOfExposure(stamp: 10, timing: eof, exposure: 0.2, framePeriod: period) - (10 - period / 2)) < 1e-9)
        #expect(abs(CaptureTiming.middleOfExposure(stamp: 10, timing: soe, exposure: 0.01, framePeriod: period) - 10.005) < 1e-9)
        #expect(CaptureTiming.middleOfExposure(stamp: 10, timing: soe, exposure: nil, framePeriod: period) == 10)
    }

    @Test(arguments: [FourCC.yuyv, .uyvy, .nv12, .yu12])
    func aShortBufferIsRefusedAndAWholeOneConverted(fourcc: FourCC) {
        let w = 64, h = 36
        let line = fourcc == .yuyv || fourcc == .uyvy ? 2 * w : w
        let stream = StreamFormat(fourcc: fourcc, width: w, height: h, bytesPerLine: line,
                                  imageSize: fourcc == .yuyv || fourcc == .uyvy ? line * h : line * h * 3 / 2, framesPerSecond: 30)
        let bytes = [UInt8](repeating: 128, count: stream.imageSize)
        let out = I420Buffer(size: Size(width: w, height: h))
        #expect(RawFrameConverter.requiredBytes(stream) == stream.imageSize)
        #expect(bytes.withUnsafeBytes { RawFrameConverter.convert($0, stream, into: out.view, output: .bt709) != nil })
        #expect(!bytes.withUnsafeBytes { RawFrameConverter.convert(UnsafeRawBufferPointer(rebasing: $0.dropLast(line)), stream, into: out.view, output: .bt709) != nil })
    }

    /// The camera in the inset: its packed 4:2:2 frames are converted no larger than the inset
    /// needs (1080p at 1/4, 720p at 1/2), as its JPEGs would be decoded, and said once, and
    /// only in the columns the inset reads; full frame, whole and at full size again. The
    /// reduced picture's columns against ffmpeg's shrinking of the same bytes (libswscale's
    /// area filter: a box for whole ratios). A size with no whole blocks stays full size.
    @Test(.timeLimit(.minutes(2)), arguments: [(1920, 1080, 2), (1280, 720, 1), (1282, 720, 0)])
    func theInsetCamerasPackedFramesAreConvertedNoLargerThanTheInsetNeeds(size: (w: Int, h: Int, shift: Int)) throws {
        let (w, h, shift) = size
        // Smooth, with detail at every scale the box sees, and chroma that moves on its own.
        var yuyv = [UInt8](repeating: 0, count: 2 * w * h)
        for y in 0..<h {
            for x in 0..<w {
                let luma = 128 + 60 * sin(Double(x) / 23) * cos(Double(y) / 31) + 40 * sin(Double(x + 2 * y) / 7)
                let chroma = x % 2 == 0 ? 128 + 50 * sin(Double(y) / 17 + Double(x) / 41) : 128 + 50 * cos(Double(x) / 29)
                yuyv[2 * (y * w + x)] = UInt8(max(16, min(235, luma)))
                yuyv[2 * (y * w + x) + 1] = UInt8(chroma)
            }
        }
        let stream = StreamFormat(fourcc: .yuyv, width: w, height: h, bytesPerLine: 2 * w, imageSize: 2 * w * h,
                                  framesPerSecond: 30, matrix: .bt709)
        let maker = CameraFrameMaker(name: "cam", matrix: .bt709, output: .bt709)
        let exchange = FrameExchange()
        let inset = try #require(yuyv.withUnsafeBytes { maker.make($0, isDamaged: false, stream: stream, inset: PiPLayout().insetRect, exchange: exchange) })
        #expect(inset.shift == shift)
        // Made for the inset whatever it could leave out: the swap waits for the next picture.
        #expect(inset.frame.madeFor == .inset)
        #expect(inset.frame.buffer.view.size == Size(width: w >> shift, height: h >> shift))
        #expect(maker.scaleChange(inset.shift) == (shift == 0 ? nil : "cam: converting YUYV at 1/\(1 << shift) size for the inset"))
        #expect(maker.scaleChange(inset.shift) == nil)
        let full = try #require(yuyv.withUnsafeBytes { maker.make($0, isDamaged: false, stream: stream, inset: nil, exchange: exchange) })
        #expect(full.shift == 0 && full.frame.buffer.view.size == Size(width: w, height: h) && full.frame.madeFor == .fullFrame)
        #expect(maker.scaleChange(full.shift) == (shift == 0 ? nil : "cam: converting YUYV at full size (full frame)"))
        guard shift > 0 else { return }

        let dir = try TempDir()
        try Data(yuyv).write(to: URL(fileURLWithPath: dir.path("in.yuyv")))
        let ffmpeg = try #require(Env.tool("ffmpeg"))
        let r = try run(ffmpeg, ["-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "\(w)x\(h)",
                                 "-i", dir.path("in.yuyv"), "-vf", "scale=\(w >> shift):\(h >> shift):flags=area",
                                 "-f", "rawvideo", "-pix_fmt", "yuv420p", "-y", dir.path("out.yuv")])
        try #require(r.status == 0, "\(r.stderr)")
        let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.path("out.yuv"))))
        // Made again now that the frame holds the full-size picture: the columns are the
        // inset's alone.
        let again = try #require(yuyv.withUnsafeBytes { maker.make($0, isDamaged: false, stream: stream, inset: PiPLayout().insetRect, exchange: exchange) })
        let view = again.frame.buffer.view
        let columns = ScalePlan.lumaColumnsRead(source: view.size, aspectFilling: PiPLayout().insetRect)
        #expect(columns.count * 2 < view.size.width)
        var offset = 0
        for (name, plane, read) in [("Y", view.y, columns), ("U", view.u, columns.lowerBound / 2..<(columns.upperBound + 1) / 2),
                                    ("V", view.v, columns.lowerBound / 2..<(columns.upperBound + 1) / 2)] {
            let ours = (0..<plane.height).flatMap { y in read.map { plane[$0, y] } }
            let theirs = (0..<plane.height).flatMap { y in read.map { reference[offset + y * plane.width + $0] } }
            offset += plane.width * plane.height
            #expect(psnr(ours, theirs) > 45, "\(name) \(w)x\(h) 1/\(1 << shift): \(psnr(ours, theirs)) dB")
        }
    }

    @Test func theCamerasOwnFormatsComeBeforeOnesLibv4l2MakesUp() {
        func format(_ f: String, emulated: Bool) -> CaptureDeviceInfo.Format {
            CaptureDeviceInfo.Format(fourcc: f, description: f, emulated: emulated, modes: [])
        }
        let webcam = [format("MJPG", emulated: false), format("YUYV", emulated: false), format("YU12", emulated: true)]
        #expect(CameraSource.candidates(wanted: CameraSource.preference, offered: webcam) == [.yuyv, .mjpeg])
        let onlyJPEG = [format("MJPG", emulated: false), format("YU12", emulated: true), format("RGB3", emulated: true)]
        #expect(CameraSource.candidates(wanted: CameraSource.preference, offered: onlyJPEG) == [.mjpeg])
        let onlyEmulated = [format("S910", emulated: false), format("YU12", emulated: true)]
        #expect(CameraSource.candidates(wanted: CameraSource.preference, offered: onlyEmulated) == [.yu12])
    }
}
