@testable import Benchmarking
import Foundation
import Testing

/// `dualcam bench --instructions` and its `--baseline` gate, end to end: counts from
/// callgrind, the same run to run, and a baseline a few per cent lower than today's count
/// failing the gate by name.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct BenchGateTests {
    static let arguments = ["bench", "--instructions", "--cases", "inset-only-480p", "--frames", "1"]

    /// The whole of valgrind's output for each failed run that stderr names, so that a CI
    /// log shows what a clean clone's machine said, not only the line picked from it.
    static func valgrindLogs(named stderr: String) -> String {
        stderr.components(separatedBy: "(valgrind's output: ").dropFirst().compactMap { rest in
            rest.split(separator: ")").first.flatMap { try? String(contentsOfFile: String($0), encoding: .utf8) }
        }.joined(separator: "\n")
    }

    func counts(_ json: String) throws -> Double {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let cases = try #require(object["cases"] as? [[String: Any]])
        return try #require(cases.first?["instructions_per_frame"] as? Double)
    }

    func baseline(_ dir: TempDir, instructions: Double) throws -> String {
        let path = dir.path("baseline.json")
        try Data("""
            {"counter": "callgrind", "cases": [{"name": "inset-only-480p", "frames": 1, "instructions_per_frame": \(UInt64(instructions))}]}
            """.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(.timeLimit(.minutes(3)))
    func theGateFailsACaseOverItsBaselineAndPassesTheSameCount() throws {
        guard Env.canRun(Env.tool("valgrind") != nil, otherwise: "valgrind is not installed: run Scripts/setup.sh") else { return }
        let first = try dualcam(Self.arguments + ["--json"])
        try #require(first.status == 0, "\(first.stderr)\(Self.valgrindLogs(named: first.stderr))")
        let instructions = try counts(first.stdout)
        #expect(instructions > 100_000, "an inset of 160x213 takes more than that: \(first.stdout)")
        let dir = try TempDir()

        // The same count: within the 1 % tolerance, whatever else the machine did meanwhile.
        let same = try dualcam(Self.arguments + ["--baseline", try baseline(dir, instructions: instructions)])
        #expect(same.status == 0, "\(same.stderr)\(Self.valgrindLogs(named: same.stderr))")
        #expect(same.stderr.contains("none more than 1 % over"), "\(same.stderr)")
        #expect(!same.stderr.contains("improved"), "\(same.stderr)")

        // Today's code 3 % under a baseline: it passes, and says to save a new baseline.
        let higher = try dualcam(Self.arguments + ["--baseline", try baseline(dir, instructions: instructions * 1.03)])
        #expect(higher.status == 0, "\(higher.stderr)")
        #expect(higher.stderrLines.contains { $0.hasPrefix("bench: improved inset-only-480p instructions_per_frame") && $0.contains("save a new baseline") },
                "\(higher.stderr)")

        // Today's code 3 % over a baseline: a regression, named.
        let lower = try dualcam(Self.arguments + ["--baseline", try baseline(dir, instructions: instructions / 1.03)])
        #expect(lower.status == 1, "\(lower.stderr)")
        #expect(lower.stderrLines.contains { $0.hasPrefix("bench: REGRESSED inset-only-480p instructions_per_frame") },
                "\(lower.stderr)")

        // A wider tolerance lets it through.
        let tolerant = try dualcam(Self.arguments + ["--baseline", try baseline(dir, instructions: instructions / 1.03),
                                                     "--tolerance", "5"])
        #expect(tolerant.status == 0, "\(tolerant.stderr)")
    }

    /// Why a counted run failed, from valgrind's real output (3.19, captured here): the line
    /// that says it, not the empty one valgrind ends with (all stop 28's CI showed).
    @Test(.timeLimit(.minutes(1)))
    func aFailedCountedRunSaysWhy() {
        let banner = """
            ==4253== Callgrind, a call-graph generating cache profiler
            ==4253== Copyright (C) 2002-2017, and GNU GPL'd, by Josef Weidendorfer et al.
            ==4253== Using Valgrind-3.19.0 and LibVEX; rerun with -h for copyright info
            ==4253== Command: dualcam bench --counted --frames 1
            ==4253== \n==4253== For interactive control, run 'callgrind_control -h'.
            ==4253== \n
            """
        let summary = "==4253== \n==4253== Events    : Ir\n==4253== Collected : 0\n==4253== \n==4253== I   refs:      0\n"
        let loader = banner + "dualcam: error while loading shared libraries: libicudata.so.72: failed to map segment\n" + summary
        #expect(InstructionCount.cause(in: loader) == "dualcam: error while loading shared libraries: libicudata.so.72: failed to map segment")
        let memory = banner + """
            ==1737== \n==1737==     Valgrind's memory management: out of memory:
            ==1737==        newSuperblock's request for 4194304 bytes failed.
            ==1737==          112,021,504 bytes have already been mmap-ed ANONYMOUS.
            ==1737==     Valgrind cannot continue.  Sorry.
            ==1737== \n==1737==     Whatever the reason, Valgrind cannot continue.  Sorry.\n
            """
        #expect(InstructionCount.cause(in: memory)
                == "Valgrind's memory management: out of memory: newSuperblock's request for 4194304 bytes failed.")
        let dump = banner + "==3788== Error: can not open cache simulation output file `/tmp/gone/counts'\n"
        #expect(InstructionCount.cause(in: dump) == "Error: can not open cache simulation output file `/tmp/gone/counts'")
        #expect(InstructionCount.cause(in: banner) == "valgrind said nothing after starting it")
        // What two CI runs got from the ThreadSanitizer build (the program's own last line
        // would have been a "### unhandled dwarf2" one).
        let sanitized = banner + """
            ### unhandled dwarf2 abbrev form code 0x25
            ### unhandled dwarf2 abbrev form code 0x23
            ==30826== Valgrind: debuginfo reader: ensure_valid failed:
            ==30826== Valgrind:   during call to ML_(img_get)
            ==30826== Valgrind:   request for range [25522848, +4) exceeds
            ==30826== Valgrind:   valid image size of 18950368 for image:
            ==30826== Valgrind:   "/tmp/ciclone/.build-thread/x86_64-unknown-linux-gnu/debug/dualcam"
            ==30826== \n==30826== Valgrind: debuginfo reader: Possibly corrupted debuginfo file.
            ==30826== Valgrind: I can't recover.  Giving up.  Sorry.
            ==30826== \n
            """
        #expect(InstructionCount.cause(in: sanitized) == "valgrind cannot read this build's debug information "
                + "(Valgrind: debuginfo reader: Possibly corrupted debuginfo file.): count a plain debug or release build "
                + "(valgrind cannot run one made with a sanitizer)")
        let failure = InstructionCount.Failure.failed(ending: "was killed by signal 9", stderr: banner, log: "/tmp/x.log")
        #expect(failure.description == "the counted run was killed by signal 9: valgrind said nothing after starting it "
                + "(valgrind's output: /tmp/x.log)")
    }

    /// The CPU's counter where this machine has one: a count of the same order as
    /// callgrind's; where it has none (these development machines, CI's), one line that
    /// says so and what to use instead. A baseline is only compared with its own counter.
    @Test(.timeLimit(.minutes(2)))
    func theCPUsCounterCountsOrSaysWhyNot() throws {
        let perf = try dualcam(["bench", "--instructions", "--counter", "perf", "--cases", "inset-only-480p", "--frames", "2", "--json"])
        do {
            _ = try PerfInstructions()
            #expect(perf.status == 0, "\(perf.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(perf.stdout.utf8)) as? [String: Any])
            #expect(object["counter"] as? String == "perf")
            #expect(try counts(perf.stdout) > 100_000, "\(perf.stdout)")
        } catch let unavailable as PerfInstructions.Unavailable {
            #expect(perf.status == 2, "\(perf.stdout)\(perf.stderr)")
            #expect(perf.stderrLines.count == 1 && perf.stderr.contains("perf_event_open")
                    && perf.stderr.contains("--counter callgrind"), "\(perf.stderr)")
            #expect(perf.stderr.contains(String(cString: strerror(unavailable.errno))), "\(perf.stderr)")
        }

        let dir = try TempDir()
        let perfBaseline = dir.path("perf.json")
        try Data(#"{"counter": "perf", "cases": [{"name": "inset-only-480p", "frames": 1, "instructions_per_frame": 5}]}"#.utf8)
            .write(to: URL(fileURLWithPath: perfBaseline))
        let mixed = try dualcam(Self.arguments + ["--counter", "callgrind", "--baseline", perfBaseline])
        #expect(mixed.status == 2)
        #expect(mixed.stderrLines.count == 1 && mixed.stderr.contains("compare like with like (--counter perf)"), "\(mixed.stderr)")

        let timed = try dualcam(["bench", "--counter", "perf"])
        #expect(timed.status != 0 && timed.stderr.contains("--counter chooses what --instructions counts with"), "\(timed.stderr)")
    }

    /// The perf counter's zero, resume, pause and record, checked on the counter every
    /// machine here has (the thread's CPU time) since none has the instruction one: each
    /// `prepare` does three times the work of each `frame`, and the two totals say so.
    @Test(.timeLimit(.minutes(1)))
    func thePerfCounterCountsOnlyWhatItIsResumedFor() throws {
        let clock = try PerfInstructions.cpuTime()
        func work(_ rounds: Int) {
            var x: UInt64 = 1
            for i in 0..<rounds * 2_000_000 { x = x &* 6364136223846793005 &+ UInt64(i) }
            #expect(x != 0)
        }
        try InstructionCount.count(name: "work", frames: 4, warmup: 1, with: clock, prepare: { _ in work(3) },
                                   frame: { _ in work(1) }, countsPrepare: true)
        let frames = try #require(clock.totals["work"])
        let prepares = try #require(clock.totals["work" + InstructionCount.otherSuffix])
        let ratio = Double(prepares) / Double(frames)
        #expect(frames > 1_000_000 && ratio > 2 && ratio < 4.5, "frames \(frames) ns, prepares \(prepares) ns")
    }

    @Test(.timeLimit(.minutes(1)))
    func aBaselineOfTheOtherKindOrNoneIsOneLine() throws {
        let dir = try TempDir()
        let times = dir.path("times.json")
        try Data(#"{"cases": [{"name": "inset-only-480p", "p50_ms": 0.2}], "budget_ms": 16}"#.utf8).write(to: URL(fileURLWithPath: times))
        let mixed = try dualcam(Self.arguments + ["--baseline", times])
        #expect(mixed.status == 2)
        #expect(mixed.stderrLines.count == 1 && mixed.stderr.contains("holds times"), "\(mixed.stderr)")

        let garbage = dir.path("garbage.json")
        try Data("not json".utf8).write(to: URL(fileURLWithPath: garbage))
        let bad = try dualcam(Self.arguments + ["--baseline", garbage])
        #expect(bad.status == 2)
        #expect(bad.stderrLines.count == 1 && bad.stderr.contains("not a saved `dualcam bench --json` run"), "\(bad.stderr)")

        // A baseline not saved yet says so, and how to save one.
        let missing = try dualcam(Self.arguments + ["--baseline", dir.path("none.json")])
        #expect(missing.status == 2)
        #expect(missing.stderrLines.count == 1 && missing.stderr.contains("none.json: No such file or directory (save one first: "),
                "\(missing.stderr)")

        let absurd = try dualcam(["bench", "--instructions", "--tolerance", "-3"])
        #expect(absurd.status != 0 && absurd.stderr.contains("--tolerance"), "\(absurd.stderr)")
    }

    /// `--allocations`: the harness preloads its counter from beside itself and holds each case
    /// to its rule. compose's path wraps each decoded picture in one small AVFrame on purpose
    /// (package-benchmark's PathBenchmarks count the same: 1 per frame), and nothing frame-sized;
    /// the inset kernels allocate nothing. Without the counter beside it: one line, exit 2.
    @Test(.timeLimit(.minutes(2)))
    func theAllocationGateCountsEachCaseUnderItsRule() throws {
        let r = try dualcam(["bench", "--allocations", "--cases", "compose-1080p,inset-only-480p", "--frames", "12"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        func row(_ name: String) -> [Substring] {
            r.stdout.split(separator: "\n").first { $0.hasPrefix(name + " ") }?.split(separator: " ") ?? []
        }
        #expect(row("compose-1080p").prefix(3) == ["compose-1080p", "12", "0"], "\(r.stdout)")
        #expect(row("compose-1080p").suffix(3).joined(separator: " ") == "no frame-sized allocation", "\(r.stdout)")
        #expect(row("inset-only-480p") == ["inset-only-480p", "0", "0", "no", "allocation"], "\(r.stdout)")
        #expect(r.stdout.contains("every rule held"))

        let dir = try TempDir()
        let alone = dir.path("dualcam-bench")
        try FileManager.default.copyItem(atPath: Env.built("dualcam-bench"), toPath: alone)
        let missing = try run(alone, ["--allocations", "--cases", "inset-only-480p"])
        #expect(missing.status == 2)
        #expect(missing.stderrLines.count == 1 && missing.stderr.contains("there is none beside"), "\(missing.stderr)")
    }
}
