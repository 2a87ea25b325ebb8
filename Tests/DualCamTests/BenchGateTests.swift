import Foundation
import Testing

/// `dualcam bench --instructions` and its `--baseline` gate, end to end: counts from
/// callgrind, the same run to run, and a baseline a few per cent lower than today's count
/// failing the gate by name.
@Suite(.serialized)
struct BenchGateTests {
    static let arguments = ["bench", "--instructions", "--cases", "inset-only-480p", "--frames", "1"]

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
        try #require(first.status == 0, "\(first.stderr)")
        let instructions = try counts(first.stdout)
        #expect(instructions > 100_000, "an inset of 160x213 takes more than that: \(first.stdout)")
        let dir = try TempDir()

        // The same count: within the 1 % tolerance, whatever else the machine did meanwhile.
        let same = try dualcam(Self.arguments + ["--baseline", try baseline(dir, instructions: instructions)])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stderr.contains("within 1 % of"), "\(same.stderr)")

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

        let absurd = try dualcam(["bench", "--instructions", "--tolerance", "-3"])
        #expect(absurd.status != 0 && absurd.stderr.contains("--tolerance"), "\(absurd.stderr)")
    }
}
