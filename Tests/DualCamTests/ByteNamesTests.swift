import Foundation
import MediaIO
import Testing

@Suite(.timeLimit(.minutes(1))) struct PathNameTests {
    @Test func partsAreTakenFromTheTextAsGiven() {
        #expect(PathName.folder(of: "take.mov") == "." && PathName.folder(of: "/take.mov") == "/")
        #expect(PathName.folder(of: "a/b//take.mov") == "a/b" && PathName.folder(of: "../x/") == "..")
        #expect(PathName.last("a/b/take.mov") == "take.mov" && PathName.last("take") == "take")
        #expect(PathName.pathExtension("a.b/take.MOV") == "MOV" && PathName.pathExtension("a.b/.hidden") == "")
        #expect(PathName.deletingExtension("dir/take.mov") == "dir/take" && PathName.deletingExtension("dir.d/take") == "dir.d/take")
        #expect(PathName.join(".", "x") == "x" && PathName.join("a", "x") == "a/x" && PathName.join("/", "x") == "/x")
    }
}

@Suite(.timeLimit(.minutes(1))) struct ByteFoldersTests {
    /// An argument through a folder named in Latin-1 reaches its file through the opened
    /// folder, and what is shown puts the folder back as given; a file's own name that is not
    /// UTF-8, or a folder that is not there, is the reason given.
    @Test func aFolderNamedInBytesIsReachedAndShownAsGiven() throws {
        let dir = try TempDir()
        let folder = Array(dir.url.path.utf8) + Array("/caf".utf8) + [0xE9]
        try #require((folder + [0]).withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { mkdir($0, 0o755) } } == 0)
        let given = folder + Array("/take.mov".utf8)
        let arguments = try ByteFolders.arguments([Array("compose".utf8), given, Array("--output=".utf8) + given]).get()
        #expect(arguments[0] == "compose" && arguments[1].hasPrefix("/proc/\(getpid())/fd/") && arguments[1].hasSuffix("/take.mov"))
        #expect(arguments[2].hasPrefix("--output=/proc/"), "\(arguments[2])")
        // `--stream @FILE` keeps its @; a folder itself (`doctor --folder`) is reached as one.
        let more = try ByteFolders.arguments([Array("@".utf8) + given, folder]).get()
        #expect(more[0].hasPrefix("@/proc/\(getpid())/fd/") && more[0].hasSuffix("/take.mov"), "\(more[0])")
        #expect(more[1].hasPrefix("/proc/\(getpid())/fd/") && !more[1].dropFirst(6).contains("/proc"), "\(more[1])")
        #expect(ByteFolders.shown(more[1]) == "\(dir.url.path)/caf\\xE9")
        try "made".write(toFile: arguments[1], atomically: false, encoding: .utf8)
        // Into the one folder there (a name from the String would have made "caf\u{FFFD}").
        #expect(dir.contents.count == 1 && (try? String(contentsOfFile: arguments[1], encoding: .utf8)) == "made")
        let shown = ByteFolders.shown("wrote \(arguments[1]): ok")
        #expect(shown == "wrote \(dir.url.path)/caf\\xE9/take.mov: ok", "\(shown)")
        let ownName = ByteFolders.arguments([Array("caf".utf8) + [0xE9] + Array(".mov".utf8)])
        #expect(ownName.failure?.description.contains("names a file whose own name is not UTF-8") == true)
        let missing = ByteFolders.arguments([given, folder + [0xFF] + Array("/x.mov".utf8)])
        #expect(missing.failure?.argument == 2 && missing.failure?.description.contains("caf\\xE9\\xFF cannot be opened") == true,
                "\(String(describing: missing.failure))")
    }

    /// Inside --json's strings the folder put back is escaped as JSON (its \\xE9 and control
    /// characters made every such output invalid JSON, raw ESC included).
    @Test func aFolderPutBackIntoJSONKeepsItValid() throws {
        let dir = try TempDir()
        let folder = Array(dir.url.path.utf8) + Array("/c".utf8) + [0xE9, 0x1B, 0x22]
        try #require((folder + [0]).withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { mkdir($0, 0o755) } } == 0)
        let reached = try ByteFolders.arguments([folder + Array("/x.mov".utf8)]).get()[0]
        let line = Secrets.masked("{\"output\":\"\(reached)\"}", insideJSON: true)
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
        #expect(parsed?["output"] == dir.url.path + "/c\\xE9\u{1B}\"/x.mov", "\(line)")
        #expect(!line.contains("\u{1B}"))
    }

    @Test func bytesThatAreNotUTF8AreShownAsEscapes() {
        #expect(ByteFolders.escaped(Array("café".utf8)) == "café")
        #expect(ByteFolders.escaped([0x61, 0xE9, 0x62, 0xC3]) == "a\\xE9b\\xC3")
        #expect(ByteFolders.escaped([0xF0, 0x9F, 0x8E, 0xA5, 0x80]) == "🎥\\x80")
    }
}

private extension Result {
    var failure: Failure? { if case let .failure(f) = self { f } else { nil } }
}

extension RecordTests {
    /// In a folder whose name is not UTF-8 (Latin-1 "café"), with names relative to it, every
    /// command works: compose, record --iso, relayout, finish of a killed take (each said
    /// "folder ... does not exist": the folder's name went through a String and came back
    /// altered).
    @Test(.timeLimit(.minutes(2)))
    func everyCommandWorksInAFolderWhoseNameIsNotUTF8() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        // Made and entered by the shell from its bytes: Swift's String cannot hold the name.
        let inFolder = "cd \"$(printf 'caf\\351')\" && "
        func shell(_ script: String, whileRunning: ((Process, ChildOutput) -> Void)? = nil) throws -> RunResult {
            try run("/bin/sh", ["-c", "cd \"$1\" && " + script, "sh", dir.url.path, Env.dualcam, Reference.back, Reference.front],
                    whileRunning: whileRunning)
        }
        let made = try shell("mkdir \"$(printf 'caf\\351')\" && " + inFolder + "cp \"$3\" back.mp4 && cp \"$4\" front.mkv")
        try #require(made.status == 0, "\(made.stderr)")
        // The take to finish, killed a second into it (exec: the kill reaches dualcam, not the shell).
        let killed = try shell(inFolder + "exec \"$2\" record --back back.mp4 --duration 3 --audio none --size 320x180 "
                               + "--skip-speed-check -o k.mov") { p, said in
            said.waitForTake(of: 1)
            kill(p.processIdentifier, SIGKILL)
        }
        #expect(killed.status == SIGKILL && !killed.stderr.contains("does not exist"), "\(killed.status) \(killed.stderr)")
        let steps = [
            "\"$2\" compose back.mp4 front.mkv -o c.mov --size 320x180",
            "\"$2\" record --back back.mp4 --front front.mkv --iso --duration 1 --audio back --size 320x180 --skip-speed-check -o r.mov",
            "\"$2\" relayout r.mov -o rl.mov --size 320x180",
            "\"$2\" finish k.mov",
        ]
        for step in steps {
            let r = try shell(inFolder + step)
            #expect(r.status == 0 && !r.stderr.contains("does not exist"), "\(step): \(r.status) \(r.stderr)")
        }
        let listed = try shell(inFolder + "ls")
        #expect(Set(listed.stdout.split(separator: "\n")) == ["back.mp4", "front.mkv", "c.mov", "r.mov", "r.back.mov", "r.front.mov",
                                                              "r.dualcam.json", "rl.mov", "k.mov"], "\(listed.stdout)")
        for file in ["c.mov", "r.mov", "rl.mov", "k.mov"] {
            let probed = try shell(inFolder + "ffprobe -v error -show_entries stream=codec_name -of csv=p=0 " + file)
            #expect(probed.status == 0 && probed.stdout.contains("hevc"), "\(file): \(probed.stderr)")
        }
    }

    /// The same commands given names through that folder from elsewhere (each argument was
    /// refused: Swift's strings had turned its bytes into U+FFFD), and what they say names the
    /// folder as given (\xE9), never the descriptor it is reached through.
    @Test(.timeLimit(.minutes(2)))
    func everyCommandTakesNamesThroughAFolderWhoseNameIsNotUTF8() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        func shell(_ script: String, whileRunning: ((Process, ChildOutput) -> Void)? = nil) throws -> RunResult {
            try run("/bin/sh", ["-c", "D=\"$1/$(printf 'caf\\351')\"; cd / && " + script, "sh", dir.url.path, Env.dualcam,
                                Reference.back, Reference.front], whileRunning: whileRunning)
        }
        let made = try shell("mkdir \"$D\" && cp \"$3\" \"$D/back.mp4\" && cp \"$4\" \"$D/front.mkv\"")
        try #require(made.status == 0, "\(made.stderr)")
        let shownFolder = dir.url.path + "/caf\\xE9/"
        // The take to finish, killed a second into it (exec: the kill reaches dualcam, not the shell).
        let killed = try shell("exec \"$2\" record --back \"$D/back.mp4\" --duration 3 --audio none --size 320x180 --skip-speed-check "
                               + "-o \"$D/k.mov\"") { p, said in
            said.waitForTake(of: 1)
            kill(p.processIdentifier, SIGKILL)
        }
        #expect(killed.status == SIGKILL && killed.stderr.contains(shownFolder) && !killed.stderr.contains("/proc/"),
                "\(killed.status) \(killed.stderr)")
        let steps = [
            "\"$2\" compose \"$D/back.mp4\" \"$D/front.mkv\" --output=\"$D/c.mov\" --size 320x180",
            "\"$2\" record --back \"$D/back.mp4\" --front \"$D/front.mkv\" --iso --duration 1 --audio back --size 320x180 "
                + "--skip-speed-check -o \"$D/r.mov\"",
            "\"$2\" relayout \"$D/r.mov\" -o \"$D/rl.mov\" --size 320x180",
            "\"$2\" finish \"$D/k.mov\"",
        ]
        for step in steps {
            let r = try shell(step)
            #expect(r.status == 0 && r.stdout.contains(shownFolder) && !(r.stdout + r.stderr).contains("/proc/"),
                    "\(step): \(r.status) \(r.stdout) \(r.stderr)")
        }
        let listed = try shell("ls \"$D\"")
        #expect(Set(listed.stdout.split(separator: "\n")) == ["back.mp4", "front.mkv", "c.mov", "r.mov", "r.back.mov", "r.front.mov",
                                                              "r.dualcam.json", "rl.mov", "k.mov"], "\(listed.stdout)")
        let again = try shell("\"$2\" compose \"$D/back.mp4\" \"$D/front.mkv\" -o \"$D/c.mov\"")
        #expect(again.status == 1 && again.stderr == "dualcam: \(shownFolder)c.mov: already exists (use --overwrite to replace it)\n",
                "\(again.stderr)")
        let ownName = try shell("\"$2\" compose \"$D/back.mp4\" \"$D/front.mkv\" -o \"$D/$(printf '\\351').mov\"")
        #expect(ownName.status == 64 && ownName.stderr.split(separator: "\n").count == 1
                && ownName.stderr.contains("names a file whose own name is not UTF-8"), "\(ownName.stderr)")
    }
}
