import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// compose is the record engine with file inputs: what `ComposeJob` writes (x265, decoded by
/// ffmpeg) shows, frame by frame, the same pictures as the engine's loop run on the same
/// files in virtual time into a sink that only reads them. Every picture of the inputs is a
/// flat grey that names it: back picture n is luma 20 + 4 (n mod 25), front 130 + 4 (n mod 25).
@Suite(.timeLimit(.minutes(2))) struct ComposeEngineTests {
    static let layout = PiPLayout(canvas: Size(width: 320, height: 180), inset: Size(width: 40, height: 50), margin: 8)

    /// A clip of flat numbered pictures: `fps` frames a second for `seconds`, stamped by
    /// `pts` (an expression of N) when given.
    static func numbered(_ path: String, back: Bool, seconds: Double, fps: Int = 30, pts: String? = nil) throws {
        let base = back ? 20 : 130
        var filter = "geq=lum='\(base)+4*mod(N,25)':cb=128:cr=128"
        // A fine time base first: in the source's own (1/fps) a few milliseconds round away.
        if let pts { filter += ",settb=1/90000,setpts='(\(pts))/TB'" }
        try makeClip(path, ["-f", "lavfi", "-i", "color=black:s=192x108:r=\(fps):d=\(seconds)", "-vf", filter,
                            "-fps_mode", "passthrough", "-enc_time_base", "1/90000", "-video_track_timescale", "90000",
                            "-c:v", "libx264", "-qp", "0",
                            "-pix_fmt", "yuv420p"])
    }

    /// "b7" for back picture 7 (mod 25), "f3" for front's 3, from a luma ±1 (the encoder's error).
    static func name(_ luma: Int) -> String {
        for (base, tag) in [(20, "b"), (130, "f")] where (base - 1...base + 97).contains(luma) {
            let k = Int((Double(luma - base) / 4).rounded())
            if abs(base + 4 * k - luma) <= 1 && (0..<25).contains(k) { return "\(tag)\(k)" }
        }
        return "?\(luma)"
    }

    /// The sample points: the main picture and the inset (the right half side by side).
    static func points(_ layout: PiPLayout) -> (main: (Int, Int), inset: (Int, Int)) {
        let w = layout.canvas.width, h = layout.canvas.height
        if layout.arrangement == .sideBySide { return ((w / 4, h / 2), (w * 3 / 4, h / 2)) }
        let r = layout.insetRect
        return ((w / 2, h / 2), (r.x + r.width / 2, r.y + r.height / 2))
    }

    /// The engine's loop over the files in virtual time: each slot's pictures, by name.
    static func engine(_ back: String, _ front: String, layout: PiPLayout, swaps: [Double]) throws -> [String] {
        let clock = VirtualClock()
        let sink = SlotSink(clock: clock, layout: layout, secondsPerFrame: [])
        let queue = try EncodeQueue(sink: sink, canvas: layout.canvas, depth: 4, fps: 30, clock: clock)
        let pictures = try FilePictures(back: VideoReader(path: back), front: VideoReader(path: front), clock: FrameClock(fps: 30), depth: 2)
        defer { pictures.stop() }
        let input = FileInput(pictures: pictures, swaps: SwapSchedule(swaps), controls: ControlInbox(), expected: nil,
                              soundFailure: { nil }, progress: { _, _ in })
        let settings = RecordLoop.Settings(fps: 30, duration: nil, swapped: false, maxEncoderLag: 1, keepsEveryFrame: false,
                                           controls: ControlInbox(), clock: clock)
        let loop = RecordLoop(settings, input: input, queue: queue, outputs: [],
                              placement: InsetPlacement(compositor: try PiPCompositor(layout: layout, threads: 1), threads: 1)) { _ in }
        loop.run()
        try queue.finish(lastSlot: loop.timeline.clock.next - 1)
        return sink.written.map { "\(VirtualTake.name($0.main)) \($0.inset.map(VirtualTake.name) ?? "-")" }
    }

    /// What `ComposeJob` wrote, decoded by ffmpeg: each frame's pictures, by name.
    static func composed(_ back: String, _ front: String, layout: PiPLayout, swaps: [Double], in dir: TempDir) throws -> [String] {
        var options = ComposeOptions(back: back, front: front, output: dir.path("out.mov"))
        options.layout = layout
        options.video.size = layout.canvas
        options.swaps = SwapSchedule(swaps)
        options.audio = .none
        // Close enough to the pictures that no flat grey is taken for its neighbour (at the
        // default 28 an inset's grey came out 2 off).
        options.video.crf = 8
        _ = try ComposeJob(options: options).run()
        // As the file's own YUV (gray would stretch its video range to full range).
        let yuv = dir.path("out.yuv")
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", dir.path("out.mov"), "-f", "rawvideo",
                                               "-pix_fmt", "yuv420p", "-y", yuv])
        try #require(r.status == 0, "\(r.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: yuv)))
        let w = layout.canvas.width, luma = w * layout.canvas.height, size = luma * 3 / 2
        let (main, inset) = points(layout)
        return stride(from: 0, to: bytes.count - size + 1, by: size).map { at in
            let m = Int(bytes[at + main.1 * w + main.0]), i = Int(bytes[at + inset.1 * w + inset.0])
            return "\(name(m)) " + (abs(m - i) <= 1 ? "-" : name(i))
        }
    }

    /// The engine's names are of pictures numbered mod 50 in steps of 2 (`VirtualTake`):
    /// these inputs step by 4 from the same bases, so b(2k) there is bk here.
    static func renamed(_ engine: [String]) -> [String] {
        engine.map { slot in
            slot.split(separator: " ").map { part -> String in
                guard let k = Int(part.dropFirst()), part.first == "b" || part.first == "f" else { return String(part) }
                return "\(part.first!)\(k / 2)"
            }.joined(separator: " ")
        }
    }

    static func expectSamePictures(back: String, front: String, layout: PiPLayout = layout, swaps: [Double] = [],
                                   in dir: TempDir) throws -> [String] {
        try Env.requireFFmpegTools()
        let engine = renamed(try Self.engine(back, front, layout: layout, swaps: swaps))
        let composed = try Self.composed(back, front, layout: layout, swaps: swaps, in: dir)
        #expect(composed.count == engine.count)
        #expect(composed == engine)
        return engine
    }

    @Test func pictureInPicture() throws {
        let dir = try TempDir()
        try Self.numbered(dir.path("b.mp4"), back: true, seconds: 2)
        try Self.numbered(dir.path("f.mp4"), back: false, seconds: 2)
        let slots = try Self.expectSamePictures(back: dir.path("b.mp4"), front: dir.path("f.mp4"), in: dir)
        #expect(slots == (0..<60).map { "b\($0 % 25) f\($0 % 25)" })
    }

    @Test func sideBySide() throws {
        let dir = try TempDir()
        try Self.numbered(dir.path("b.mp4"), back: true, seconds: 1)
        try Self.numbered(dir.path("f.mp4"), back: false, seconds: 1, fps: 15)
        var layout = Self.layout
        layout.arrangement = .sideBySide
        let slots = try Self.expectSamePictures(back: dir.path("b.mp4"), front: dir.path("f.mp4"), layout: layout, in: dir)
        #expect(slots == (0..<30).map { "b\($0 % 25) f\($0 / 2)" })
    }

    @Test func swapsAtTheScheduledFrames() throws {
        let dir = try TempDir()
        try Self.numbered(dir.path("b.mp4"), back: true, seconds: 2)
        try Self.numbered(dir.path("f.mp4"), back: false, seconds: 2)
        let slots = try Self.expectSamePictures(back: dir.path("b.mp4"), front: dir.path("f.mp4"), swaps: [0.5, 1.2], in: dir)
        #expect(slots[14] == "b14 f14" && slots[15] == "f15 b15" && slots[35] == "f10 b10" && slots[36] == "b11 f11")
    }

    @Test func aShortFrontHoldsItsLastPicture() throws {
        let dir = try TempDir()
        try Self.numbered(dir.path("b.mp4"), back: true, seconds: 2)
        try Self.numbered(dir.path("f.mp4"), back: false, seconds: 1)
        let slots = try Self.expectSamePictures(back: dir.path("b.mp4"), front: dir.path("f.mp4"), in: dir)
        #expect(slots.count == 60 && slots[29] == "b4 f4" && slots[59] == "b9 f4")
    }

    @Test func aVariableFrameRateBackMeetsTheNewestFrontByItsTimes() throws {
        let dir = try TempDir()
        // 24 pictures a second, every other one 12 ms late.
        try Self.numbered(dir.path("b.mp4"), back: true, seconds: 2, fps: 24, pts: "N/24+0.012*mod(N,2)")
        try Self.numbered(dir.path("f.mp4"), back: false, seconds: 2)
        let slots = try Self.expectSamePictures(back: dir.path("b.mp4"), front: dir.path("f.mp4"), in: dir)
        // Slot k shows the newest back picture stamped by k/30.
        let times = (0..<48).map { Double($0) / 24 + 0.012 * Double($0 % 2) }
        let backs = (0..<slots.count).map { k in times.lastIndex { $0 <= Double(k) / 30 + 5e-7 }! }
        #expect(slots.map { $0.split(separator: " ")[0] } == backs.map { "b\($0 % 25)"[...] })
    }
}
