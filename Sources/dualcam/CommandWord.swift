import ArgumentParser
import Foundation

/// What the parser cannot say well about the first word: nothing at all (a short usage, exit
/// 2, instead of the whole help) and a mistyped command (the nearest one, instead of
/// "Unexpected argument").
enum CommandWord {
    static var names: [String] {
        DualCam.configuration.subcommands.compactMap { $0.configuration.commandName ?? String(describing: $0).lowercased() }
    }

    static let shortUsage = """
        usage: dualcam <command> [options]
          compose BACK FRONT -o OUT.mov     two video files into one picture-in-picture file
          record [--back DEV] [--front DEV] record two cameras (or files played as cameras)
          batch, relayout, finish, devices, controls, doctor, bench
        dualcam <command> --help shows a command's options and examples; man dualcam the whole guide.
        """

    /// The arguments as the program was given them, bytes (Swift's `CommandLine.arguments` has
    /// turned those that are not UTF-8 into U+FFFD: `-o caf\xe9/take.mov` wrote elsewhere).
    static func argumentBytes() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { i in
            guard let p = CommandLine.unsafeArgv[i] else { return [] }
            return Array(UnsafeBufferPointer(start: p, count: strlen(p))).map { UInt8(bitPattern: $0) }
        }
    }

    /// A failure to leave with before parsing, or nil to parse.
    static func check(_ arguments: [String]) -> Failure? {
        guard let first = arguments.first, arguments != ["--"] else { return Failure(shortUsage, code: 2, prefixed: false) }
        // `help WORD`: the same answer for a WORD that is no command (the parser showed the
        // whole help, exit 0).
        if first == "help", arguments.count > 1, !arguments[1].hasPrefix("-") { return check(Array(arguments.dropFirst())) }
        guard !first.hasPrefix("-"), first != "help", !names.contains(first) else { return nil }
        if let near = nearest(to: first) {
            return Failure("'\(first)' is not a dualcam command; did you mean '\(near)'? (dualcam \(near) --help)", code: 64)
        }
        return Failure("'\(first)' is not a dualcam command: one of \(names.joined(separator: ", ")) (dualcam --help)", code: 64)
    }

    /// The command (or other of `candidates`) within two edits of `word` (or that it begins),
    /// if there is exactly one best.
    static func nearest(to word: String, among candidates: [String] = names) -> String? {
        let scored = candidates.map { ($0, $0.hasPrefix(word.lowercased()) && word.count >= 2 ? 0 : editDistance(word.lowercased(), $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2,
              scored.filter({ $0.1 == best.1 }).count == 1 else { return nil }
        return best.0
    }

    /// Levenshtein distance, with a swap of two neighbours counted as one edit ("cmopose").
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
