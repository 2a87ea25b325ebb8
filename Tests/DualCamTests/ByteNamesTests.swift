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
        func shell(_ script: String) throws -> RunResult {
            try run("/bin/sh", ["-c", "cd \"$1\" && " + script, "sh", dir.url.path, Env.dualcam, Reference.back, Reference.front])
        }
        let made = try shell("mkdir \"$(printf 'caf\\351')\" && " + inFolder + "cp \"$3\" back.mp4 && cp \"$4\" front.mkv")
        try #require(made.status == 0, "\(made.stderr)")
        let steps = [
            "\"$2\" compose back.mp4 front.mkv -o c.mov --size 320x180",
            "\"$2\" record --back back.mp4 --front front.mkv --iso --duration 1 --audio back --size 320x180 --skip-speed-check -o r.mov",
            "\"$2\" relayout r.mov -o rl.mov --size 320x180",
            "{ \"$2\" record --back back.mp4 --duration 3 --audio none --size 320x180 --skip-speed-check -o k.mov & p=$!; sleep 1.5; "
                + "kill -9 $p; wait $p; \"$2\" finish k.mov; }",
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
}
