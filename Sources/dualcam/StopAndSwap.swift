import Compositor
import Foundation
import MediaIO
import Pipeline
import Synchronization

// How a running job is asked to stop, swap, pause or move its inset: signals
// (Interruption), keys on stdin (KeyboardControl) and the preview window all send control
// events to one inbox (`Interruption.controls`); a recording's timeline takes them from
// there, a composition reads whether a stop was asked.

/// Ctrl-C, Ctrl-\ (SIGQUIT), SIGTERM and SIGHUP (a closed terminal, a dropped SSH session)
/// ask the running job to stop at the next frame, so it can remove its temporary file or, when recording,
/// finish the file, instead of dying mid-write.
enum Interruption {
    /// Every control event of the process, whoever sends it.
    static let controls = ControlInbox()
    /// Whether a stop signal came already (a second one while finishing is answered).
    private static let flag = Atomic<Bool>(false)
    private static let finishing = Atomic<Bool>(false)
    /// What a signal that comes while the file is being finished prints (from the handler:
    /// only write(2) is safe there, so the text is made beforehand).
    nonisolated(unsafe) private static var busyMessage: UnsafeMutableBufferPointer<CChar>?

    /// The signal that asked to stop (SIGINT when a key or the window did): the exit code of a
    /// job it cut short is 128 + it, as shells report.
    private static let signalNumber = Atomic<Int32>(SIGINT)
    static var exitCode: Int32 { 128 + signalNumber.load(ordering: .relaxed) }

    /// Until a composition has opened everything and starts its first frame, a stop signal
    /// ends the process at once: it may be blocked in an open that never returns (a named pipe
    /// no one writes, a hung network mount), and nothing it made has a name yet (its output
    /// is an unnamed file, its locks go with it).
    private static let exitsAtOnce = Atomic<Bool>(false)
    /// A stop that came before (during the speed check on a machine that has no figures yet)
    /// ends the process here: the handler took it as a request for a job that had not begun,
    /// and the open that follows may never return (CI of 2026-11-28: a test's record of a
    /// named pipe, sent SIGTERM during its first speed check, waited until CI was cut).
    static func exitAtOnceUntilStarted(_ on: Bool) {
        exitsAtOnce.store(on, ordering: .releasing)
        if on && flag.load(ordering: .acquiring) { exitNow(signalNumber.load(ordering: .relaxed)) }
    }
    /// Ends the process from a handler or a thread: the terminal's modes put back, the line
    /// made beforehand written, nothing else run.
    private static func exitNow(_ received: Int32) -> Never {
        if restoresModes.load(ordering: .acquiring), let modes = savedModes { tcsetattr(0, TCSANOW, modes) }
        _ = write(2, exitMessage.baseAddress, exitMessage.count)
        _exit(128 + received)
    }
    /// What a signal that ends the process at once prints, made beforehand (see busyMessage).
    nonisolated(unsafe) private static var exitMessage = signalSafeText("interrupted; no output written")

    /// A job that is all one step (`finish`): any stop signal ends it at once, saying `message`.
    static func exitAtOnce(saying message: String) {
        // Cleared first on a terminal, as `busyMessage` is: it came glued to the progress line.
        exitMessage = signalSafeText(message, clear: TerminalLine.shared.enabled ? "\r\u{1B}[K" : "")
        exitsAtOnce.store(true, ordering: .releasing)
    }

    /// "dualcam: TEXT\n" (`clear` first: what erases a status line) in memory a signal
    /// handler may write(2) without allocating. (Made once or twice per process: never freed,
    /// a handler may be reading it.)
    private static func signalSafeText(_ text: String, clear: String = "") -> UnsafeMutableBufferPointer<CChar> {
        let bytes = Array("\(clear)dualcam: \(text)\n".utf8CString.dropLast())
        let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: bytes.count)
        _ = buffer.initialize(from: bytes)
        return buffer
    }

    /// A composition reads its inputs as fast as it can: a stop interrupts what they wait on
    /// (a live playlist's reload), or the stop would wait for it. (A recording's sources are
    /// stopped by the recording.)
    private static let interruptsInputs = Atomic<Bool>(false)
    static func interruptInputsOnStop() { interruptsInputs.store(true, ordering: .releasing) }

    /// The terminal's modes before the keys made it raw, put back by a signal that ends the
    /// process at once (no `defer` runs then): the shell must not be left without echo.
    nonisolated(unsafe) private static var savedModes: UnsafeMutablePointer<termios>?
    private static let restoresModes = Atomic<Bool>(false)
    static func restoreOnExit(_ modes: termios?) {
        guard let modes else { return restoresModes.store(false, ordering: .releasing) }
        if savedModes == nil { savedModes = .allocate(capacity: 1) }
        savedModes!.pointee = modes
        restoresModes.store(true, ordering: .releasing)
    }

    static var requested: Bool { controls.stopRequested }
    /// A stop asked for by a key or the window (not a signal): the code is SIGINT's.
    static func request() {
        flag.store(true, ordering: .relaxed)
        controls.send(.stop)
        if interruptsInputs.load(ordering: .acquiring) { InputInterruption.interruptAll() }
    }

    /// From now on a further signal is answered with `message` instead of being taken as a
    /// new request: the file is being finished and stopping again would gain nothing.
    static func enterFinishing(message: String) {
        // On a terminal the status line (the encoding's progress) is cleared first, or the
        // message would be glued to its end.
        busyMessage = signalSafeText(message, clear: TerminalLine.shared.enabled ? "\r\u{1B}[K" : "")
        finishing.store(true, ordering: .releasing)
    }

    /// SIGUSR1 asks for a swap at the next frame; SIGUSR2 pauses or resumes the recording.
    static func installSwapAndPauseSignals() {
        _ = controls.stopRequested  // made before a handler can touch it: lazy initialisation is not signal-safe
        let swap: @convention(c) (Int32) -> Void = { _ in Interruption.controls.send(.swap) }
        let pause: @convention(c) (Int32) -> Void = { _ in Interruption.controls.send(.pauseOrResume) }
        signal(SIGUSR1, swap)
        signal(SIGUSR2, pause)
        unblock([SIGUSR1, SIGUSR2])
    }

    static func install() {
        // Touch every static the handler uses: their lazy initialisation is not signal-safe.
        _ = flag.load(ordering: .relaxed)
        _ = finishing.load(ordering: .relaxed)
        _ = signalNumber.load(ordering: .relaxed)
        _ = exitsAtOnce.load(ordering: .relaxed)
        _ = restoresModes.load(ordering: .relaxed)
        _ = exitMessage
        _ = interruptsInputs.load(ordering: .relaxed)
        _ = controls.stopRequested
        let handler: @convention(c) (Int32) -> Void = { received in
            if Interruption.exitsAtOnce.load(ordering: .acquiring) { Interruption.exitNow(received) }
            let already = Interruption.flag.exchange(true, ordering: .relaxed)
            if !already { Interruption.signalNumber.store(received, ordering: .relaxed) }
            Interruption.controls.send(.stop)
            if Interruption.interruptsInputs.load(ordering: .acquiring) { InputInterruption.interruptAll() }
            if already, Interruption.finishing.load(ordering: .acquiring), let m = Interruption.busyMessage {
                _ = write(2, m.baseAddress, m.count)
            }
        }
        // SIGQUIT too: left to the Swift runtime, it printed a crash report and went on.
        for stop in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { signal(stop, handler) }
        // A swap or pause signal meant for a recording must not kill a composition (their
        // default action ends the process); record installs its handlers over these.
        signal(SIGUSR1, SIG_IGN)
        signal(SIGUSR2, SIG_IGN)
        // With the terminal gone, writing to it must fail with an error, not kill us.
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these blocked (the mask is inherited across
        // exec); a handler never runs for a blocked signal.
        unblock([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
    }

    private static func unblock(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

/// `s` swaps, `p` pauses and resumes, `q` stops: single keys on a terminal (raw mode, restored on exit); on a pipe
/// or file, whole lines (`s`/`swap`, `q`/`quit`), so a script's "status" is not two swaps.
final class KeyboardControl {
    private var saved: termios?
    /// Whether single keys act (a terminal in front), so the status line can name them.
    private(set) var singleKeys = false
    private var reader: OwnedThread?

    static func command(key: UInt8) -> ControlEvent? {
        switch key {
        case UInt8(ascii: "s"), UInt8(ascii: "S"): return .swap
        case UInt8(ascii: "p"), UInt8(ascii: "P"): return .pauseOrResume
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .stop
        default: return nil
        }
    }

    static func command(line: String) -> ControlEvent? {
        switch line.trimmingCharacters(in: .whitespaces).lowercased() {
        case "s", "swap": return .swap
        case "p", "pause", "resume": return .pauseOrResume
        case "q", "quit", "stop": return .stop
        default: return nil
        }
    }

    static func perform(_ command: ControlEvent?) {
        switch command {
        case .stop?: Interruption.request()
        case let event?: Interruption.controls.send(event)
        case nil: break
        }
    }

    /// `sources`: the sources' paths. One that is this process's standard input (a video
    /// piped to `--back /dev/stdin`) is the source's to read, not the keys': two readers of
    /// one pipe would each take part of it, and the source's refusal could be followed by a
    /// line about the data the keys met.
    func start(sources: [String]) {
        guard !sources.contains(where: Self.isStandardInput) else { return }
        // A recording in the background (`record ... &`, or Ctrl-Z then `bg`) must go on: the
        // terminal stops a background process that reads it or sets its modes, unless these
        // are ignored (a read then fails with EIO, and is tried again until it is in front).
        signal(SIGTTIN, SIG_IGN)
        signal(SIGTTOU, SIG_IGN)
        var raw = false
        // Keys only when in front: a background job changing the terminal's modes would
        // leave the user's shell without echo.
        if isatty(0) == 1 && tcgetpgrp(0) == getpgrp() {
            var t = termios()
            if tcgetattr(0, &t) == 0 {
                saved = t
                Interruption.restoreOnExit(t)
                t.c_lflag &= ~tcflag_t(ICANON | ECHO)
                tcsetattr(0, TCSANOW, &t)
                raw = true
            }
        }
        let keys = raw
        singleKeys = raw
        // Never joined: it waits in a read of the terminal until the process ends.
        reader = OwnedThread(name: "dualcam-keys") {
            var byte: UInt8 = 0
            var line: [UInt8] = []
            while true {
                let n = read(0, &byte, 1)
                if n < 0 && (errno == EIO || errno == EINTR || errno == EAGAIN) {
                    usleep(200_000)  // in the background: the terminal is not ours to read now
                    continue
                }
                guard n == 1 else { break }
                if keys {
                    Self.perform(Self.command(key: byte))
                } else if byte == 0 {
                    // Data, not commands (a video piped in): not read as lines (each printed
                    // as an "ignored" line of its bytes).
                    say("standard input holds data, not commands (s, p, q lines): it is not read")
                    break
                } else if byte == UInt8(ascii: "\n") {
                    let text = String(decoding: line, as: UTF8.self)
                    line.removeAll(keepingCapacity: true)
                    let command = Self.command(line: text)
                    if command == nil && !text.trimmingCharacters(in: .whitespaces).isEmpty {
                        say("ignored '\(text)' (s swaps, p pauses, q stops)")
                    }
                    Self.perform(command)
                } else if line.count < 256 {
                    line.append(byte)
                }
            }
        }
    }

    static func isStandardInput(_ path: String) -> Bool {
        var input = stat(), named = stat()
        return fstat(0, &input) == 0 && stat(path, &named) == 0 && input.st_dev == named.st_dev && input.st_ino == named.st_ino
    }

    func restore() {
        if var t = saved {
            tcsetattr(0, TCSANOW, &t)
            saved = nil
            Interruption.restoreOnExit(nil)
        }
    }
}
