import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The checks every command makes of OUT before it opens a camera, a file or an encoder, and
/// the container its name asks for.
public enum OutputPath {
    /// QuickTime for .mov, MP4 for .mp4: both carry HEVC as hvc1 (H.264 as avc1), AAC, the
    /// creation time, the location and the display matrix.
    public enum Container: String, CaseIterable, Sendable {
        case quickTime = "mov"
        case mp4 = "mp4"
        /// FFmpeg's muxer of that name.
        public var muxer: String { rawValue }
    }

    public static var extensionList: String { Container.allCases.map { "." + $0.rawValue }.joined(separator: " or ") }

    /// The container `path`'s extension names (any case); nil for any other name.
    public static func container(of path: String) -> Container? {
        Container(rawValue: PathName.pathExtension(path).lowercased())
    }

    /// What lstat finds at `path`, a link not followed (a dangling one is something there).
    public static func entry(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    /// OUT as a command about to write it must find it: a name with a known extension (not
    /// `-`), in a folder that exists; nothing there unless `overwrite` (a folder never), and
    /// not the file another dualcam is writing; not one of `inputs` (it would be replaced by
    /// what is made from it).
    public static func check(_ path: String, overwrite: Bool, inputs: [String] = []) throws(MediaError) {
        if let problem = nameProblem(path) { throw .cannotWrite(path: problem.shownPath, reason: problem.reason) }
        let folder = DurableFile.folder(of: path)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .cannotWrite(path: path, reason: "folder \(folder) does not exist")
        }
        // Before "exists": --overwrite would not help, so it must not be what the line suggests.
        try refuseInputs(path, inputs: inputs)
        if let st = entry(path) {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: path, reason: "is a directory") }
            guard overwrite else { throw .outputExists(path: path) }
            if (st.st_mode & S_IFMT) == S_IFREG, RecordingLock.isHeld(path) {
                throw .cannotWrite(path: path, reason: RecordingLock.heldReason)
            }
        }
    }

    /// What is wrong with OUT's name itself, whatever the disk holds but a folder by that name:
    /// what a command refuses before any work (`validate`), as a usage error.
    public static func nameProblem(_ path: String) -> (shownPath: String, reason: String)? {
        if path == "-" { return (path, "standard output is not written to: name a file (-o OUT.mov)") }
        guard !path.isEmpty else { return ("''", "the output needs a name (-o OUT.mov)") }
        if let st = entry(path), (st.st_mode & S_IFMT) == S_IFDIR { return (path, "is a directory") }
        guard container(of: path) != nil else { return (path, "the name must end in \(extensionList) (the container follows it)") }
        return nil
    }

    /// Refuses `path` when it is one of `inputs` (or a file their playlists name), under any
    /// name: writing it would replace what the output is made from.
    public static func refuseInputs(_ path: String, inputs: [String]) throws(MediaError) {
        for input in withFilesNamed(by: inputs) where isSameFile(input, path) {
            throw .cannotWrite(path: path, reason: "it is also an input (\(input)): the output would replace what it is made from")
        }
    }

    /// `inputs` and the files the HLS playlists among them name (segments, init sections,
    /// the playlists they name in turn, three deep): an output must be none of them.
    public static func withFilesNamed(by inputs: [String]) -> [String] {
        inputs + inputs.flatMap { filesNamed(byPlaylist: $0, depth: 3) }
    }

    static func filesNamed(byPlaylist path: String, depth: Int) -> [String] {
        var st = stat()
        // Only a regular file is opened to look: a named pipe's open would wait for a writer.
        guard depth > 0, stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
              let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        // A playlist is text that says so at its start; what is larger is no playlist of ours.
        guard let data = try? handle.read(upToCount: 4 << 20), data.starts(with: Array("#EXTM3U".utf8)) else { return [] }
        let folder = (path as NSString).deletingLastPathComponent
        var named: [String] = []
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("#") {
                // URI="..." attributes: EXT-X-MAP's init section, EXT-X-MEDIA's renditions.
                var rest = Substring(text)
                while let start = rest.range(of: "URI=\"") {
                    let value = rest[start.upperBound...]
                    guard let end = value.firstIndex(of: "\"") else { break }
                    named.append(String(value[..<end]))
                    rest = value[value.index(after: end)...]
                }
            } else if !text.isEmpty {
                named.append(text)
            }
        }
        let paths = named.map { name -> String in
            let file = name.hasPrefix("file:") ? String(name.dropFirst(5)) : name
            return file.hasPrefix("/") ? file : (folder.isEmpty ? file : folder + "/" + file)
        }
        // Only playlists in this one's folder are read in turn, as FFmpeg reads only those (a
        // name outside it, ../secret.m3u8, is refused when the input opens).
        let here = realFolder(of: path)
        return paths + paths.filter { ($0.hasSuffix(".m3u8") || $0.hasSuffix(".m3u")) && isInside($0, folder: here) }
            .flatMap { filesNamed(byPlaylist: $0, depth: depth - 1) }
    }

    /// The real path of the folder `path` is in (links resolved).
    static func realFolder(of path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        return realpath(folder.isEmpty ? "." : folder, nil).map { p in defer { free(p) }; return String(cString: p) }
    }

    /// Whether `path`, links resolved, is in `folder` or below it.
    static func isInside(_ path: String, folder: String?) -> Bool {
        guard let folder, let resolved = realpath(path, nil).map({ p in defer { free(p) }; return String(cString: p) })
        else { return false }
        return folder == "/" || resolved.hasPrefix(folder + "/")
    }

    /// Whether two names lead to one file, links followed: the same device and inode. (A name
    /// with nothing behind it is no input's.)
    public static func isSameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// Whether `name` (not followed if a link) is the file open at `fd`: a file written
    /// through its descriptor is still under the name it was given.
    public static func isFile(_ fd: Int32, at name: String) -> Bool {
        var mine = stat(), there = stat()
        return fstat(fd, &mine) == 0 && lstat(name, &there) == 0 && mine.st_dev == there.st_dev && mine.st_ino == there.st_ino
    }
}
