import CALSA
import CFFmpeg
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Captures audio from an ALSA device (alsa-lib) as 48 kHz 16-bit, mono or stereo, in
/// periods stamped with the monotonic time of their first sample. A device that cannot give
/// that (a webcam microphone at 16 or 44.1 kHz, in S32 or float) is captured as it can and
/// converted (`CaptureConverter`). Owns the PCM handle.
public final class ALSACapture {
    public let device: String
    private var pcm: OpaquePointer?
    /// Reused for every read's timestamp (`snd_pcm_status`).
    private var status: OpaquePointer?
    /// Whether the device stamps its position with CLOCK_MONOTONIC (sw params accepted).
    private var kernelStamps = false
    /// Whether a sound card is behind the device. Not behind ALSA's `default` on a desktop:
    /// that is the sound server (PipeWire, PulseAudio), whose stream has no card number.
    public private(set) var hasCard = true
    /// Channels of what `read` hands out: 1 or 2.
    public private(set) var channels: Int = 2
    public let sampleRate: Int = 48_000
    /// What the device itself captures.
    public private(set) var deviceFormat = DeviceFormat(name: "S16_LE", rate: 48_000, channels: 2)
    private var converter: CaptureConverter?
    /// Whether what the device gives is converted (it has no 48 kHz 16-bit mono or stereo).
    public var converts: Bool { converter != nil }
    /// Where a converted device's samples land before conversion.
    private var deviceBuffer: UnsafeMutableRawPointer?
    /// Device frames per read: 10 ms.
    private var devicePeriod = 480
    /// The most frames one `read` hands out.
    public private(set) var periodFrames = 480

    public struct DeviceFormat: Sendable, CustomStringConvertible {
        public var name: String
        public var rate: Int
        public var channels: Int
        public var description: String { "\(name) \(channels == 1 ? "mono" : "\(channels) channels") \(rate) Hz" }
    }

    /// Sample formats taken, best first, with what libswresample calls them.
    private static let formats: [(alsa: snd_pcm_format_t, av: AVSampleFormat, bytes: Int, name: String)] = [
        (snd_pcm_format_t(rawValue: dc_snd_pcm_format_s16()), AV_SAMPLE_FMT_S16, 2, "S16_LE"),
        (SND_PCM_FORMAT_S32_LE, AV_SAMPLE_FMT_S32, 4, "S32_LE"),
        (SND_PCM_FORMAT_FLOAT_LE, AV_SAMPLE_FMT_FLT, 4, "FLOAT_LE"),
        (SND_PCM_FORMAT_U8, AV_SAMPLE_FMT_U8, 1, "U8"),
    ]

    public init(device: String) throws(MediaError) {
        self.device = device
        guard ALSADevices.isCaptureName(device) else {
            throw .cannotOpen(path: device, reason: "not the name of a capture device (`dualcam devices` lists them)")
        }
        dc_snd_quiet()
        var handle: OpaquePointer?
        // A blocking open of a device another program holds waits until it lets go: opened
        // without waiting, a busy one is said at once, with who holds it.
        let rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard rc >= 0, let handle else {
            if rc == -EBUSY { throw .cannotOpen(path: device, reason: Self.busyReason(device)) }
            // ALSA says "No such file or directory" for a name it does not know, even a file's.
            if rc == -ENOENT || rc == -EINVAL {
                throw .cannotOpen(path: device, reason: "not an ALSA capture device (`dualcam devices` lists them; --audio back "
                                  + "or front takes the sound of a file given as --back or --front)")
            }
            throw .cannotOpen(path: device, reason: ALSADevices.openFailure(rc))
        }
        // It stays non-blocking: reads wait in snd_pcm_wait, with a timeout, and a read then
        // takes what is there. A blocking read waits for a whole period however long the
        // device takes, which can hold up a stop for ever (a stalled or vanished device).
        pcm = handle
        let format: (alsa: snd_pcm_format_t, av: AVSampleFormat, bytes: Int, name: String)
        do { format = try configure(handle) } catch {
            snd_pcm_close(handle)
            pcm = nil
            throw error
        }
        if format.av != AV_SAMPLE_FMT_S16 || deviceFormat.rate != sampleRate || deviceFormat.channels > 2 {
            let c = try CaptureConverter(device: device, format: format.av, rate: deviceFormat.rate, channels: deviceFormat.channels)
            channels = c.outputChannels
            periodFrames = c.capacity(forInput: devicePeriod)
            deviceBuffer = .allocate(byteCount: devicePeriod * deviceFormat.channels * format.bytes, alignment: 16)
            converter = c
        } else {
            channels = deviceFormat.channels
            periodFrames = devicePeriod
        }
        kernelStamps = Self.enableMonotonicStamps(handle)
        if snd_pcm_status_malloc(&status) < 0 { status = nil }
        hasCard = Self.card(of: handle) != nil
    }

    /// The card number of an open PCM, nil for a software device (a plugin, a sound server).
    static func card(of handle: OpaquePointer) -> Int32? {
        var info: OpaquePointer?
        guard snd_pcm_info_malloc(&info) >= 0 else { return nil }
        defer { snd_pcm_info_free(info) }
        guard snd_pcm_info(handle, info) >= 0 else { return nil }
        let card = snd_pcm_info_get_card(info)
        return card >= 0 ? card : nil
    }

    /// "busy: pipewire (pid 812) has it open; ...": a desktop's sound server holds its cards
    /// and shares them through ALSA's `default`.
    static func busyReason(_ device: String) -> String {
        let holder = ALSADevices.holder(of: device).map { "\($0) has it open" } ?? "another program has it open"
        return "busy: \(holder); --audio default records through the sound server, which shares the device"
    }

    /// Sets the hardware parameters: 48 kHz 16-bit stereo (or mono) when the device has
    /// them, else the best format, channel count and rate nearest 48 kHz it has.
    private func configure(_ handle: OpaquePointer) throws(MediaError) -> (alsa: snd_pcm_format_t, av: AVSampleFormat, bytes: Int, name: String) {
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        snd_pcm_hw_params_any(handle, hw)
        func fail(_ what: String, _ rc: Int32) -> MediaError {
            .cannotOpen(path: device, reason: "cannot capture (\(what)): " + String(cString: snd_strerror(rc)))
        }
        var rc = snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        guard rc >= 0 else { throw fail("interleaved access", rc) }
        guard let format = Self.formats.first(where: { snd_pcm_hw_params_test_format(handle, hw, $0.alsa) == 0 }) else {
            throw .cannotOpen(path: device, reason: "cannot capture: none of the sample formats S16, S32, FLOAT, U8")
        }
        rc = snd_pcm_hw_params_set_format(handle, hw, format.alsa)
        guard rc >= 0 else { throw fail(format.name, rc) }
        var count: UInt32 = 2
        if snd_pcm_hw_params_test_channels(handle, hw, 2) != 0 {
            count = 1
            if snd_pcm_hw_params_test_channels(handle, hw, 1) != 0 { snd_pcm_hw_params_get_channels_min(hw, &count) }
        }
        rc = snd_pcm_hw_params_set_channels(handle, hw, count)
        guard rc >= 0 else { throw fail("\(count) channels", rc) }
        var rate = UInt32(sampleRate)
        var dir: Int32 = 0
        rc = snd_pcm_hw_params_set_rate_near(handle, hw, &rate, &dir)
        guard rc >= 0, rate > 0 else { throw fail("a rate near 48 kHz", rc) }
        devicePeriod = Int(rate) / 100
        var period = snd_pcm_uframes_t(devicePeriod)
        rc = snd_pcm_hw_params_set_period_size_near(handle, hw, &period, &dir)
        // A second of buffer: a stalled machine (or a reader that starts late) loses nothing
        // before it is a second behind. Latency is not at stake: periods are timestamped.
        var buffer = snd_pcm_uframes_t(rate)
        if rc >= 0 { rc = snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer) }
        if rc >= 0 { rc = snd_pcm_hw_params(handle, hw) }
        guard rc >= 0 else { throw fail("\(format.name) \(count) channels \(rate) Hz", rc) }
        deviceFormat = DeviceFormat(name: format.name, rate: Int(rate), channels: Int(count))
        return format
    }

    deinit {
        deviceBuffer?.deallocate()
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

    /// Reads up to one period into `samples` (interleaved, `channels` per frame, room for
    /// `periodFrames`), waiting at
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
        let n = snd_pcm_readi(pcm, deviceBuffer ?? UnsafeMutableRawPointer(samples), snd_pcm_uframes_t(devicePeriod))
        if n == -Int(EPIPE) || n == -Int(ESTRPIPE) {
            snd_pcm_prepare(pcm)
            return .overrun
        }
        if n == -Int(EAGAIN) || n == -Int(EINTR) || n == 0 {
            usleep(2_000)  // ready by poll but nothing to read yet: do not spin
            return .nothing
        }
        if n < 0 { throw .cannotOpen(path: device, reason: String(cString: snd_strerror(Int32(n)))) }
        // The period's first sample came `waiting + n` frames before `time`.
        let (waiting, time) = position(pcm)
        let first = time - Double(waiting + Int(n)) / Double(deviceFormat.rate)
        guard let converter, let deviceBuffer else { return .samples(frames: Int(n), time: first) }
        // What comes out first went into the resampler before this period.
        let start = first - Double(converter.delayFrames) / Double(sampleRate)
        let out = converter.convert(deviceBuffer, frames: Int(n), into: samples, capacity: periodFrames)
        return out > 0 ? .samples(frames: out, time: start) : .nothing
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
