import Compositor
import Foundation
import MediaIO
@testable import Pipeline
@testable import Benchmarking
import Testing

/// No copy the data does not need: pictures composed where they lie, handed to the encoder
/// as they are, with no frame allocated once the pools are full.
@Suite(.timeLimit(.minutes(10))) struct ZeroCopyTests {
    static let canvas = PiPLayout.defaultCanvas

    static func gradient(_ size: Size, seed: Int) throws -> EncoderFrame {
        let f = try EncoderFrame(size: size)
        LatencyBench.fillGradient(f.view, seed: seed)
        return f
    }

    static func bytes(_ v: I420View) -> [UInt8] {
        var out: [UInt8] = []
        for p in v.planes { for y in 0..<p.height { out += UnsafeBufferPointer(start: p.row(y), count: p.width) } }
        return out
    }

    @Test func theDefaultInsetNeverShowsItsOwnCorner() {
        #expect(PiPLayout().insetCornerUnseenInInset)
        // A square inset on a square canvas shows all of it, its own corner included.
        let square = PiPLayout(canvas: Size(width: 640, height: 640), inset: Size(width: 200, height: 200))
        #expect(!square.insetCornerUnseenInInset)
    }

    @Test func composingInPlaceGivesTheSamePictureAsComposingIntoACanvas() throws {
        let compositor = try PiPCompositor(layout: PiPLayout(), threads: 2)
        let step = FrameStep(compositor: compositor)
        let back = try Self.gradient(Self.canvas, seed: 1), front = try Self.gradient(Size(width: 1280, height: 720), seed: 2)
        let backPicture = VideoPicture(decoded: back.frame, matrix: .bt709)
        let frontPicture = VideoPicture(decoded: front.frame, matrix: .bt709)
        // The reference: the same pictures composed into a canvas of their own.
        let reference = try EncoderFrame(size: Self.canvas)
        compositor.compose(main: backPicture.picture, inset: frontPicture.picture, into: reference.view)
        let canvas = try EncoderFrame(size: Self.canvas)
        let (frame, inPlace) = step.frame(back: backPicture, front: frontPicture, swapped: false, canvas: { canvas })
        #expect(inPlace)
        #expect(frame.frame === back.frame, "the back picture's own frame goes to the encoder")
        #expect(Self.bytes(frame.view) == Self.bytes(reference.view))
    }

    @Test func aPictureTheDecoderStillHoldsIsCopiedNotDrawnInto() throws {
        let step = FrameStep(compositor: try PiPCompositor(layout: PiPLayout(), threads: 1))
        let back = try Self.gradient(Self.canvas, seed: 3), front = try Self.gradient(Size(width: 640, height: 480), seed: 4)
        let held = EncoderFrame(referencing: back)  // as a decoder keeps a reference picture
        let before = Self.bytes(back.view)
        let canvas = try EncoderFrame(size: Self.canvas)
        let (frame, inPlace) = step.frame(back: VideoPicture(decoded: back.frame, matrix: .bt709),
                                              front: VideoPicture(decoded: front.frame, matrix: .bt601),
                                              swapped: false, canvas: { canvas })
        #expect(!inPlace && frame === canvas)
        #expect(Self.bytes(back.view) == before, "the shared picture is untouched")
        withExtendedLifetime(held) {}
    }

    @Test func aBT601PictureIsNotComposedInPlace() throws {
        // Re-encoding it where it lies would convert it twice when it is shown twice.
        let step = FrameStep(compositor: try PiPCompositor(layout: PiPLayout(), threads: 1))
        let back = try Self.gradient(Self.canvas, seed: 5), front = try Self.gradient(Size(width: 640, height: 480), seed: 6)
        let canvas = try EncoderFrame(size: Self.canvas)
        let (_, inPlace) = step.frame(back: VideoPicture(decoded: back.frame, matrix: .bt601),
                                          front: VideoPicture(decoded: front.frame, matrix: .bt601),
                                          swapped: false, canvas: { canvas })
        #expect(!inPlace)
    }

    /// A live recording's loop, without devices: each camera frame is filled, published and
    /// taken; the main one is composed in place and held by the "encoder" for a while, as
    /// the encode queue does. Frames the encoder holds are never refilled, a picture shown
    /// twice is re-encoded once, and once the pools have filled nothing is allocated.
    @Test func liveFramesComposedInPlaceAreNeverOverwrittenWhileQueued() throws {
        let step = FrameStep(compositor: try PiPCompositor(layout: PiPLayout(), threads: 1))
        let back = FrameExchange(), front = FrameExchange()
        let canvas = try EncoderFrame(size: Self.canvas)
        var queued: [(EncoderFrame, [UInt8])] = []
        var framesAfterWarmup = 0
        for n in 0..<60 {
            if n == 10 { framesAfterWarmup = back.frameCount + front.frameCount }
            let f = back.frameToFill(size: Self.canvas)
            #expect(!queued.contains { $0.0.frame === f.storage.frame } || f.storage.isExclusive)
            LatencyBench.fillGradient(f.buffer.view, seed: n)
            back.publish(f, timestamp: Double(n), matrix: .bt601)
            let i = front.frameToFill(size: Size(width: 640, height: 480))
            front.publish(i, timestamp: Double(n), matrix: .bt601)
            let driver = back.take()!.frame, other = front.take()!.frame
            let (picture, inPlace) = step.frame(back: driver, front: other, swapped: false, canvas: { canvas })
            #expect(inPlace)
            #expect(driver.matrix == .bt709, "retagged once re-encoded")
            queued.append((EncoderFrame(referencing: picture), Self.bytes(picture.view)))
            let (again, twice) = step.frame(back: driver, front: other, swapped: false, canvas: { canvas })
            #expect(!twice && again === canvas, "queued already: the second showing is composed into the pool frame")
            // The encoder is four frames behind; what it sends is what was composed.
            if queued.count > 4 {
                let (sent, composed) = queued.removeFirst()
                #expect(Self.bytes(sent.view) == composed)
            }
        }
        #expect(back.frameCount + front.frameCount == framesAfterWarmup, "no frame allocated in steady state")
        #expect(back.frameCount <= 3 + 5, "the three that circulate, and those the encoder holds")
    }
}
