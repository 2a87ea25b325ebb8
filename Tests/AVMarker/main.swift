// dualcam-av-marker: a reference event seen by both the camera and the microphone, for the
// A/V sync test in the vivid VM. It plays silence into an ALSA device (snd-aloop's
// playback side) with beeps at known sample positions and, at the moment each beep's first
// sample leaves the playback buffer (write time + snd_pcm_delay), flips a camera control
// (vivid's test pattern), so both are stamped by one clock: CLOCK_MONOTONIC.
//
//   dualcam-av-marker ALSA_PLAYBACK VIDEO_DEVICE CONTROL_ID VALUE_A VALUE_B COUNT FIRST_S SPACING_S
//
// Prints one line per marker: "marker I beep=T control=T0..T1" (monotonic seconds).
import CALSA
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

func die(_ message: String) -> Never {
    FileHandle.standardError.write(Data("dualcam-av-marker: \(message)\n".utf8))
    exit(1)
}

func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

let args = CommandLine.arguments
guard args.count == 9, let control = UInt32(args[3].replacingOccurrences(of: "0x", with: ""), radix: 16),
      let valueA = Int32(args[4]), let valueB = Int32(args[5]), let count = Int(args[6]),
      let first = Double(args[7]), let spacing = Double(args[8])
else { die("usage: ALSA_PLAYBACK VIDEO_DEVICE CONTROL_ID(hex) VALUE_A VALUE_B COUNT FIRST_S SPACING_S") }

let rate = 48_000, period = 240, beepFrames = 4_800  // 5 ms periods, 100 ms beeps
dc_snd_quiet()
var pcm: OpaquePointer?
guard snd_pcm_open(&pcm, args[1], SND_PCM_STREAM_PLAYBACK, 0) >= 0, let pcm else { die("cannot open \(args[1])") }
// 48 kHz stereo 16-bit, with a latency of 1.5 s: the emulated VM (TCG, no KVM) stalls for
// up to ~800 ms at times, and an underrun would shift beeps whose times were already told.
// The depth costs no accuracy: snd_pcm_delay says exactly how much is queued.
guard snd_pcm_set_params(pcm, snd_pcm_format_t(rawValue: dc_snd_pcm_format_s16()), SND_PCM_ACCESS_RW_INTERLEAVED,
                         2, UInt32(rate), 0, 1_500_000) >= 0 else { die("cannot play 48 kHz stereo on \(args[1])") }
let camera = dc_v4l2_open(args[2], O_RDWR)
guard camera >= 0 else { die("cannot open \(args[2])") }

/// Sample positions of the beeps, and the monotonic time each one is heard.
let beepAt = (0..<count).map { Int((first + Double($0) * spacing) * Double(rate)) }
/// The times each beep is heard, handed from the audio loop to the control thread.
final class HeardTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Double] = []
    let due = DispatchSemaphore(value: 0)
    func add(_ t: Double) { lock.lock(); times.append(t); lock.unlock(); due.signal() }
    func next(_ i: Int) -> Double { due.wait(); lock.lock(); defer { lock.unlock() }; return times[i] }
}
let heard = HeardTimes()
/// Signalled when the control thread has flipped and printed for every beep.
let allFlipped = DispatchSemaphore(value: 0)

// The control flips on its own thread, sleeping until each beep is heard.
let flipper = Thread {
    for i in 0..<count {
        let at = heard.next(i)
        var wake = timespec(tv_sec: Int(at), tv_nsec: Int((at - Double(Int(at))) * 1e9))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil) == EINTR {}
        var c = v4l2_control(id: control, value: i % 2 == 0 ? valueA : valueB)
        let t0 = monotonic()
        guard dc_v4l2_ioctl(camera, dc_VIDIOC_S_CTRL(), &c) == 0 else { die("VIDIOC_S_CTRL: \(String(cString: strerror(errno)))") }
        let t1 = monotonic()
        FileHandle.standardOutput.write(Data(String(format: "marker %d beep=%.6f control=%.6f..%.6f\n", i, at, t0, t1).utf8))
    }
    allFlipped.signal()
}
flipper.start()

var chunk = [Int16](repeating: 0, count: period * 2)
let end = (beepAt.last ?? 0) + beepFrames + rate / 2
var position = 0
var next = 0
/// When the last beep announced so far is heard: an underrun before then would make its
/// announced time wrong; one after it (or before any) only delays what is still to come,
/// whose times are measured when they are written.
var announcedUntil = -Double.infinity
var recovered = 0
while position < end {
    // Silence, with the part of any beep (1 kHz, half scale) that falls in this chunk: only
    // those samples are computed, so the emulated VM keeps up with the playback.
    for i in 0..<(period * 2) { chunk[i] = 0 }
    for b in beepAt where b < position + period && b + beepFrames > position {
        for p in max(b, position)..<min(b + beepFrames, position + period) {
            let v = Int16(0.5 * sin(2 * Double.pi * 1000 * Double(p) / Double(rate)) * 32767)
            chunk[2 * (p - position)] = v
            chunk[2 * (p - position) + 1] = v
        }
    }
    if next < count && beepAt[next] < position + period {
        // Everything queued before this chunk is heard first: the beep starts that much later.
        var delay = snd_pcm_sframes_t(0)
        if snd_pcm_delay(pcm, &delay) < 0 { delay = 0 }
        let at = monotonic() + Double(Int(delay) + beepAt[next] - position) / Double(rate)
        heard.add(at)
        announcedUntil = at + Double(beepFrames) / Double(rate)
        next += 1
    }
    var written = 0
    while written < period {
        let n = chunk.withUnsafeBufferPointer { snd_pcm_writei(pcm, $0.baseAddress! + 2 * written, snd_pcm_uframes_t(period - written)) }
        if n < 0 {
            // An underrun shifts every later sample: the times said above would be wrong.
            if n == -Int(EPIPE) {
                if monotonic() < announcedUntil { die("playback underrun: the marker times are no longer true") }
                recovered += 1
            }
            if snd_pcm_recover(pcm, Int32(n), 1) < 0 { die("playback: \(String(cString: snd_strerror(Int32(n))))") }
            continue
        }
        written += n
    }
    position += period
}
if recovered > 0 { FileHandle.standardError.write(Data("dualcam-av-marker: \(recovered) underrun(s) between markers, recovered\n".utf8)) }
snd_pcm_drain(pcm)
// The last control flip is due before the drained buffer's end: its line is waited for (a
// beep never announced would hold it for ever, hence the bound).
_ = allFlipped.wait(timeout: .now() + 2)
snd_pcm_close(pcm)
