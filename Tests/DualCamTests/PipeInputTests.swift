import Foundation
import Testing

/// A video piped in with no name (/dev/stdin, a shell's <(...)): refused in plain words (it
/// was "No such file or directory"), and standard input full of video is not read as key
/// commands (each of its lines was printed back as "ignored '...'").
@Suite(.timeLimit(.minutes(1))) struct PipeInputTests {
    @Test func aPipeWithNoNameIsRefusedAndItsDataIsNotTakenForCommands() throws {
        let dir = try TempDir()
        let r = try run("/bin/sh", ["-c", "cat \"$1\" | \"$2\" record --back /dev/stdin --duration 1 --skip-speed-check --audio none "
                                    + "-o \"$3\"", "sh", Reference.back, Env.dualcam, dir.path("p.mov")])
        #expect(r.status == 1 && r.stderrLines.last?.contains("it is a pipe with no name (/dev/stdin, <(...)): give a file, or a "
                                                               + "named pipe (mkfifo)") == true, "\(r.stderr)")
        #expect(!r.stderr.contains("ignored") && r.stderrLines.count <= 2, "\(r.stderr)")
        #expect(dir.contents.isEmpty)
    }
}
