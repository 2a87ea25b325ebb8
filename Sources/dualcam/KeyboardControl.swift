import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline

/// `s` swaps, `q` stops: single keys on a terminal (raw mode, restored on exit); on a pipe
/// or file, whole lines (`s`/`swap`, `q`/`quit`), so a script's "status" is not two swaps.
final class KeyboardControl: @unchecked Sendable {
    private var saved: termios?
    private var reader: OwnedThread?

    enum Command { case swap, stop }

    static func command(key: UInt8) -> Command? {
        switch key {
        case UInt8(ascii: "s"), UInt8(ascii: "S"): return .swap
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .stop
        default: return nil
        }
    }

    static func command(line: String) -> Command? {
        switch line.trimmingCharacters(in: .whitespaces).lowercased() {
        case "s", "swap": return .swap
        case "q", "quit", "stop": return .stop
        default: return nil
        }
    }

    static func perform(_ command: Command?) {
        switch command {
        case .swap?: Interruption.requestSwap()
        case .stop?: Interruption.request()
        case nil: break
        }
    }

    func start() {
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
                t.c_lflag &= ~tcflag_t(ICANON | ECHO)
                tcsetattr(0, TCSANOW, &t)
                raw = true
            }
        }
        let keys = raw
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
                } else if byte == UInt8(ascii: "\n") {
                    let text = String(decoding: line, as: UTF8.self)
                    line.removeAll(keepingCapacity: true)
                    let command = Self.command(line: text)
                    if command == nil && !text.trimmingCharacters(in: .whitespaces).isEmpty {
                        say("ignored '\(text)' (s swaps, q stops)")
                    }
                    Self.perform(command)
                } else if line.count < 256 {
                    line.append(byte)
                }
            }
        }
    }

    func restore() {
        if var t = saved {
            tcsetattr(0, TCSANOW, &t)
            saved = nil
        }
    }
}
