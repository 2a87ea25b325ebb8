import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// The retry policy when a camera refuses to stream, driven by a scripted driver: USB
/// bandwidth (ENOSPC) cannot be provoked with vivid, whose STREAMON fault gives EINVAL
/// (that one is exercised against the real driver in VividTests).
@Suite struct FormatNegotiationTests {
    static let hd = Size(width: 1280, height: 720)
    let formats: [FourCC] = [.yuyv, .nv12, .mjpeg]
    let listed = [Size(width: 640, height: 480), Size(width: 1920, height: 1080), Size(width: 1280, height: 720),
                  Size(width: 320, height: 240), Size(width: 640, height: 480)]

    /// Runs the negotiation against a driver that refuses what `refuse` says; returns what
    /// streamed (or the error), every attempt in order and the log.
    func negotiate(refuse: (FormatNegotiation.Choice) -> Int32?) -> (Result<String, V4L2Error>, [String], [String]) {
        let n = FormatNegotiation(device: "/dev/video9", formats: formats, requested: Self.hd, smallerSizes: listed)
        var attempts: [String] = [], log: [String] = []
        let result = Result { () throws(V4L2Error) -> String in
            try n.run(log: { log.append($0) }) { choice in
                attempts.append(choice.description)
                if let code = refuse(choice) {
                    return .refused(V4L2Error(device: "/dev/video9", operation: "VIDIOC_STREAMON", code: code))
                }
                return .started(choice.description)
            }
        }
        return (result, attempts, log)
    }

    @Test func noBandwidthForUncompressedFallsBackToMJPEGAtTheSameSizeAndSaysSo() throws {
        let (result, attempts, log) = negotiate { $0.fourcc == .mjpeg ? nil : ENOSPC }
        #expect(try result.get() == "MJPG 1280x720")
        #expect(attempts == ["YUYV 1280x720", "NV12 1280x720", "MJPG 1280x720"])
        #expect(log == [
            "/dev/video9: cannot stream YUYV 1280x720: not enough USB bandwidth (ENOSPC); trying NV12 1280x720",
            "/dev/video9: cannot stream NV12 1280x720: not enough USB bandwidth (ENOSPC); trying MJPG 1280x720",
        ])
    }

    @Test func noBandwidthAtAnyFormatTriesSmallerSizesLargestFirst() throws {
        let (result, attempts, log) = negotiate { $0.size.width >= 1280 ? ENOSPC : nil }
        #expect(try result.get() == "YUYV 640x480")
        #expect(attempts == ["YUYV 1280x720", "NV12 1280x720", "MJPG 1280x720", "YUYV 640x480"])
        #expect(log.last == "/dev/video9: cannot stream MJPG 1280x720: not enough USB bandwidth (ENOSPC); trying YUYV 640x480")
    }

    @Test func aBusyCameraIsNotRetried() {
        let (result, attempts, log) = negotiate { _ in EBUSY }
        #expect(throws: V4L2Error(device: "/dev/video9", operation: "VIDIOC_STREAMON", code: EBUSY)) { try result.get() }
        #expect(attempts == ["YUYV 1280x720"])
        #expect(log.isEmpty)
    }

    @Test func whenNothingStreamsTheLastRefusalIsTheError() {
        let (result, attempts, log) = negotiate { _ in ENOSPC }
        #expect(throws: V4L2Error(device: "/dev/video9", operation: "VIDIOC_STREAMON", code: ENOSPC)) { try result.get() }
        // 1280x720 then 640x480 and 320x240 (1920x1080 is larger than asked; 640x480 listed twice).
        #expect(attempts.count == 9)
        #expect(log.last?.hasSuffix("MJPG 320x240: not enough USB bandwidth (ENOSPC); nothing left to try") == true)
    }
}
