import CFFmpeg

/// The audio format everything is written in: AAC-LC's input, 48 kHz stereo planar float.
public enum OutputAudio {
    public static let sampleRate: Int32 = 48_000
    public static let channels: Int32 = 2
    public static let sampleFormat = AV_SAMPLE_FMT_FLTP
}

/// A FIFO of output-format samples (owns an AVAudioFifo). Growing it can fail only for want
/// of memory; that is remembered (`failed`) and the encoder reading the queue reports it,
/// rather than samples silently going missing.
public final class SampleQueue {
    let fifo: OpaquePointer?
    public private(set) var failed = false

    public init() {
        fifo = av_audio_fifo_alloc(OutputAudio.sampleFormat, OutputAudio.channels, 4096)
        failed = fifo == nil
    }
    deinit { if let fifo { av_audio_fifo_free(fifo) } }

    public var count: Int { fifo.map { Int(av_audio_fifo_size($0)) } ?? 0 }

    private func write(_ planes: UnsafeMutablePointer<UnsafeMutableRawPointer?>, count n: Int) {
        guard let fifo, n > 0 else { return }
        if av_audio_fifo_write(fifo, planes, Int32(clamping: n)) != Int32(clamping: n) { failed = true }
    }

    public func appendSilence(_ n: Int) {
        guard n > 0 else { return }
        var zeros = [Float](repeating: 0, count: n)
        zeros.withUnsafeMutableBytes { raw in
            var planes: [UnsafeMutableRawPointer?] = [raw.baseAddress, raw.baseAddress]
            write(&planes, count: n)
        }
    }

    public func drop(_ n: Int) {
        guard let fifo, n > 0 else { return }
        av_audio_fifo_drain(fifo, Int32(min(n, count)))
    }

    /// Appends planar stereo samples.
    public func append(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count n: Int) {
        var planes: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(mutating: left), UnsafeMutableRawPointer(mutating: right)]
        write(&planes, count: n)
    }

    /// Moves up to `n` samples from the front of this queue to the back of `other`.
    public func move(_ n: Int, to other: SampleQueue) { _ = transfer(n, to: other, measuring: false) }

    /// As `move`, and returns the loudest of the samples moved (0-1): a level meter's reading
    /// for sound that was not measured as it came in.
    public func moveMeasuringPeak(_ n: Int, to other: SampleQueue) -> Float { transfer(n, to: other, measuring: true) }

    /// Takes up to `n` samples from the front, as two channels.
    package func takePlanar(_ n: Int) -> (left: [Float], right: [Float]) {
        let n = min(n, count)
        guard let fifo, n > 0 else { return ([], []) }
        var left = [Float](repeating: 0, count: n), right = [Float](repeating: 0, count: n)
        left.withUnsafeMutableBytes { l in
            right.withUnsafeMutableBytes { r in
                var planes: [UnsafeMutableRawPointer?] = [l.baseAddress, r.baseAddress]
                _ = av_audio_fifo_read(fifo, &planes, Int32(n))
            }
        }
        return (left, right)
    }

    private func transfer(_ n: Int, to other: SampleQueue, measuring: Bool) -> Float {
        if failed { other.failed = true }
        let (left, right) = takePlanar(n)
        let n = left.count
        guard n > 0 else { return 0 }
        other.append(left: left, right: right, count: n)
        guard measuring else { return 0 }
        var loudest: Float = 0
        for i in 0..<n { loudest = max(loudest, abs(left[i]), abs(right[i])) }
        return loudest
    }

    /// Moves up to `n` samples into `out` as interleaved 16-bit stereo (for playback);
    /// returns how many.
    public func readInterleaved16(into out: inout [Int16], count: Int) -> Int {
        let (left, right) = takePlanar(count)
        let n = left.count
        if out.count < 2 * n { out = [Int16](repeating: 0, count: 2 * n) }
        func sample(_ f: Float) -> Int16 { Int16(max(-32768, min(32767, (f * 32768).rounded()))) }
        for i in 0..<n {
            out[2 * i] = sample(left[i])
            out[2 * i + 1] = sample(right[i])
        }
        return n
    }

    /// Moves up to `n` samples into `frame` (whose buffers must hold `n`).
    func read(into frame: Frame, count n: Int) -> Int {
        guard let fifo else { return 0 }
        let got = frame.pointer.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 2) {
            av_audio_fifo_read(fifo, $0, Int32(n))
        }
        return Int(max(got, 0))
    }
}

/// Decodes a file's audio and resamples it to 48 kHz stereo, placed on the file's timeline
/// (`SourceTimeline`, shared with its video): samples before the video's first frame are
/// dropped, a late start or a hole is filled with silence, and timestamp resets or jumps
/// are followed as the video follows them, so picture and sound keep the sync they had in
/// the file whatever its start time or discontinuities.
public final class AudioReader {
    public let path: String
    private let input: InputContext
    private let decoder: StreamDecoder
    private let timeBase: Double
    private var resampler: ResamplerContext?
    private var resamplerKey: (Int32, Int32, Int32) = (0, 0, 0)
    private let frame = Frame()
    /// A decoded frame waiting for the silence before it to be written out first.
    private let held = Frame()
    private var holding = false
    private let timeline: SourceTimeline
    private var cursor = SourceTimeline.Cursor()
    /// Samples handed out so far (sound and silence).
    private var written = 0
    /// Silence still to come before the next decoded samples, or samples still to drop.
    private var pendingSilence = 0
    private var pendingDrop = 0
    private var placedAny = false
    public private(set) var finished = false
    /// A hole or overlap smaller than this (20 ms) is rounding, not a gap.
    static let slack = 960

    /// Whether `path` has a sound track to read (it is opened and closed again): asked before
    /// anything else is opened when its sound is the recording's.
    public static func hasSound(_ path: String) throws(MediaError) -> Bool {
        try InputContext(path: path).bestStream(AVMEDIA_TYPE_AUDIO) != nil
    }

    /// nil when the file has no audio stream. `timeline` is the file's video reader's.
    public init?(path: String, timeline: SourceTimeline) throws(MediaError) {
        self.path = path
        self.timeline = timeline
        input = try InputContext(path: path)
        guard let index = input.bestStream(AVMEDIA_TYPE_AUDIO) else { return nil }
        decoder = try StreamDecoder(input: input, streamIndex: index, threads: 1)
        timeBase = av_q2d(input.stream(index).pointee.time_base)
    }

    /// Decodes until `queue` holds at least `target` samples or the audio ends. Silence is
    /// written only as far as asked for, so a late start costs no memory.
    public func fill(_ queue: SampleQueue, upTo target: Int) throws(MediaError) {
        while queue.count < target {
            if pendingSilence > 0 {
                let n = min(pendingSilence, target - queue.count)
                queue.appendSilence(n)
                written += n
                pendingSilence -= n
                continue
            }
            if holding {
                holding = false
                defer { av_frame_unref(held.pointer) }
                try resample(held.pointer, into: queue)
                continue
            }
            if finished { return }
            guard try decoder.next(into: frame) else {
                finished = true
                flushResampler(into: queue)
                return
            }
            place(frame.pointer)
            if pendingSilence > 0 {
                av_frame_move_ref(held.pointer, frame.pointer)
                holding = true
                continue
            }
            defer { av_frame_unref(frame.pointer) }
            try resample(frame.pointer, into: queue)
        }
    }

    /// Compares where the frame's timestamp puts it with where the samples so far end, and
    /// schedules silence (a late start, a hole) or a drop (before time zero, an overlap).
    private func place(_ f: UnsafeMutablePointer<AVFrame>) {
        var pts = f.pointee.best_effort_timestamp
        if pts == AVCode.noPTS { pts = f.pointee.pts }
        guard pts != AVCode.noPTS, f.pointee.sample_rate > 0 else { return }
        let duration = Double(f.pointee.nb_samples) / Double(f.pointee.sample_rate)
        let t = timeline.place(Double(pts) * timeBase, duration: duration, cursor: &cursor)
        let rate = Double(OutputAudio.sampleRate)
        let target = t * rate
        guard target.isFinite, abs(target) < 1e15 else { return }
        let next = written + pendingSilence - pendingDrop
        let difference = Int(target.rounded()) - next
        guard !placedAny || abs(difference) > Self.slack else { return }
        placedAny = true
        let net = pendingSilence - pendingDrop + difference
        pendingSilence = max(net, 0)
        pendingDrop = max(-net, 0)
    }

    private func resample(_ f: UnsafeMutablePointer<AVFrame>, into queue: SampleQueue) throws(MediaError) {
        let key = (f.pointee.sample_rate, f.pointee.format, f.pointee.ch_layout.nb_channels)
        if resampler == nil || key != resamplerKey {
            flushResampler(into: queue)
            resampler = nil
            var outLayout = AVChannelLayout()
            av_channel_layout_default(&outLayout, OutputAudio.channels)
            var inLayout = f.pointee.ch_layout
            if inLayout.order == AV_CHANNEL_ORDER_UNSPEC {
                av_channel_layout_default(&inLayout, inLayout.nb_channels)
            }
            resampler = ResamplerContext(to: outLayout, OutputAudio.sampleFormat, OutputAudio.sampleRate,
                                         from: inLayout, AVSampleFormat(rawValue: f.pointee.format), f.pointee.sample_rate)
            guard resampler != nil else { throw .undecodableSound(path: path, reason: "cannot convert it to 48 kHz stereo") }
            resamplerKey = key
        }
        let capacity = swr_get_out_samples(resampler!.pointer, f.pointee.nb_samples)
        guard capacity >= 0 else { throw .undecodableSound(path: path, reason: "cannot convert it to 48 kHz stereo") }
        try convert(input: f.pointee.extended_data, count: f.pointee.nb_samples, capacity: capacity, into: queue)
    }

    private func flushResampler(into queue: SampleQueue) {
        guard let resampler else { return }
        try? convert(input: nil, count: 0, capacity: swr_get_out_samples(resampler.pointer, 0), into: queue)
    }

    private func convert(input: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, count: Int32,
                         capacity: Int32, into queue: SampleQueue) throws(MediaError) {
        guard capacity > 0 else { return }
        var left = [Float](repeating: 0, count: Int(capacity))
        var right = [Float](repeating: 0, count: Int(capacity))
        let got: Int32 = left.withUnsafeMutableBytes { l in
            right.withUnsafeMutableBytes { r in
                var out: [UnsafeMutablePointer<UInt8>?] = [l.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                          r.baseAddress!.assumingMemoryBound(to: UInt8.self)]
                let inPtrs = input.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: UnsafePointer<UInt8>?.self) }
                return swr_convert(resampler?.pointer, &out, capacity, inPtrs, count)
            }
        }
        if got < 0 { throw .undecodableSound(path: path, reason: "converting it failed: \(averrorText(got))") }
        var start = 0, n = Int(got)
        if pendingDrop > 0 {
            let d = min(pendingDrop, n)
            pendingDrop -= d
            start = d
            n -= d
        }
        guard n > 0 else { return }
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                queue.append(left: l.baseAddress! + start, right: r.baseAddress! + start, count: n)
            }
        }
        written += n
    }
}
