import Foundation
import Pipeline

/// record's status line: what is going on, the full-frame camera and the keys, in as many
/// columns as the terminal has. Each part has shorter forms; a narrower terminal gets the
/// shorter forms in a fixed order (the least needed first), never a line cut mid-word while
/// something could still be left out.
enum StatusLine {
    /// The parts, in the order shown; each a list of forms, longest first ("" leaves it out).
    private enum Part: Int, CaseIterable { case clock, fps, p99, repeated, dropped, skipped, audio, stream, full, keys }

    /// What is shortened, one step at a time, until the line fits.
    private static let steps: [Part] = [.p99, .full, .full, .audio, .audio, .repeated, .dropped, .keys, .stream, .fps,
                                        .skipped, .audio, .keys, .full, .stream]
    /// A camera's name longer than this is cut in its middle before anything else goes.
    static let nameLength = 20

    /// "a-very-lo…p-2026.mp4": the start and the end of a long name, which say most.
    static func shortened(_ name: String) -> String {
        guard name.count > nameLength else { return name }
        let keep = nameLength - 1
        return String(name.prefix(keep / 2)) + "…" + String(name.suffix(keep - keep / 2))
    }

    /// The line for `s` in `columns` (it must stay under them: a full line would wrap), with
    /// the keys named when they act.
    static func text(_ s: RecordStatus, columns: Int, keys: Bool) -> String {
        var forms = [Part: [String]]()
        let full = (s.fullFrame as NSString).lastPathComponent
        forms[.clock] = [s.paused ? "PAUSED \(clockText(s.seconds))" : "REC \(clockText(s.seconds))"]
        forms[.fps] = s.paused ? [""] : [String(format: "%.0f fps", s.framesPerSecond), ""]
        forms[.p99] = s.paused ? [""] : [String(format: "p99 %.1f ms", s.latencyP99Ms), ""]
        forms[.repeated] = s.repeatedFrames > 0 && !s.paused ? ["\(s.repeatedFrames) repeated", ""] : [""]
        forms[.dropped] = s.droppedBackFrames > 0 && !s.paused ? ["\(s.droppedBackFrames) dropped", ""] : [""]
        forms[.skipped] = s.encoderSkippedFrames > 0
            ? ["\(s.encoderSkippedFrames) skipped (encoder behind)", "\(s.encoderSkippedFrames) skipped"] : [""]
        if let peak = s.audioPeak {
            let meter = RecordReporter.levelMeter(peak)
            forms[.audio] = ["audio " + meter, meter, String(meter.drop { $0 != " " }.dropFirst()), ""]
        } else {
            forms[.audio] = [""]
        }
        forms[.stream] = s.stream.map { ["stream \($0)", $0, ""] } ?? [""]
        forms[.full] = ["full frame: \(full)", "full: \(full)", "full: \(Self.shortened(full))", ""]
        let pause = s.paused ? "p resume" : "p pause"
        forms[.keys] = !keys ? [""] : s.canSwap ? ["s swap  \(pause)  q stop", "s/p/q keys", ""] : ["\(pause)  q stop", "p/q keys", ""]
        var chosen = [Part: Int]()
        func line() -> String {
            Part.allCases.compactMap { part in
                let options = forms[part]!
                let form = options[min(chosen[part, default: 0], options.count - 1)]
                return form.isEmpty ? nil : form
            }.joined(separator: "  ")
        }
        var text = line()
        for step in steps where TerminalLine.width(text) >= columns {
            chosen[step, default: 0] += 1
            text = line()
        }
        return TerminalLine.fitted(text, columns: columns)
    }
}
