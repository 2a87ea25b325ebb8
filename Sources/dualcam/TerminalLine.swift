import Foundation

/// One line at the bottom of a terminal, redrawn in place (progress, recording status). Off
/// a terminal it draws nothing: logs and pipes get the start line and the summary only.
/// Messages (`say`) clear it first and it comes back under them, so the two never mix.
final class TerminalLine: @unchecked Sendable {
    static let shared = TerminalLine(enabled: isatty(2) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb")

    let enabled: Bool
    private let lock = NSLock()
    private var text = ""
    private var lastDrawn = 0.0
    /// Redraws at most this often: a terminal over ssh should not be flooded at 30 fps.
    static let interval = 0.25

    init(enabled: Bool) { self.enabled = enabled }

    /// Shows `text` now, or at the next update after `interval` has passed.
    func update(_ newText: @autoclosure () -> String, force: Bool = false) {
        guard enabled else { return }
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock(); defer { lock.unlock() }
        guard force || now - lastDrawn >= Self.interval else { return }
        lastDrawn = now
        text = Self.fitted(newText(), columns: Self.columns())
        draw("\r\u{1B}[K" + text)
    }

    /// A line longer than the terminal wraps, and the next redraw would then clear only its
    /// last part: cut it to fit instead.
    static func fitted(_ text: String, columns: Int) -> String {
        text.count < columns ? text : String(text.prefix(max(columns - 2, 1))) + "…"
    }

    static func columns() -> Int {
        var size = winsize()
        return ioctl(2, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    /// Removes the line for good (before the summary).
    func clear() {
        guard enabled else { return }
        lock.lock(); defer { lock.unlock() }
        if !text.isEmpty { draw("\r\u{1B}[K") }
        text = ""
    }

    /// Writes `message` (a whole line) above the status line.
    func print(message: String) {
        lock.lock(); defer { lock.unlock() }
        guard enabled, !text.isEmpty else { return draw(message) }
        draw("\r\u{1B}[K" + message + text)
    }

    /// Straight to fd 2, retried on EINTR; errors are dropped (a hung-up terminal must not
    /// stop a recording).
    private func draw(_ s: String) {
        let bytes = Array(s.utf8)
        bytes.withUnsafeBytes { b in
            var done = 0
            while done < b.count {
                let n = write(2, b.baseAddress! + done, b.count - done)
                if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }
}

/// How long is left at the pace so far, as m:ss or h:mm:ss.
func clockText(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds >= 0 else { return "-:--" }
    let s = Int(seconds.rounded())
    return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
}
