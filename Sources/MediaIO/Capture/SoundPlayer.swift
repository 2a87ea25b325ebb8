import CALSA
import Foundation

/// Plays 48 kHz stereo through an ALSA device (the review of a take): ALSA converts to what
/// the device takes. How much has been heard (`played`) is the clock the pictures follow.
public final class SoundPlayer {
    public let device: String
    private let pcm: OpaquePointer
    /// Frames handed to ALSA since the last `restart`.
    private var written = 0
    private var interleaved: [Int16] = []

    /// ALSA's buffer: the pictures lead the sound by at most this much, and a pause or a
    /// restart drops at most this much.
    public static let bufferSeconds = 0.3

    public init(device: String = "default") throws(MediaError) {
        self.device = device
        dc_snd_quiet()
        var handle: OpaquePointer?
        var rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard rc >= 0, let handle else {
            throw .cannotOpen(path: device, reason: String(cString: snd_strerror(rc)))
        }
        rc = snd_pcm_set_params(handle, snd_pcm_format_t(rawValue: dc_snd_pcm_format_s16()), SND_PCM_ACCESS_RW_INTERLEAVED,
                                2, UInt32(OutputAudio.sampleRate), 1, UInt32(Self.bufferSeconds * 1e6))
        guard rc >= 0 else {
            snd_pcm_close(handle)
            throw .cannotOpen(path: device, reason: "cannot play 48 kHz stereo: " + String(cString: snd_strerror(rc)))
        }
        pcm = handle
    }

    deinit {
        snd_pcm_drop(pcm)
        snd_pcm_close(pcm)
    }

    /// Frames heard since the last `restart`: those written less those still queued.
    public var played: Int {
        var delay = snd_pcm_sframes_t(0)
        guard snd_pcm_delay(pcm, &delay) >= 0 else { return written }
        return max(0, written - Int(delay))
    }

    /// Frames written since the last `restart`.
    public var queuedUpTo: Int { written }

    /// Plays `count` samples from the front of `queue` (fewer if it holds fewer), waiting
    /// while ALSA's buffer is full. An underrun (the pictures held it up) is recovered from.
    public func play(from queue: SampleQueue, count: Int) throws(MediaError) {
        let n = queue.readInterleaved16(into: &interleaved, count: count)
        var done = 0
        while done < n {
            let rc = interleaved.withUnsafeBufferPointer { b in
                snd_pcm_writei(pcm, b.baseAddress! + 2 * done, snd_pcm_uframes_t(n - done))
            }
            if rc < 0 {
                guard snd_pcm_recover(pcm, Int32(rc), 1) >= 0 else {
                    throw .cannotWrite(path: device, reason: String(cString: snd_strerror(Int32(rc))))
                }
                continue
            }
            done += Int(rc)
        }
        written += n
    }

    /// Drops what is queued and starts again from nothing (a new pass over the take).
    public func restart() {
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
        written = 0
    }

    /// Holds the sound where it is, or goes on; a device that cannot pause drops what is
    /// queued (a fraction of a second) and is written to again from where the picture is.
    public func hold(_ on: Bool) {
        if snd_pcm_pause(pcm, on ? 1 : 0) < 0 && on {
            let heard = played
            snd_pcm_drop(pcm)
            snd_pcm_prepare(pcm)
            written = heard
        }
    }
}
