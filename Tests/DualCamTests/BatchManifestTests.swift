import Foundation
@testable import Pipeline
import Testing

/// A batch's manifest, read and checked whole before anything runs: CSV (quotes, comments,
/// blank lines) and JSON Lines, each problem on a line of its own with where it is.
@Suite(.timeLimit(.minutes(1))) struct BatchManifestTests {
    static func manifest(_ name: String, _ text: String, files: [String] = ["a.mp4", "b.mkv"]) throws -> (TempDir, String) {
        let dir = try TempDir()
        for file in files { _ = FileManager.default.createFile(atPath: dir.path(file), contents: Data("x".utf8)) }
        try text.write(toFile: dir.path(name), atomically: true, encoding: .utf8)
        return (dir, dir.path(name))
    }

    @Test func csvWithQuotesCommentsAndDefaults() throws {
        let (dir, path) = try Self.manifest("m.csv", """
            back,front,output,size,swap_at,shadow,corner
            # a talk without its slides yet
            a.mp4,b.mkv,"out, first.mov",640x360,"5 9.5",no,
            \r
            a.mp4,b.mkv,second.mov,,,true,bottom-left

            """)
        let read = try BatchManifest.read(path).get()
        #expect(read.rows.count == 2)
        let first = read.rows[0], second = read.rows[1]
        #expect(first.output == dir.path("out, first.mov") && first.back == dir.path("a.mp4") && first.index == 0)
        let defaults = try BatchManifest.defaults(from: ["--size", "1280x720", "--corner=top-left", "--crf", "20"]).get()
        #expect(first.composeArguments(defaults: defaults) == [dir.path("a.mp4"), dir.path("b.mkv"), "-o", dir.path("out, first.mov"),
                                                               "--size", "640x360", "--crf", "20", "--corner", "top-left", "--no-shadow",
                                                               "--swap-at", "5", "--swap-at", "9.5"])
        #expect(second.composeArguments(defaults: defaults).suffix(7) == ["--size", "1280x720", "--crf", "20", "--corner", "bottom-left", "--shadow"])
        #expect(first.digest(defaults: defaults) != first.digest(defaults: [:]), "the options are part of what a row is made from")
        #expect(first.digest(defaults: defaults) == first.digest(defaults: defaults))
    }

    @Test func jsonLinesWithNumbersListsAndBooleans() throws {
        let (dir, path) = try Self.manifest("m.jsonl", """
            {"back": "a.mp4", "front": "b.mkv", "output": "x.mov", "crf": 18, "swap_at": [3, 7.5], "shadow": false}

            {"back": "a.mp4", "front": "b.mkv", "output": "y.mp4", "layout": "side-by-side"}
            """)
        let rows = try BatchManifest.read(path).get().rows
        #expect(rows.count == 2 && rows[1].index == 1)
        #expect(rows[0].composeArguments(defaults: [:]) == [dir.path("a.mp4"), dir.path("b.mkv"), "-o", dir.path("x.mov"), "--crf", "18",
                                                            "--no-shadow", "--swap-at", "3", "--swap-at", "7.5"])
        #expect(rows[1].settings == ["layout": "side-by-side"])
    }

    /// Every problem of every row at once, each with the manifest's line and the row.
    @Test func everyProblemIsALineOfItsOwn() throws {
        let (dir, path) = try Self.manifest("m.csv", """
            back,front,output,colour,shadow
            a.mp4,missing.mp4,one.mov,,maybe
            a.mp4,b.mkv,one.mov,,
            one.mov,b.mkv,three.mov,,
            """)
        guard case let .failure(problems) = BatchManifest.read(path) else { Issue.record("accepted"); return }
        let lines = problems.lines
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("m.csv:2: unknown column colour (back, front, output, or one of compose's options: size, rate, "
                                                + "rotate, location, codec, encoder, preset, crf, bitrate, audio-bitrate, layout, inset, corner, "
                                                + "margin, corner-radius, border, audio, shadow, swap-at)") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("m.csv:2: row 0: shadow must be true or false; got maybe") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("m.csv:2: row 0: front missing.mp4: no such file") }, "\(lines)")
        // An unknown column is said once, for the manifest, not for each row.
        withExtendedLifetime(dir) {}
        #expect(lines.contains { $0.hasSuffix("m.csv:4: row 2: back one.mov: no such file") }, "\(lines)")
    }

    @Test func twoRowsWritingOneFileOrOneReadingAnothersOutput() throws {
        let (dir, path) = try Self.manifest("m.csv", """
            back,front,output
            a.mp4,b.mkv,one.mov
            a.mp4,b.mkv,./one.mov
            a.mp4,b.mkv,two.mov
            """, files: ["a.mp4", "b.mkv", "two.mov"])
        try "back,front,output\na.mp4,b.mkv,one.mov\ntwo.mov,b.mkv,three.mov\na.mp4,b.mkv,two.mov\n"
            .write(toFile: dir.path("n.csv"), atomically: true, encoding: .utf8)
        guard case let .failure(twice) = BatchManifest.read(path), case let .failure(chained) = BatchManifest.read(dir.path("n.csv"))
        else { Issue.record("accepted"); return }
        #expect(twice.lines.count == 1 && twice.lines[0].hasPrefix("\(path):3: row 1: output ")
                && twice.lines[0].hasSuffix("one.mov is row 0's output too"), "\(twice.lines)")
        #expect(chained.lines == ["\(dir.path("n.csv")):3: row 1: \(dir.path("two.mov")) is the output of row 2"], "\(chained.lines)")
    }

    @Test func malformedManifests() throws {
        for (name, text, says) in [
            ("h.csv", "back,front,output,back\na,b,c,d\n", "column back is named twice in the header"),
            ("f.csv", "back,front,output\na.mp4,b.mkv\n", "line 2 has 2 fields, the header 3"),
            ("q.csv", "back,front,output\n\"a.mp4,b.mkv,c.mov\n", "a quoted field opened on line 2 is never closed"),
            ("e.csv", "back,front,output\n", "no rows"),
            ("j.jsonl", "{\"back\": \"a.mp4\"}\n[1, 2]\n", "line 2 is not a JSON object"),
        ] {
            let (dir, path) = try Self.manifest(name, text)
            guard case let .failure(problems) = withExtendedLifetime(dir, { BatchManifest.read(path) }) else {
                Issue.record("\(name) accepted")
                continue
            }
            #expect(problems.lines.count == 1 && problems.lines[0].hasSuffix(says), "\(name): \(problems.lines)")
        }
        #expect(throws: (any Error).self) { try BatchManifest.defaults(from: ["--json"]).get() }
        #expect(throws: (any Error).self) { try BatchManifest.defaults(from: ["--output", "x.mov"]).get() }
        #expect(try BatchManifest.defaults(from: ["--swap-at", "1", "--swap-at", "4", "--no-shadow"]).get() == ["swap-at": "1 4", "shadow": "false"])
    }
}
