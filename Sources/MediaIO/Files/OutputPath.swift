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
        Container(rawValue: URL(fileURLWithPath: path).pathExtension.lowercased())
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
        if path == "-" {
            throw .cannotWrite(path: path, reason: "standard output is not written to: name a file (-o OUT.mov)")
        }
        guard !path.isEmpty else { throw .cannotWrite(path: "''", reason: "the output needs a name (-o OUT.mov)") }
        if let st = entry(path), (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: path, reason: "is a directory") }
        guard container(of: path) != nil else {
            throw .cannotWrite(path: path, reason: "the name must end in \(extensionList) (the container follows it)")
        }
        let folder = DurableFile.folder(of: path)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .cannotWrite(path: path, reason: "folder \(folder) does not exist")
        }
        if let st = entry(path) {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: path, reason: "is a directory") }
            guard overwrite else { throw .outputExists(path: path) }
            if (st.st_mode & S_IFMT) == S_IFREG, RecordingLock.isHeld(path) {
                throw .cannotWrite(path: path, reason: RecordingLock.heldReason)
            }
        }
        for input in inputs where isSameFile(input, path) {
            throw .cannotWrite(path: path, reason: "it is also an input (\(input)): the output would replace what it is made from")
        }
    }

    /// Whether two names lead to one file, links followed: the same device and inode. (A name
    /// with nothing behind it is no input's.)
    public static func isSameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }
}
