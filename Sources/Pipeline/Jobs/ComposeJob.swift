import Compositor
import Foundation
import MediaIO

public enum AudioChoice: String, Sendable, CaseIterable {
    case back, front, none
}

public struct ComposeOptions: Sendable {
    public var back: String
    public var front: String
    public var output: String
    public var swaps = SwapSchedule([])
    public var audio = AudioChoice.back
    /// Whether `audio` was asked for by name: a file without sound is then refused, as
    /// `record --audio back|front` refuses it, instead of a silent track.
    public var audioRequired = false
    /// The sound of this file instead (`relayout`: the take's, whose frames BACK, a camera's
    /// own file, follows one for one from the same start).
    public var soundOf: String?
    public var layout = PiPLayout()
    public var video = VideoEncoderSettings()
    public var overwrite = false
    public var metadata = MovWriter.Metadata()
    /// Threads each input's decoder uses, beside the thread that decodes it ahead (0:
    /// libavcodec's choice). Measured with Benchmarks/compare-ffmpeg.sh on 2 cores: one each
    /// is as fast as libavcodec's three and holds 24 MiB less (frame threads keep frames).
    public var decoderThreads = 1

    public init(back: String, front: String, output: String) {
        self.back = back
        self.front = front
        self.output = output
    }
}

public struct ComposeSummary: Sendable {
    public var frames: Int
    public var duration: Double
    public var audioSamples: Int64
    public var audioSource: String
    public var seconds: Double
    /// Frames whose main picture took the inset where the decoder left it, with no copy.
    public var composedInPlace: Int
    /// What a user should know although the file was written, one line each.
    public var warnings: [String]
}

/// Composes two video files into one picture-in-picture movie.
///
/// BACK sets the clock: the output has as many 30 fps frames as BACK lasts, each showing the
/// newest BACK and FRONT pictures due at its time (FRONT holds its last picture once it
/// ends). Audio follows the picture sample for sample, so both tracks end together.
public final class ComposeJob {
    public let options: ComposeOptions
    /// Polled between frames; true abandons the job (and its temporary file).
    public var isCancelled: () -> Bool = { false }
    /// Told after each frame: frames written, and how many BACK's declared duration makes
    /// (nil when its container does not say).
    public var progress: (_ frames: Int, _ expected: Int?) -> Void = { _, _ in }
    /// Told once everything that can fail on bad input has opened, before the first frame.
    public var onStart: () -> Void = {}
    /// Shown every composed picture (the preview window).
    public var preview: PictureObserver?

    public init(options: ComposeOptions) {
        self.options = options
    }

    public func run() throws(MediaError) -> ComposeSummary {
        let started = Date()
        let o = options
        // Open everything that can fail on bad input before creating any file.
        let back = try VideoReader(path: o.back, decoderThreads: o.decoderThreads)
        let front = try VideoReader(path: o.front, decoderThreads: o.decoderThreads)
        let compositor: PiPCompositor
        do { compositor = try PiPCompositor(layout: o.layout, threads: 2) } catch {
            throw .encoderFailed(name: "compositor", reason: error.description)
        }
        var audioSource: AudioReader? = nil
        var audioName = "silence"
        switch o.audio {
        case .back:
            audioSource = try AudioReader(path: o.back, timeline: back.timeline)
        case .front:
            audioSource = try AudioReader(path: o.front, timeline: front.timeline)
        case .none:
            break
        }
        if audioSource != nil { audioName = o.audio.rawValue }
        if audioSource == nil && o.audioRequired && o.audio != .none {
            throw .noSound(path: o.audio == .back ? o.back : o.front, asked: o.audio.rawValue)
        }
        if let take = o.soundOf {
            // BACK's timeline: a camera's own file starts with the take, frame for frame, and
            // its timeline is learnt as it is decoded (the take's own picture is never read).
            audioSource = try AudioReader(path: take, timeline: back.timeline)
            audioName = "the take's"
        }

        let sink = try FaststartFile(path: o.output, overwrite: o.overwrite, video: o.video, metadata: o.metadata)
        let canvas = try EncoderFrame(size: o.video.size)

        let clock = FrameClock(fps: Int(o.video.framesPerSecond))
        let samplesPerFrame = Int(OutputAudio.sampleRate) / clock.fps
        let queue = SampleQueue()
        let backPictures = DecodeAhead(back), frontPictures = DecodeAhead(front)
        defer { backPictures.stop(); frontPictures.stop() }
        var backNow = try backPictures.next()!   // next() throws when a stream has no frame at all
        var backNext = try backPictures.next()
        var frontNow = try frontPictures.next()!
        var frontNext = try frontPictures.next()
        var total: Int? = nil
        let expected = back.declaredDuration.map { clock.frameCount(forDuration: $0) }
        var n = 0, composedInPlace = 0
        let step = FrameStep(compositor: compositor)
        var swap = SwapPolicy()
        onStart()
        while true {
            if isCancelled() { throw .interrupted }
            while let b = backNext, clock.isDue(b.time, byFrame: n) {
                backNow = b
                backNext = try backPictures.next()
            }
            if backNext == nil && total == nil {
                total = clock.frameCount(forDuration: backNow.time + backNow.duration)
            }
            if let total, n >= total { break }
            while let f = frontNext, clock.isDue(f.time, byFrame: n) {
                frontNow = f
                frontNext = try frontPictures.next()
            }

            let swapped = swap.frame(asked: o.swaps.isSwapped(frame: n, fps: clock.fps),
                                     newMainReduction: (swap.showing ? backNow : frontNow).reduction,
                                     newMainIsInsetOnly: (swap.showing ? backNow : frontNow).isInsetOnly)
            let (frame, inPlace) = try step.frame(back: backNow, front: frontNow, swapped: swapped,
                                                  canvas: { () throws(MediaError) in
                                                      try canvas.prepareForWriting()
                                                      return canvas
                                                  })
            if inPlace { composedInPlace += 1 }
            preview?.offer(frame.view)
            try sink.write(frame: frame, index: Int64(n))

            let audioTarget = (n + 1) * samplesPerFrame
            try pullAudio(from: audioSource, into: queue, until: audioTarget - Int(sink.soundSamplesWritten))
            try sink.write(sound: queue, final: false)
            n += 1
            progress(n, total ?? expected)
        }
        // Audio ends exactly where the picture does.
        let audioTotal = n * samplesPerFrame
        let audioMissing = audioTotal - Int(sink.soundSamplesWritten)
        try pullAudio(from: audioSource, into: queue, until: audioMissing)
        queue.drop(queue.count - audioMissing)
        try sink.write(sound: queue, final: true)
        try sink.finishWriting()
        return ComposeSummary(frames: n, duration: clock.time(ofFrame: n), audioSamples: sink.soundSamplesWritten,
                              audioSource: audioName, seconds: Date().timeIntervalSince(started),
                              composedInPlace: composedInPlace,
                              warnings: [back, front].filter { $0.damagedPackets > 0 }.map {
                                  "\($0.path): \($0.damagedPackets) damaged video packet(s) skipped"
                              } + Self.swapsNeverShown(o.swaps, frames: n, fps: clock.fps, back: o.back))
    }

    /// Swap times at or past the output's last frame: they never show, which a user who typed
    /// one should hear of.
    static func swapsNeverShown(_ swaps: SwapSchedule, frames: Int, fps: Int, back: String) -> [String] {
        let end = Double(frames) / Double(fps)
        return swaps.times.filter { ($0 * Double(fps)).rounded(.up) >= Double(frames) }.map {
            String(format: "--swap-at %g is at or past the end of %@ (%.2f s): it never shows", $0, back, end)
        }
    }

    /// Makes `queue` hold `count` samples: decoded audio while there is some, silence after.
    private func pullAudio(from source: AudioReader?, into queue: SampleQueue, until count: Int) throws(MediaError) {
        guard count > queue.count else { return }
        try source?.fill(queue, upTo: count)
        if queue.count < count { queue.appendSilence(count - queue.count) }
    }
}
