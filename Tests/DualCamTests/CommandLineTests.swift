import Foundation
import Testing

/// The command line as people meet it: no command, a mistyped one, help in groups with
/// examples, the benchmark's case list; and every `--json` output against its JSON Schema in
/// Docs/json, checked by python3-jsonschema.
@Suite(.timeLimit(.minutes(10))) struct CommandLineTests {
    /// Checks each file (one output each) against Docs/json/KIND.schema.json.
    static func expectValid(_ kind: String, _ files: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let schema = Env.repoRoot.appendingPathComponent("Docs/json/\(kind).schema.json").path
        let checker = Env.repoRoot.appendingPathComponent("Tests/jsonschema/validate.py").path
        let r = try run("/usr/bin/env", ["python3", checker, schema] + files)
        #expect(r.status == 0, "\(kind): \(r.stderr)", sourceLocation: sourceLocation)
    }

    /// Writes one output to a file of its own, for the checker.
    static func saved(_ text: String, in dir: TempDir, as name: String) throws -> String {
        let path = dir.path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.timeLimit(.minutes(1)))
    func noCommandIsAShortUsageAndExit2() throws {
        let r = try dualcam([])
        #expect(r.status == 2, "\(r.status)")
        #expect(r.stdout.isEmpty && r.stderr.hasPrefix("usage: dualcam <command> [options]"), "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count <= 6 && r.stderr.contains("compose") && r.stderr.contains("record"))
    }

    /// A rate or a duration that is not a number as taken is answered with what is taken, on
    /// the first line, exit 64: a huge --rate trapped (SIGILL) where the line suggested the nearest
    /// whole rate (the options fuzzer), and 29.97 and 2s were answered with no hint.
    @Test(.timeLimit(.minutes(1)))
    func aRateOrDurationOfAnotherFormSaysWhatIsTaken() throws {
        for rate in ["29.97", "99999999999999999999", "nan", "-inf", "1e400"] {
            let r = try dualcam(["compose", Reference.back, Reference.front, "-o", "/nonexistent/x.mov", "--rate", rate])
            #expect(r.status == 64 && r.stderrLines.first?.contains("--rate takes a whole number of frames per second") == true,
                    "\(rate): \(r.status) \(r.stderr)")
        }
        let hint = try dualcam(["compose", Reference.back, Reference.front, "-o", "/nonexistent/x.mov", "--rate", "29.97"])
        #expect(hint.stderr.contains("for 29.97 fps sources 30"), "\(hint.stderr)")
        let duration = try dualcam(["record", "--back", Reference.back, "--dry-run", "-o", "/nonexistent/x.mov", "--duration", "2x"])
        #expect(duration.status == 64 && duration.stderr.contains("--duration takes seconds, as a number (5, 2.5 or 90s)"),
                "\(duration.stderr)")
    }

    /// OUT's name is checked before any work, by every command that writes one: standard
    /// output, another container's extension and a folder are usage errors, exit 64 with the
    /// reason on the first line, as a wrong --size is (`-o out.avi` was exit 1, found once the
    /// inputs were open), and nothing is written.
    @Test(.timeLimit(.minutes(1)))
    func aNameThatCannotBeOUTIsAUsageError() throws {
        let dir = try TempDir()
        let inputs = [Reference.back, Reference.front]
        let cases: [(args: [String], says: String)] = [
            (["compose"] + inputs + ["-o", "-"], "-: cannot write: standard output is not written to: name a file (-o OUT.mov)"),
            (["compose"] + inputs + ["-o", dir.path("out.avi")], "out.avi: cannot write: the name must end in .mov or .mp4"),
            (["compose"] + inputs + ["-o", dir.url.path], "cannot write: is a directory"),
            (["record", "--back", Reference.back, "--duration", "1", "-o", dir.path("take.avi")], "take.avi: cannot write: the name must end in"),
            (["relayout", dir.path("take.mov"), "-o", dir.path("laid-out.mkv")], "laid-out.mkv: cannot write: the name must end in"),
            (["finish", dir.path("take.mov"), "-o", dir.path("finished.webm")], "finished.webm: cannot write: the name must end in"),
        ]
        for (args, says) in cases {
            let r = try dualcam(args)
            #expect(r.status == 64 && r.stderrLines.first?.hasPrefix("dualcam: ") == true && r.stderrLines.first?.contains(says) == true,
                    "\(args): \(r.status) \(r.stderr)")
        }
        #expect(dir.contents.isEmpty, "written: \(dir.contents)")
    }

    /// A plan fails where the recording would (a file that is no video: it printed the file's
    /// name as a source, exit 0), and a HOME that does not exist (a service account's
    /// /nonexistent) is not made to remember the encoder's measurement in (as root it was).
    @Test(.timeLimit(.minutes(1)))
    func aDryRunChecksItsFilesAndMakesNoHome() throws {
        let dir = try TempDir()
        let notes = dir.path("notes.txt")
        try "not a video\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let refused = try dualcam(["record", "--back", notes, "--front", Reference.front, "--dry-run", "--skip-speed-check",
                                   "-o", dir.path("never.mov")])
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.status) \(refused.stdout)")
        #expect(refused.stderr == "dualcam: --back \(notes): \(notes): cannot open: not a media file FFmpeg can read\n", "\(refused.stderr)")
        let home = dir.path("no-such-home")
        let planned = try run(Env.dualcam, ["record", "--back", Reference.back, "--front", Reference.front, "--dry-run",
                                            "--size", "320x240", "-o", dir.path("never.mov")],
                              environment: ["HOME": home, "XDG_CACHE_HOME": ""])
        #expect(planned.status == 0 && planned.stdout.contains("measured now"), "\(planned.stdout)\(planned.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home), "a missing HOME was made")
    }

    @Test(.timeLimit(.minutes(1)))
    func aMistypedCommandIsAnsweredWithTheNearestOne() throws {
        for (typed, meant) in [("compse", "compose"), ("recrod", "record"), ("devcies", "devices"), ("finsh", "finish"),
                               ("rec", "record"), ("Compose", "compose")] {
            let r = try dualcam([typed, "a.mp4", "b.mp4", "-o", "c.mov"])
            #expect(r.status == 64, "\(typed): \(r.status)")
            #expect(r.stderr == "dualcam: '\(typed)' is not a dualcam command; did you mean '\(meant)'? (dualcam \(meant) --help)\n",
                    "\(typed): \(r.stderr)")
        }
        let helpOfNothing = try dualcam(["help", "compse"])
        #expect(helpOfNothing.status == 64 && helpOfNothing.stderr.contains("did you mean 'compose'?"), "\(helpOfNothing.stderr)")
        let far = try dualcam(["xyzzy"])
        #expect(far.status == 64 && far.stderr.contains("one of compose, record, relayout, finish, batch, devices, controls, doctor, bench"),
                "\(far.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "c.mov"))
    }

    /// Ctrl-C (or SIGTERM) during a composition is an interruption, exit 128 + the signal, and
    /// the unfinished file is gone. Before, a stop that reached a decoder mid-read came out
    /// as "file is truncated or damaged (Immediate exit requested)", exit 1, in 3 of 8 tries.
    @Test(.timeLimit(.minutes(3)))
    func ctrlCDuringComposeIsAnInterruptionWhereverItLands() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let long = dir.path("long.mp4")
        try makeClip(long, ["-f", "lavfi", "-i", "testsrc2=s=1280x720:r=30:d=30", "-f", "lavfi", "-i", "sine=d=30",
                            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest"])
        // Landing at points of the composition rather than at seconds from the launch (a busy
        // machine is still opening at 1 s): once it says it composes (nil), then once its file
        // holds that many bytes. OUT is in a folder of its own, where its file (unnamed until
        // whole) is told from the input's.
        let outDir = try TempDir()
        func reached(_ process: Process, _ bytes: Int) {
            waitUntil("\(bytes) bytes of the composition", timeout: 60) {
                !process.isRunning || bytesWritten(by: process.processIdentifier, in: outDir.url.path) > bytes
            }
        }
        // SIGQUIT (Ctrl-\\) too: the Swift runtime printed a crash report for it and went on.
        let cases: [(Int32, Int?)] = [(SIGINT, nil), (SIGINT, 64 << 10), (SIGINT, 1 << 20), (SIGTERM, 512 << 10), (SIGQUIT, 256 << 10)]
        for (n, (signal, bytes)) in cases.enumerated() {
            let out = outDir.path("c\(n).mov")
            let r = try dualcam(["compose", long, Reference.front, "-o", out]) { process, said in
                if let bytes { reached(process, bytes) } else { said.waitFor("composing ", onStdout: true) }
                kill(process.processIdentifier, signal)
            }
            let when = bytes.map { "at \($0) bytes" } ?? "as it said it composes"
            #expect(r.status == 128 + signal && r.stderr == "dualcam: interrupted; no output written\n",
                    "signal \(signal) \(when): \(r.status) \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        // A swap signal is a recording's: a composition goes on (it was killed by it, exit 138),
        // its file growing after them.
        let swapAsked = try dualcam(["compose", long, Reference.front, "-o", outDir.path("usr1.mov")]) { process in
            reached(process, 64 << 10)
            kill(process.processIdentifier, SIGUSR1)
            kill(process.processIdentifier, SIGUSR2)
            reached(process, bytesWritten(by: process.processIdentifier, in: outDir.url.path) + (64 << 10))
            kill(process.processIdentifier, SIGINT)
        }
        #expect(swapAsked.status == 130 && swapAsked.stderr == "dualcam: interrupted; no output written\n",
                "\(swapAsked.status) \(swapAsked.stderr)")
    }

    /// A closed stdout (`>&-`) or one whose reader has gone (`| true`) loses the job's lines,
    /// not the job: compose crashed writing its first line (Foundation's FileHandle.write).
    @Test(.timeLimit(.minutes(2)))
    func aClosedOrBrokenStdoutDoesNotStopAJob() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        for (n, redirect) in [">&-", "| true"].enumerated() {
            let out = dir.path("s\(n).mov")
            let r = try run("/bin/bash", ["-c", "\"$0\" compose \"$1\" \"$2\" --size 320x180 -o \"$3\" \(redirect); exit ${PIPESTATUS[0]}",
                                          Env.dualcam, Reference.back, Reference.front, out])
            #expect(r.status == 0 && !r.stderr.contains("Fatal error"), "\(redirect): \(r.status) \(r.stderr)")
            #expect(try Probe(out).stream("video")?["nb_frames"] as? String == "90", "\(redirect)")
        }
    }

    /// What an attacker tried: a name that is not UTF-8 (written under another name before),
    /// escape sequences in a name (they reached the terminal), a baseline with an absurd figure
    /// (dualcam-bench crashed converting it), a gate with nothing to compare (it passed).
    @Test(.timeLimit(.minutes(2)))
    func hostileNamesAndBaselinesAreRefusedInOneLine() throws {
        let dir = try TempDir()
        let latin1 = try run("/bin/sh", ["-c", "exec \"$0\" compose \"$(printf 'caf\\351.mp4')\" b.mp4 -o \"$(printf 'x\\377.mov')\"",
                                         Env.dualcam])
        #expect(latin1.status == 64 && latin1.stderr.hasPrefix("dualcam: argument 2 (caf") && latin1.stderr.contains("is not UTF-8"),
                "\(latin1.stderr)")
        #expect(dir.contents.isEmpty)
        let escape = try dualcam(["compose", "a\u{1B}]0;TITLE\u{07}\nFAKE.mp4", Reference.front, "-o", dir.path("e.mov")])
        #expect(escape.status == 1 && escape.stderr.split(separator: "\n").count == 1 && !escape.stderr.contains("\u{1B}"),
                "\(escape.stderr.debugDescription)")
        // The summary on stdout shows such a name as text too (it set the terminal's title).
        let titled = try dualcam(["compose", Reference.back, Reference.front, "--size", "320x180", "-o", dir.path("t\u{1B}]0;TITLE\u{07}.mov")])
        #expect(titled.status == 0 && !titled.stdout.contains("\u{1B}") && titled.stdout.contains("t^[]0;TITLE\\x07.mov"),
                "\(titled.stdout.debugDescription)")
        let saved = try dualcam(["bench", "--cases", "inset-only-480p", "--frames", "3", "--json"])
        try #require(saved.status == 0)
        let absurd = try CommandLineTests.saved(saved.stdout.replacingOccurrences(of: #""p50_ms": [0-9.]+"#, with: "\"p50_ms\": 1e300",
                                                                                 options: .regularExpression), in: dir, as: "b.json")
        let gate = try dualcam(["bench", "--cases", "inset-only-480p", "--frames", "3", "--baseline", absurd])
        #expect(gate.status == 2 && gate.stderr.contains("which no run gives: not a saved run"), "\(gate.status) \(gate.stderr)")
        let other = try CommandLineTests.saved(saved.stdout, in: dir, as: "other.json")
        let nothing = try dualcam(["bench", "--cases", "inset-only-720p", "--frames", "3", "--baseline", other])
        #expect(nothing.status == 2 && nothing.stderr.contains("nothing was compared"), "\(nothing.status) \(nothing.stderr)")
        let empty = try dualcam(["bench", "--cases", ",", "--baseline", other])
        #expect(empty.status == 64 && empty.stderr.contains("--cases names no case"), "\(empty.stderr)")
    }

    /// Options in groups, the examples last, defaults in one form: "... (default: X)".
    @Test(.timeLimit(.minutes(1)))
    func helpHasGroupsExamplesLastAndOneFormOfDefaults() throws {
        let groups = ["compose": ["OUTPUT:", "ENCODING:", "LAYOUT:", "SOUND:", "MESSAGES:"],
                      "record": ["CAMERAS:", "SOUND:", "RECORDING:", "OUTPUT:", "ENCODING:", "LAYOUT:", "ALSO SEND TO:", "MESSAGES:"],
                      "relayout": ["OUTPUT:", "ENCODING:", "LAYOUT:", "SWAPS:"], "finish": [], "devices": [], "controls": []]
        for (command, titles) in groups {
            let r = try dualcam([command, "--help"])
            #expect(r.status == 0)
            let text = r.stdout
            for title in titles { #expect(text.contains("\n\(title)\n"), "\(command) --help lacks \(title)") }
            let examples = try #require(text.range(of: "\nEXAMPLES:\n"), "\(command) --help has no EXAMPLES")
            #expect(!text[examples.upperBound...].contains("OPTIONS:") && !text[examples.upperBound...].contains("USAGE:"),
                    "\(command): EXAMPLES are not last")
            #expect(text[examples.upperBound...].contains("    dualcam \(command == "relayout" ? "record" : command) "))
            // Defaults after the sentence, as the parser writes its own.
            #expect(text.range(of: #"\(default: [^)]*\)\."#, options: .regularExpression) == nil, "\(command): (default: ...).")
        }
        let compose = try dualcam(["compose", "--help"]).stdout
        #expect(!compose.contains("front camera") || compose.contains("FRONT, or the front camera"), "compose speaks of cameras")
        #expect(!compose.contains("relayout:"), "compose's help speaks of relayout")
    }

    @Test(.timeLimit(.minutes(1)))
    func benchListsItsCasesAndPrintsTheBudgetAsGiven() throws {
        let list = try dualcam(["bench", "--list-cases"])
        #expect(list.status == 0)
        for name in ["compose-1080p", "record-mjpeg-1080p", "pip-4k", "inset-only-480p", "kernels-4k", "kernels-swapped-720p"] {
            #expect(list.stdout.contains("\n\(name) "), "--list-cases lacks \(name)")
        }
        #expect(list.stdout.contains("kernels-4k                  named "), "\(list.stdout)")
        let tight = try dualcam(["bench", "--cases", "inset-only-480p", "--frames", "3", "--budget-ms", "0.01"])
        #expect(tight.status == 1 && tight.stdout.contains("budget 0.01 ms per frame (p99): EXCEEDED"), "\(tight.stdout)")
        let plain = try dualcam(["bench", "--cases", "inset-only-480p", "--frames", "3", "--budget-ms", "16"])
        #expect(plain.stdout.contains("budget 16 ms per frame"), "\(plain.stdout)")
    }

    /// The schemas' own examples (shown in the man pages) hold.
    @Test(.timeLimit(.minutes(1)))
    func theDocumentedExamplesMatchTheirSchemas() throws {
        let folder = Env.repoRoot.appendingPathComponent("Docs/json")
        let examples = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".example.json") }
        for kind in ["compose", "record", "devices", "controls", "bench", "doctor", "plan", "iso", "batch"] {
            let own = examples.filter { $0.hasPrefix(kind + ".") || $0.hasPrefix(kind + "-") }.map { folder.appendingPathComponent($0).path }
            #expect(!own.isEmpty, "no example for \(kind)")
            try Self.expectValid(kind, own)
        }
    }

    /// compose, relayout, record (with --iso, swapped), devices and the three kinds of bench
    /// output, as the programs print them; controls is checked in the VM, which has cameras.
    @Test(.timeLimit(.minutes(4)))
    func everyJSONOutputMatchesItsSchema() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let compose = try dualcam(["compose", Reference.back, Reference.front, "-o", dir.path("c.mov"), "--size", "640x360",
                                   "--swap-at", "1", "--swap-at", "99", "--json"])
        try #require(compose.status == 0, "\(compose.stderr)")
        let composed = try #require(try JSONSerialization.jsonObject(with: Data(compose.stdout.utf8)) as? [String: Any])
        #expect(composed["swaps"] as? [Double] == [1] && composed["codec"] as? String == "hevc"
                && composed["width"] as? Int == 640 && composed["rate"] as? Int == 30
                && composed["output"] as? String == dir.path("c.mov"), "\(compose.stdout)")
        let take = dir.path("t.mov")
        let record = try dualcam(["record", "--back", Reference.back, "--front", Reference.front, "--audio", "none", "--iso", "--swap",
                                  "--size", "640x360", "--codec", "h264", "--skip-speed-check", "--duration", "2", "-o", take, "--json"])
        try #require(record.status == 0, "\(record.stderr)")
        let recorded = try #require(try JSONSerialization.jsonObject(with: Data(record.stdout.utf8)) as? [String: Any])
        #expect(recorded["codec"] as? String == "h264" && recorded["height"] as? Int == 360 && recorded["swaps"] as? [Double] == [0],
                "\(record.stdout)")
        let relayout = try dualcam(["relayout", take, "-o", dir.path("r.mov"), "--layout", "side-by-side", "--size", "640x360",
                                    "--json"])
        try #require(relayout.status == 0, "\(relayout.stderr)")
        let devices = try dualcam(["devices", "--json"])
        #expect(devices.status == 0)
        // --skip-speed-check: no encoder is measured here, beside the tests that run alongside
        // (doctor's output is checked in RecordTests, which run one at a time).
        let dryRun = try dualcam(["record", "--back", Reference.back, "--front", Reference.front, "--dry-run", "--json",
                                  "--skip-speed-check", "-o", dir.path("never.mov")])
        #expect(dryRun.status == 0 && !FileManager.default.fileExists(atPath: dir.path("never.mov")), "\(dryRun.stderr)")
        let times = try dualcam(["bench", "--cases", "inset-only-480p,compose-1080p", "--frames", "5", "--json"])
        let mjpeg = try dualcam(["bench", "--mjpeg", "--frames", "3", "--json"])
        let counted = try dualcam(["bench", "--instructions", "--counter", "callgrind", "--cases", "inset-only-480p", "--frames", "2",
                                   "--json"])
        #expect(times.status == 0 && mjpeg.status == 0 && counted.status == 0, "\(times.stderr)\(mjpeg.stderr)\(counted.stderr)")
        try Self.expectValid("compose", [try Self.saved(compose.stdout, in: dir, as: "c.json"),
                                         try Self.saved(relayout.stdout, in: dir, as: "r.json")])
        try Self.expectValid("record", [try Self.saved(record.stdout, in: dir, as: "t.json")])
        try Self.expectValid("devices", [try Self.saved(devices.stdout, in: dir, as: "d.json")])
        try Self.expectValid("plan", [try Self.saved(dryRun.stdout, in: dir, as: "plan.json")])
        try Self.expectValid("bench", [try Self.saved(times.stdout, in: dir, as: "b1.json"),
                                       try Self.saved(mjpeg.stdout, in: dir, as: "b2.json"),
                                       try Self.saved(counted.stdout, in: dir, as: "b3.json")])
        for output in [compose, record, relayout, devices, dryRun, times, mjpeg, counted] {
            #expect(output.stdout.hasPrefix("{\"schema\": \"dualcam.") || output.stdout.hasPrefix("{\"schema\":\"dualcam."),
                    "\(output.stdout.prefix(80))")
            #expect(!output.stdout.contains("\\/"), "escaped slashes: \(output.stdout.prefix(200))")
        }
    }
}
