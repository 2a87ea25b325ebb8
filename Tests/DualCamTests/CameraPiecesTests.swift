import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// The pure pieces of the camera path: finding a camera again, what its stamps mean, when a
/// buffer is too short, and who takes which role when cameras come and go.
@Suite struct CameraPiecesTests {
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
