import CFFmpeg

/// The audio format everything is written in: AAC-LC's input, 48 kHz stereo planar float.
public enum OutputAudio {
    public static let sampleRate: Int32 = 48_000
    public static let channels: Int32 = 2
    public static let sampleFormat = AV_SAMPLE_FMT_FLTP
}

/// A FIFO of output-format samples (owns an AVAudioFifo).
public final class SampleQueue {
    let fifo: OpaquePointer

    public init() {
        fifo = av_audio_fifo_alloc(OutputAudio.sampleFormat, OutputAudio.channels, 4096)
    }
    deinit { av_audio_fifo_free(fifo) }

    public var count: Int { Int(av_audio_fifo_size(fifo)) }

    func write(_ planes: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int32) {
        planes.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 2) {
            _ = av_audio_fifo_write(fifo, $0, count)
        }
    }

    public func appendSilence(_ n: Int) {
        guard n > 0 else { return }
        var zeros = [Float](repeating: 0, count: n)
        zeros.withUnsafeMutableBytes { raw in
            var planes: [UnsafeMutableRawPointer?] = [raw.baseAddress, raw.baseAddress]
            _ = av_audio_fifo_write(fifo, &planes, Int32(n))
        }
    }

    public func drop(_ n: Int) { av_audio_fifo_drain(fifo, Int32(min(n, count))) }

    /// Appends planar stereo samples.
    public func append(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count n: Int) {
        guard n > 0 else { return }
        var planes: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(mutating: left), UnsafeMutableRawPointer(mutating: right)]
        _ = av_audio_fifo_write(fifo, &planes, Int32(n))
    }

    /// Moves up to `n` samples from the front of this queue to the back of `other`.
    public func move(_ n: Int, to other: SampleQueue) {
        let n = min(n, count)
        guard n > 0 else { return }
        var left = [Float](repeating: 0, count: n), right = [Float](repeating: 0, count: n)
        left.withUnsafeMutableBytes { l in
            right.withUnsafeMutableBytes { r in
                var planes: [UnsafeMutableRawPointer?] = [l.baseAddress, r.baseAddress]
                _ = av_audio_fifo_read(fifo, &planes, Int32(n))
            }
        }
        other.append(left: left, right: right, count: n)
    }

    /// Moves up to `n` samples into `frame` (whose buffers must hold `n`).
    func read(into frame: Frame, count n: Int) -> Int {
        let got = frame.pointer.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 2) {
            av_audio_fifo_read(fifo, $0, Int32(n))
        }
        return Int(max(got, 0))
    }
}

/// Decodes a file's audio and resamples it to 48 kHz stereo, placed on the timeline of the
/// file's video: samples before the video's first frame are dropped, a late start is
/// padded with silence, so picture and sound keep the sync they had in the file.
public final class AudioReader {
    public let path: String
    private let input: InputContext
    private let decoder: StreamDecoder
    private let timeBase: Double
    private var resampler: OpaquePointer?
    private var resamplerKey: (Int32, Int32, Int32) = (0, 0, 0)
    private let frame = Frame()
    private var placed = false
    /// Seconds, on the stream's own clock, that count as time zero (the video's first frame).
    private let origin: Double
    public private(set) var finished = false

    /// nil when the file has no audio stream.
    public init?(path: String, videoOrigin: Double) throws(MediaError) {
        self.path = path
        input = try InputContext(path: path)
        guard let index = input.bestStream(AVMEDIA_TYPE_AUDIO) else { return nil }
        decoder = try StreamDecoder(input: input, streamIndex: index, threads: 1)
        timeBase = av_q2d(input.stream(index).pointee.time_base)
        origin = videoOrigin
    }

    deinit { swr_free(&resampler) }

    /// Decodes until `queue` holds at least `target` samples or the audio ends.
    public func fill(_ queue: SampleQueue, upTo target: Int) throws(MediaError) {
        while queue.count < target && !finished {
            guard try decoder.next(into: frame) else {
                finished = true
                flushResampler(into: queue)
                return
            }
            defer { av_frame_unref(frame.pointer) }
            try resample(frame.pointer, into: queue)
        }
    }

    private func resample(_ f: UnsafeMutablePointer<AVFrame>, into queue: SampleQueue) throws(MediaError) {
        let key = (f.pointee.sample_rate, f.pointee.format, f.pointee.ch_layout.nb_channels)
        if resampler == nil || key != resamplerKey {
            flushResampler(into: queue)
            swr_free(&resampler)
            var outLayout = AVChannelLayout()
            av_channel_layout_default(&outLayout, OutputAudio.channels)
            var inLayout = f.pointee.ch_layout
            if inLayout.order == AV_CHANNEL_ORDER_UNSPEC {
                av_channel_layout_default(&inLayout, inLayout.nb_channels)
            }
            let rc = swr_alloc_set_opts2(&resampler, &outLayout, OutputAudio.sampleFormat, OutputAudio.sampleRate,
                                         &inLayout, AVSampleFormat(rawValue: f.pointee.format), f.pointee.sample_rate,
                                         0, nil)
            guard rc >= 0, swr_init(resampler) >= 0 else {
                throw .undecodable(path: path, reason: "cannot resample its audio")
            }
            resamplerKey = key
        }
        if !placed {
            placed = true
            var pts = f.pointee.best_effort_timestamp
            if pts == AVCode.noPTS { pts = f.pointee.pts }
            if pts != AVCode.noPTS {
                let offset = Int(((Double(pts) * timeBase - origin) * Double(OutputAudio.sampleRate)).rounded())
                if offset > 0 { queue.appendSilence(offset) } else { pendingDrop = -offset }
            }
        }
        let capacity = swr_get_out_samples(resampler, f.pointee.nb_samples)
        convert(input: f.pointee.extended_data, count: f.pointee.nb_samples, capacity: capacity, into: queue)
    }

    private var pendingDrop = 0

    private func flushResampler(into queue: SampleQueue) {
        guard resampler != nil else { return }
        convert(input: nil, count: 0, capacity: swr_get_out_samples(resampler, 0), into: queue)
    }

    private func convert(input: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, count: Int32,
                         capacity: Int32, into queue: SampleQueue) {
        guard capacity > 0 else { return }
        var left = [Float](repeating: 0, count: Int(capacity))
        var right = [Float](repeating: 0, count: Int(capacity))
        left.withUnsafeMutableBytes { l in
            right.withUnsafeMutableBytes { r in
                var out: [UnsafeMutablePointer<UInt8>?] = [l.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                          r.baseAddress!.assumingMemoryBound(to: UInt8.self)]
                let inPtrs = input.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: UnsafePointer<UInt8>?.self) }
                let got = swr_convert(resampler, &out, capacity, inPtrs, count)
                guard got > 0 else { return }
                var n = got
                var start: Int32 = 0
                if pendingDrop > 0 {
                    let d = min(Int32(pendingDrop), n)
                    pendingDrop -= Int(d)
                    start = d
                    n -= d
                }
                guard n > 0 else { return }
                var planes: [UnsafeMutablePointer<UInt8>?] = [out[0]! + Int(start) * 4, out[1]! + Int(start) * 4]
                planes.withUnsafeMutableBufferPointer { queue.write($0.baseAddress!, count: n) }
            }
        }
    }
}
