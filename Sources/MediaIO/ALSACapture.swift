import CALSA
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Captures audio from an ALSA device (alsa-lib) as 48 kHz stereo 16-bit, in periods
/// stamped with the monotonic time of their first sample. Owns the PCM handle.
public final class ALSACapture {
    public let device: String
    private var pcm: OpaquePointer?
    public private(set) var channels: Int = 2
    public let sampleRate: Int = 48_000
    public let periodFrames = 480  // 10 ms

    public init(device: String) throws(MediaError) {
        self.device = device
        dc_snd_quiet()
        var handle: OpaquePointer?
        var rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, 0)
        guard rc >= 0, let handle else { throw .cannotOpen(path: device, reason: String(cString: snd_strerror(rc))) }
        pcm = handle
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        snd_pcm_hw_params_any(handle, hw)
        rc = snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        if rc >= 0 { rc = snd_pcm_hw_params_set_format(handle, hw, snd_pcm_format_t(rawValue: dc_snd_pcm_format_s16())) }
        if rc >= 0 && snd_pcm_hw_params_set_channels(handle, hw, 2) < 0 {
            // A mono microphone: captured as it is, doubled to stereo.
            rc = snd_pcm_hw_params_set_channels(handle, hw, 1)
            channels = 1
        }
        if rc >= 0 { rc = snd_pcm_hw_params_set_rate(handle, hw, UInt32(sampleRate), 0) }
        var period = snd_pcm_uframes_t(periodFrames)
        var dir: Int32 = 0
        if rc >= 0 { rc = snd_pcm_hw_params_set_period_size_near(handle, hw, &period, &dir) }
        var buffer = snd_pcm_uframes_t(periodFrames * 20)
        if rc >= 0 { rc = snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer) }
        if rc >= 0 { rc = snd_pcm_hw_params(handle, hw) }
        guard rc >= 0 else {
            snd_pcm_close(handle)
            pcm = nil
            throw .cannotOpen(path: device, reason: "cannot capture 48 kHz 16-bit: " + String(cString: snd_strerror(rc)))
        }
    }

    deinit { if let pcm { snd_pcm_close(pcm) } }

    public enum ReadResult {
        /// `frames` frames, the first captured at monotonic time `time`.
        case samples(frames: Int, time: Double)
        /// The device overran (we were too slow): samples were lost, the caller pads the gap.
        case overrun
        /// Nothing within the timeout (a stalled device, or a signal).
        case nothing
    }

    /// Reads up to one period into `samples` (interleaved, `channels` per frame), waiting at
    /// most `timeout` seconds for it, so that a stalled device never holds up a stop.
    /// Throws when the device has failed or gone (unplugged).
    public func read(into samples: UnsafeMutablePointer<Int16>, timeout: Double = 0.2) throws(MediaError) -> ReadResult {
        guard let pcm else { throw .cannotOpen(path: device, reason: "closed") }
        // Waiting on a capture stream that is prepared but not started waits forever (only
        // a blocking read starts it by itself): start it first, and again after an overrun.
        if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED {
            let rc = snd_pcm_start(pcm)
            if rc < 0 { throw .cannotOpen(path: device, reason: String(cString: snd_strerror(rc))) }
        }
        let ready = snd_pcm_wait(pcm, Int32(timeout * 1000))
        if ready == 0 || ready == -EINTR { return .nothing }
        if ready == -EPIPE || ready == -ESTRPIPE {
            snd_pcm_prepare(pcm)
            return .overrun
        }
        if ready < 0 { throw .cannotOpen(path: device, reason: String(cString: snd_strerror(ready))) }
        let n = snd_pcm_readi(pcm, samples, snd_pcm_uframes_t(periodFrames))
        if n == -Int(EPIPE) || n == -Int(ESTRPIPE) {
            snd_pcm_prepare(pcm)
            return .overrun
        }
        if n == -Int(EAGAIN) || n == -Int(EINTR) || n == 0 {
            usleep(2_000)  // ready by poll but nothing to read: do not spin
            return .nothing
        }
        if n < 0 { throw .cannotOpen(path: device, reason: String(cString: snd_strerror(Int32(n)))) }
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        var delay = snd_pcm_sframes_t(0)
        if snd_pcm_delay(pcm, &delay) < 0 { delay = 0 }
        // The last sample read was captured `delay` frames before now.
        let now = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        return .samples(frames: Int(n), time: now - Double(Int(delay) + Int(n)) / Double(sampleRate))
    }
}
