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
    /// Reused for every read's timestamp (`snd_pcm_status`).
    private var status: OpaquePointer?
    /// Whether the device stamps its position with CLOCK_MONOTONIC (sw params accepted).
    private var kernelStamps = false
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
        // A second of buffer: a stalled machine (or a reader that starts late) loses nothing
        // before it is a second behind. Latency is not at stake: periods are timestamped.
        var buffer = snd_pcm_uframes_t(sampleRate)
        if rc >= 0 { rc = snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer) }
        if rc >= 0 { rc = snd_pcm_hw_params(handle, hw) }
        guard rc >= 0 else {
            snd_pcm_close(handle)
            pcm = nil
            throw .cannotOpen(path: device, reason: "cannot capture 48 kHz 16-bit: " + String(cString: snd_strerror(rc)))
        }
        kernelStamps = Self.enableMonotonicStamps(handle)
        if snd_pcm_status_malloc(&status) < 0 { status = nil }
    }

    deinit {
        if let status { snd_pcm_status_free(status) }
        if let pcm { snd_pcm_close(pcm) }
    }

    /// Asks the driver to stamp each position update with CLOCK_MONOTONIC. Plugins that do
    /// not pass stamps through refuse, and reads then fall back to the process's own clock.
    private static func enableMonotonicStamps(_ pcm: OpaquePointer) -> Bool {
        var sw: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&sw) >= 0, let sw else { return false }
        defer { snd_pcm_sw_params_free(sw) }
        return snd_pcm_sw_params_current(pcm, sw) >= 0
            && snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE) >= 0
            && snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC) >= 0
            && snd_pcm_sw_params(pcm, sw) >= 0
    }

    /// Starts capturing now (if not already running): sound from this instant on is kept
    /// in the device's buffer until read.
    public func start() throws(MediaError) {
        guard let pcm else { throw .cannotOpen(path: device, reason: "closed") }
        guard snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED else { return }
        let rc = snd_pcm_start(pcm)
        if rc < 0 { throw .cannotOpen(path: device, reason: String(cString: snd_strerror(rc))) }
    }

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
        try start()
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
        // The period's first sample came `waiting + n` frames before `time`.
        let (waiting, time) = position(pcm)
        return .samples(frames: Int(n), time: time - Double(waiting + Int(n)) / Double(sampleRate))
    }

    /// Frames captured but not yet read, and the monotonic time at which that was so. The
    /// kernel takes both in one step (`snd_pcm_status`), so a stall of this thread between
    /// them cannot skew the stamp; measured in the emulated VM, stamps taken here with
    /// clock_gettime were now and then 10-35 ms late. A device without kernel stamps gets a
    /// clock read on each side of `snd_pcm_delay`, taken again if the two are far apart.
    private func position(_ pcm: OpaquePointer) -> (waiting: Int, time: Double) {
        let clock = monotonicNow()
        if kernelStamps, let status, snd_pcm_status(pcm, status) >= 0 {
            var ts = snd_htimestamp_t()
            snd_pcm_status_get_htstamp(status, &ts)
            let stamp = timespecSeconds(ts)
            // A stamp from another clock, or none, is not used.
            if abs(stamp - clock) < 0.5 { return (Int(snd_pcm_status_get_avail(status)), stamp) }
        }
        var best: (waiting: Int, time: Double, spread: Double) = (0, clock, .infinity)
        for _ in 0..<3 {
            let before = monotonicNow()
            var delay = snd_pcm_sframes_t(0)
            if snd_pcm_delay(pcm, &delay) < 0 { delay = 0 }
            let after = monotonicNow()
            if after - before < best.spread { best = (Int(delay), (before + after) / 2, after - before) }
            if best.spread < 0.001 { break }
        }
        return (best.waiting, best.time)
    }
}
