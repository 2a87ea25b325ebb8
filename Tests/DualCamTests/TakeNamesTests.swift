import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// Default names: each record started without -o takes a name of its own, held from the
/// moment it is chosen (three records started in one second chose one name, and two were
/// refused as if another dualcam wrote it).
@Suite(.timeLimit(.minutes(1))) struct TakeNamesTests {
    @Test func aChosenNameIsHeldUntilItsClaimTakesIt() throws {
        let dir = try TempDir()
        let stem = dir.path("dualcam-20261128-101010")
        let first = TakeNames.free(stem: stem), second = TakeNames.free(stem: stem)
        #expect(first == stem + ".mov" && second == stem + "-2.mov", "\(first), \(second)")
        // A name whose intermediate is there belongs to a take: passed over.
        try Data().write(to: URL(fileURLWithPath: stem + "-3.mov.intermediate.mov"))
        #expect(TakeNames.free(stem: stem) == stem + "-4.mov")
        // Held against other claims, handed to this process's own.
        #expect(OutputClaim.isNameHeld(first))
        let claim = try OutputClaim(path: first, overwrite: false)
        #expect(throws: MediaError.self) { _ = try OutputClaim(path: first, overwrite: false) }
        withExtendedLifetime(claim) {}
    }
}

extension RecordTests {
    /// Three records started together in one folder, none given -o: three takes.
    @Test(.timeLimit(.minutes(2)))
    func recordsStartedTogetherTakeANameEach() throws {
        let dir = try TempDir()
        let processes = try (0..<3).map { _ in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Env.dualcam)
            // The speed check left in: it lies between choosing the name and claiming it, the
            // window in which the three chose one.
            p.arguments = ["record", "--back", Reference.back, "--duration", "1", "--audio", "none", "--size", "320x180", "--quiet"]
            p.currentDirectoryURL = dir.url
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            p.standardInput = FileHandle.nullDevice
            try p.run()
            return (p, ChildWatchdog(p))
        }
        for (p, watchdog) in processes {
            p.waitUntilExit()
            watchdog.disarm()
            #expect(p.terminationStatus == 0, "a record exited \(p.terminationStatus)\(watchdog.verdict("dualcam"))")
        }
        let takes = dir.contents.filter { $0.hasPrefix("dualcam-") && $0.hasSuffix(".mov") }
        #expect(takes.count == 3 && Set(dir.contents) == Set(takes), "\(dir.contents)")
    }
}
