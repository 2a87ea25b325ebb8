import Foundation
import MediaIO

/// One line at the bottom of a terminal, redrawn in place (progress, recording status). Off
/// a terminal it draws nothing: logs and pipes get the start line and the summary only.
/// Messages (`say`) clear it first and it comes back under them, so the two never mix.
final class TerminalLine: Sendable {
    static let shared = TerminalLine(enabled: isatty(2) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb")

    let enabled: Bool
    /// The line shown, and when it was drawn.
    private let shown = Locked((text: "", drawnAt: 0.0))
    /// Redraws at most this often: a terminal over ssh should not be flooded at 30 fps.
    static let interval = 0.25

    init(enabled: Bool) { self.enabled = enabled }

    /// Shows `text` now, or at the next update after `interval` has passed.
    func update(_ newText: @autoclosure () -> String, force: Bool = false) {
        guard enabled else { return }
        let now = ProcessInfo.processInfo.systemUptime
        shown.withLock { shown in
            guard force || now - shown.drawnAt >= Self.interval else { return }
            shown.drawnAt = now
            shown.text = Self.fitted(newText(), columns: Self.columns())
            draw("\r\u{1B}[K" + shown.text)
        }
    }

    /// Shows the text `make` gives for the terminal's width, as `update` does.
    func update(fitting make: (Int) -> String) {
        update(make(Self.columns()))
    }

    /// A line longer than the terminal wraps, and the next redraw would then clear only its
    /// last part: cut it to fit instead (counted in cells: a CJK character takes two).
    static func fitted(_ text: String, columns: Int) -> String {
        let text = printable(text)
        guard width(text) >= columns else { return text }
        var cut = "", used = 0
        for c in text {
            let w = width(String(c))
            if used + w > max(columns - 2, 0) { break }
            cut.append(c)
            used += w
        }
        return cut + "…"
    }

    /// `text` with what a terminal would obey instead of show (escape sequences, carriage
    /// returns, newlines from a file's name) made visible: a message stays one line, and a name
    /// cannot set the window's title or clear the screen.
    static func printable(_ shown: String) -> String {
        // Every message, summary and status line passes here: a stream's secrets never show.
        let text = Secrets.masked(shown)
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for c in text.unicodeScalars {
            if isControl(c) { out += c.value == 0x1B ? "^[" : String(format: "\\x%02X", c.value) } else { out.unicodeScalars.append(c) }
        }
        return out
    }

    private static func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || (0x7F...0x9F).contains(c.value) }

    /// Terminal cells `text` takes: two for East Asian wide and full-width characters and
    /// most emoji, none for combining marks, one for the rest.
    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { total, c in
            switch c.value {
            case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: return total
            case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
                 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
                 0x1F900...0x1F9FF, 0x20000...0x3FFFD: return total + 2
            default: return total + 1
            }
        }
    }

    static func columns() -> Int {
        var size = winsize()
        return ioctl(2, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    /// Removes the line for good (before the summary, which goes to stdout: the line is
    /// gone from the terminal before that is written, or the two would mix).
    func clear() {
        guard enabled else { return }
        shown.withLock { shown in
            if !shown.text.isEmpty { draw("\r\u{1B}[K") }
            shown.text = ""
        }
        StderrWriter.shared.flush(timeout: 1)
    }

    /// Writes `message` (a whole line) above the status line.
    func print(message: String) {
        shown.withLock { shown in
            guard enabled, !shown.text.isEmpty else { return draw(message) }
            draw("\r\u{1B}[K" + message + shown.text)
        }
    }

    /// To fd 2 through `StderrWriter`: callers (the recording thread among them) never wait
    /// for the terminal.
    private func draw(_ s: String) { StderrWriter.shared.write(Array(s.utf8)) }
}

/// Writes what goes to fd 2 on a thread of its own. A write to a terminal stopped with
/// Ctrl-S, or to a pipe nobody reads, blocks until it is read: that thread waits, not the
/// one that recorded the frame. What piles up past `limit` bytes meanwhile is dropped
/// (status redraws, mostly), and said once writing resumes.
// Sendable: what is pending under `condition`.
final class StderrWriter: @unchecked Sendable {
    static let shared = StderrWriter()
    static let limit = 1 << 18

    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var writing = false
    private var dropped = 0
    /// Never joined: `flush` is how the process waits for what it wrote.
    private var writer: OwnedThread?

    private init() {
        writer = OwnedThread(name: "dualcam-stderr") { [self] in writeLoop() }
        // Messages said just before exit (the error line, the last events) get out first.
        atexit { StderrWriter.shared.flush(timeout: 2) }
    }

    func write(_ bytes: [UInt8]) {
        condition.lock(); defer { condition.unlock() }
        if pending.count + bytes.count > Self.limit {
            dropped += bytes.count
        } else {
            pending += bytes
            condition.broadcast()  // `flush` may be waiting on the same condition
        }
    }

    /// Waits until everything queued is written, at most `timeout` seconds (the terminal may
    /// never take it).
    func flush(timeout: Double) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock(); defer { condition.unlock() }
        while !pending.isEmpty || writing {
            if !condition.wait(until: deadline) { return }
        }
    }

    private func writeLoop() {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            var chunk = pending
            pending.removeAll(keepingCapacity: true)
            if dropped > 0 {
                chunk = Array("dualcam: \(dropped) bytes of messages dropped while stderr was not read\n".utf8) + chunk
                dropped = 0
            }
            writing = true
            condition.unlock()
            Self.writeAll(chunk)
            condition.lock()
            writing = false
            condition.broadcast()
            condition.unlock()
        }
    }

    private static func writeAll(_ bytes: [UInt8]) { MediaIO.writeAll(bytes, to: 2) }
}

/// How long is left at the pace so far, as m:ss or h:mm:ss.
func clockText(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds >= 0 else { return "-:--" }
    let s = Int(seconds.rounded())
    return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
}
