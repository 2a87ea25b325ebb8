import CFFmpeg

/// Turns what a microphone gives, in whatever sample format, rate and channel count it
/// offers, into 48 kHz 16-bit (mono stays mono, more than two channels are mixed down to
/// stereo), with libswresample. Owns its SwrContext.
final class CaptureConverter {
    let inputRate: Int
    let outputChannels: Int
    private let swr: ResamplerContext

    init(device: String, format: AVSampleFormat, rate: Int, channels: Int) throws(MediaError) {
        inputRate = rate
        outputChannels = min(channels, 2)
        var inLayout = AVChannelLayout(), outLayout = AVChannelLayout()
        av_channel_layout_default(&inLayout, Int32(channels))
        av_channel_layout_default(&outLayout, Int32(outputChannels))
        guard let swr = ResamplerContext(to: outLayout, AV_SAMPLE_FMT_S16, OutputAudio.sampleRate,
                                         from: inLayout, format, Int32(rate)) else {
            throw .cannotOpen(path: device, reason: "cannot convert its \(rate) Hz \(channels)-channel sound")
        }
        self.swr = swr
    }

    /// Output frames still inside the resampler: what comes out next started this long ago.
    var delayFrames: Int { Int(swr_get_delay(swr.pointer, Int64(OutputAudio.sampleRate))) }

    /// Room for the output of `frames` input frames.
    func capacity(forInput frames: Int) -> Int { frames * Int(OutputAudio.sampleRate) / inputRate + 64 }

    /// Converts `frames` interleaved input frames into `out`; returns the frames written.
    func convert(_ input: UnsafeRawPointer, frames: Int, into out: UnsafeMutablePointer<Int16>, capacity: Int) -> Int {
        var outPointer: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(out).assumingMemoryBound(to: UInt8.self)
        var inPointer: UnsafePointer<UInt8>? = input.assumingMemoryBound(to: UInt8.self)
        let n = swr_convert(swr.pointer, &outPointer, Int32(capacity), &inPointer, Int32(frames))
        return max(0, Int(n))
    }
}
