import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// Which format, size and rate a camera is asked for, and the retry policy when it refuses
/// to stream, driven by scripted cameras: USB bandwidth (ENOSPC) cannot be provoked with
/// vivid, whose STREAMON fault gives EINVAL (that one, and vivid's webcam rates, are
/// exercised against the real driver in VividTests).
@Suite(.timeLimit(.minutes(10))) struct FormatNegotiationTests {
    typealias Mode = CaptureDeviceInfo.Mode
    static let hd = Size(width: 1280, height: 720)
    static let fullHD = Size(width: 1920, height: 1080)

    static func format(_ fourcc: FourCC, _ modes: [(Int, Int, Double)]) -> CaptureDeviceInfo.Format {
        .init(fourcc: fourcc.description, description: "", emulated: false,
              modes: modes.map { Mode(width: $0.0, height: $0.1, framesPerSecond: [$0.2, $0.2 / 2]) })
    }

    /// A typical 1080p UVC webcam (its spec sheet): uncompressed is slow at large sizes.
    static let webcam = [
        format(.yuyv, [(640, 480, 30), (1280, 720, 10), (1920, 1080, 5)]),
        format(.mjpeg, [(640, 480, 30), (1280, 720, 30), (1920, 1080, 30)]),
    ]
    /// vivid's default "webcam" input: YUYV only, the ceiling falling with size.
    static let vivid = [
        format(.yuyv, [(320, 180, 60), (640, 360, 40), (640, 480, 25), (1280, 720, 12.5), (1920, 1080, 5), (3840, 2160, 2)]),
    ]

    static func plan(_ offered: [CaptureDeviceInfo.Format], _ size: Size, fps: Double = 30, given: Bool = false,
                     formats: [FourCC] = CameraSource.preference) -> FormatNegotiation {
        FormatNegotiation(device: "/dev/video9", formats: formats, offered: offered,
                          request: .init(size: size, framesPerSecond: fps, sizeGiven: given))
    }

    @Test(.timeLimit(.minutes(1)))
    func aWebcamsMJPEGAt30BeatsItsYUYVAt10() throws {
        let n = Self.plan(Self.webcam, Self.hd)
        let first = try #require(n.choices.first)
        #expect(first.description == "MJPG 1280x720")
        #expect(n.explanation(of: first, rate: 30)?.text == "YUYV reaches only 10 fps at 1280x720: MJPG at 30 fps")
        // Next, for a bus that refuses it, the largest size another format reaches 30 fps at.
        #expect(n.choices.prefix(2).map(\.description) == ["MJPG 1280x720", "YUYV 640x480"])
    }

    @Test(.timeLimit(.minutes(1)))
    func aWebcamsMJPEG1080pAt30BeatsItsYUYV1080pAt5() throws {
        let n = Self.plan(Self.webcam, Self.fullHD)
        #expect(n.choices.first?.description == "MJPG 1920x1080")
        #expect(n.explanation(of: n.choices[0], rate: 30)?.text == "YUYV reaches only 5 fps at 1920x1080: MJPG at 30 fps")
    }

    @Test(.timeLimit(.minutes(1)))
    func whenNoFormatReachesTheRateAtTheAskedSizeTheLargestSizeThatDoesIsTaken() throws {
        let n = Self.plan(Self.vivid, Self.fullHD)
        let first = try #require(n.choices.first)
        #expect(first.description == "YUYV 640x360")
        #expect(n.explanation(of: first, rate: 30)?.text == "YUYV 1920x1080 reaches only 5 fps: 640x360 at 30 fps")
        #expect(n.explanation(of: first, rate: 30)?.isWarning == false)
        // 4K is larger than asked; what does not reach 30 fps comes last, fastest first.
        #expect(n.choices.map(\.description).prefix(3) == ["YUYV 640x360", "YUYV 320x180", "YUYV 640x480"])
        #expect(!n.choices.contains { $0.size.width == 3840 })
    }

    @Test(.timeLimit(.minutes(1)))
    func aSizeTheUserGaveIsKeptWithAWarningWhenItIsSlow() throws {
        let slow = Self.plan(Self.vivid, Self.hd, given: true)
        #expect(slow.choices.first?.description == "YUYV 1280x720")
        let note = try #require(slow.explanation(of: slow.choices[0], rate: 12.5))
        #expect(note.isWarning)
        #expect(note.text == "warning: /dev/video9: YUYV 1280x720 reaches only 12.5 fps, under the 30 fps asked: "
                + "pictures will repeat; YUYV 640x360 reaches it (--capture 640x360)")
        // At a rate it reaches, nothing to say.
        let asked10 = Self.plan(Self.vivid, Self.hd, fps: 10, given: true)
        #expect(asked10.choices.first?.description == "YUYV 1280x720")
        #expect(asked10.explanation(of: asked10.choices[0], rate: 12.5) == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func aPixelFormatTheUserGaveIsKeptWithAWarningWhenItIsSlow() throws {
        let n = Self.plan(Self.webcam, Self.fullHD, formats: [.yuyv])
        // The largest YUYV size that reaches 30 fps: 640x480.
        #expect(n.choices.first?.description == "YUYV 640x480")
        let given = Self.plan(Self.webcam, Self.fullHD, given: true, formats: [.yuyv])
        #expect(given.choices.first?.description == "YUYV 1920x1080")
        #expect(given.explanation(of: given.choices[0], rate: 5)?.isWarning == true)
    }

    @Test(.timeLimit(.minutes(1)))
    func theRateTheDriverGrantsIsWhatCounts() throws {
        // The camera lists 30 fps, the driver grants 15 at S_PARM: said, as a warning.
        let n = Self.plan(Self.webcam, Self.hd)
        let note = try #require(n.explanation(of: n.choices[0], rate: 15))
        #expect(note.isWarning && note.text.contains("MJPG 1280x720 reaches only 15 fps"))
        // 29.97 reaches 30.
        #expect(n.explanation(of: n.choices[0], rate: 29.97)?.isWarning == false)
    }

    @Test(.timeLimit(.minutes(1)))
    func aCameraThatListsNoSizesIsAskedForTheRequestedOne() throws {
        let bare = [CaptureDeviceInfo.Format(fourcc: "YUYV", description: "", emulated: false, modes: [])]
        let n = Self.plan(bare, Self.hd)
        #expect(n.choices.map(\.description) == ["YUYV 1280x720"])
        #expect(n.explanation(of: n.choices[0], rate: 0) == nil)
    }

    // The retry policy.
    let formats: [FourCC] = [.yuyv, .nv12, .mjpeg]
    static let listed = [(640, 480, 30.0), (1920, 1080, 30), (1280, 720, 30), (320, 240, 30), (640, 480, 30)]
    static let fast = [format(.yuyv, listed), format(.nv12, listed), format(.mjpeg, listed)]

    /// Runs the negotiation against a driver that refuses what `refuse` says; returns what
    /// streamed (or the error), every attempt in order and the log.
    func negotiate(refuse: (FormatNegotiation.Choice) -> Int32?) -> (Result<String, V4L2Error>, [String], [String]) {
        let n = Self.plan(Self.fast, Self.hd, given: true, formats: formats)
        var attempts: [String] = [], log: [String] = []
        let result = Result { () throws(V4L2Error) -> String in
            try n.run(log: { log.append($0) }) { choice in
                attempts.append(choice.description)
                if let code = refuse(choice) {
                    return .refused(V4L2Error(device: "/dev/video9", operation: "VIDIOC_STREAMON", code: code))
                }
                return .started(choice.description)
            }.0
        }
        return (result, attempts, log)
    }

    @Test(.timeLimit(.minutes(1)))
    func noBandwidthForUncompressedFallsBackToMJPEGAtTheSameSizeAndSaysSo() throws {
        let (result, attempts, log) = negotiate { $0.fourcc == .mjpeg ? nil : ENOSPC }
        #expect(try result.get() == "MJPG 1280x720")
        #expect(attempts == ["YUYV 1280x720", "NV12 1280x720", "MJPG 1280x720"])
        #expect(log == [
            "/dev/video9: cannot stream YUYV 1280x720: not enough USB bandwidth (ENOSPC); trying NV12 1280x720",
            "/dev/video9: cannot stream NV12 1280x720: not enough USB bandwidth (ENOSPC); trying MJPG 1280x720",
        ])
    }

    @Test(.timeLimit(.minutes(1)))
    func noBandwidthAtAnyFormatTriesSmallerSizesLargestFirst() throws {
        let (result, attempts, log) = negotiate { $0.size.width >= 1280 ? ENOSPC : nil }
        #expect(try result.get() == "YUYV 640x480")
        #expect(attempts == ["YUYV 1280x720", "NV12 1280x720", "MJPG 1280x720", "YUYV 640x480"])
        #expect(log.last == "/dev/video9: cannot stream MJPG 1280x720: not enough USB bandwidth (ENOSPC); trying YUYV 640x480")
    }

    @Test(.timeLimit(.minutes(1)))
    func aBusyCameraIsNotRetried() {
        let (result, attempts, log) = negotiate { _ in EBUSY }
        #expect(throws: V4L2Error(device: "/dev/video9", operation: "VIDIOC_STREAMON", code: EBUSY)) { try result.get() }
        #expect(attempts == ["YUYV 1280x720"])
        #expect(log.isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func whenNothingStreamsTheLastRefusalIsTheError() {
        let (result, attempts, log) = negotiate { _ in ENOSPC }
        #expect(throws: V4L2Error(device: "/dev/video9", operation: "VIDIOC_STREAMON", code: ENOSPC)) { try result.get() }
        // 1280x720 then 640x480 and 320x240 (1920x1080 is larger than asked; 640x480 listed twice).
        #expect(attempts.count == 9)
        #expect(log.last?.hasSuffix("MJPG 320x240: not enough USB bandwidth (ENOSPC); nothing left to try") == true)
    }

    /// Latency is counted from a stamp that is never after its frame was received, and the
    /// driver's even spacing is kept while doing so.
    @Test(.timeLimit(.minutes(1)))
    func stampsAheadOfTheirDequeueAreMovedBackByTheMostTheyLead() {
        var c = StampCorrection()
        // Stamps every 1/30 s, 26 ms (then once 27 ms) ahead of dequeues that jitter.
        let period = 1.0 / 30
        var results: [Double] = [], notes: [String] = []
        for (i, jitter) in [0.0, 0.004, -0.001, 0.002, 0.0].enumerated() {
            let stamp = 10 + Double(i) * period
            let (s, note) = c.correct(stamp: stamp, dequeuedAt: stamp - 0.026 - (i == 2 ? 0.001 : 0) + jitter + 0.001)
            results.append(s)
            if let note { notes.append(note) }
        }
        #expect(notes == ["its buffer timestamps lie 25.0 ms after the buffers were received: they are moved back by the most they run ahead"])
        #expect(c.corrected == 5)
        // From the largest lead on, every stamp is moved by the same amount: spacing kept.
        let steps = zip(results.dropFirst(3), results.dropFirst(2)).map { $0 - $1 }
        #expect(steps.allSatisfy { abs($0 - period) < 1e-9 }, "\(steps)")
        // A stamp from another clock gives way to the dequeue time.
        var other = StampCorrection()
        #expect(other.correct(stamp: 98.5, dequeuedAt: 100).stamp == 100)
        // A stamp before its dequeue is kept as it is.
        var fine = StampCorrection()
        #expect(fine.correct(stamp: 99.95, dequeuedAt: 100) == (99.95, nil))
        #expect(fine.corrected == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aCameraDeliveringUnderTheAskedRateIsToldOnceAfterItsStartUp() {
        var watch = DeliveryRateWatch(asked: 30)
        var told: [Double] = []
        // 4 s at 30 fps, then 10 s at 12.5 fps.
        var t = 0.0
        while t < 4 { if let r = watch.delivered(at: t) { told.append(r) }; t += 1.0 / 30 }
        #expect(told.isEmpty)
        while t < 14 { if let r = watch.delivered(at: t) { told.append(r) }; t += 1.0 / 12.5 }
        #expect(told.count == 1)
        // Told within the first window that is slow enough, which may still hold some 30 fps.
        #expect((12...(30 * DeliveryRateWatch.tellBelow)).contains(told.first ?? 0), "\(told)")
        // A camera at its rate is never told.
        var steady = DeliveryRateWatch(asked: 30)
        var any = false
        for i in 0..<600 where steady.delivered(at: Double(i) / 29.97) != nil { any = true }
        #expect(!any)
    }
}
