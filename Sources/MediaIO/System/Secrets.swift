import CFFmpegPolicy
import Foundation

/// What must never be shown: the parts of a stream's URL that give access to it (user and
/// password, an RTMP stream key, an SRT passphrase). Every line dualcam writes for people or
/// scripts (messages, the status line, summaries, `--json`) and FFmpeg's own log lines pass
/// through `masked`: `--verbose` printed FFmpeg's lines as they were, an SRT passphrase in
/// full, and a password holding a slash was shown in part.
public enum Secrets {
    private static let known = Locked<[String]>([])

    /// Remembers the secrets in `url` (as given and percent-decoded).
    public static func register(url: String) {
        let found = LiveStreamWriter.secrets(in: url).flatMap { [$0, $0.removingPercentEncoding ?? $0] }
            .filter { $0.count >= 3 && $0 != "***" }
        known.withLock { list in
            for secret in found where !list.contains(secret) { list.append(secret) }
            // Longest first: a secret that holds another is masked whole.
            list.sort { $0.count > $1.count }
        }
    }

    /// `text` with each known secret, and the secret parts of any URL in it, shown as ***.
    /// `insideJSON`: `text` is JSON, and what is put back into its strings is escaped as JSON.
    public static func masked(_ text: String, insideJSON: Bool = false) -> String {
        // The one way out for text: a folder reached through its opened descriptor is shown as given.
        var out = insideJSON ? ByteFolders.shown(text, quoting: ByteFolders.jsonQuoted) : ByteFolders.shown(text)
        for secret in known.withLock({ $0 }) where out.contains(secret) {
            out = out.replacingOccurrences(of: secret, with: "***")
        }
        guard out.contains("://") else { return out }
        // Each URL in the text, up to a space or a quote (a URL inside a JSON string).
        var masked = "", rest = out[...]
        while let found = rest.firstMatch(of: urlPattern) {
            // Punctuation after a URL in a sentence ("URL: cannot write") is not part of it.
            var url = rest[found.range]
            while let last = url.last, ":,.;)]".contains(last) { url = url.dropLast() }
            masked += rest[..<url.startIndex] + LiveStreamWriter.masked(String(url))
            rest = rest[url.endIndex...]
        }
        return masked + rest
    }

    nonisolated(unsafe) private static let urlPattern = try! Regex("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'<>]+")

    /// FFmpeg's log lines (shown with --verbose) masked on their way to stderr.
    public static func maskFFmpegLog() {
        dc_log_to { line, _ in
            guard let line else { return }
            writeAll(Array(Secrets.masked(String(cString: line)).utf8), to: 2)
        }
    }
}
