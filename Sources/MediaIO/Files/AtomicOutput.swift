import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file that appears at its destination complete or not at all: everything is written
/// to a hidden temporary file beside it (same file system, so the final rename is atomic)
/// which is removed unless `commit()` renames it into place.
public final class AtomicOutput {
    public let destination: String
    public let temporaryPath: String
    private let overwrite: Bool
    private var committed = false
    /// Holds a lock on the temporary file while this run owns it: a later run removes the
    /// ones nobody holds (left by a kill) instead of leaving them beside OUT for ever.
    private var lockFD: Int32 = -1
    /// The temporary file, open for reading and writing: write through it, not by name.
    public var descriptor: Int32 { lockFD }

    public init(destination: String, overwrite: Bool) throws(MediaError) {
        self.destination = destination
        self.overwrite = overwrite
        var st = stat()
        if stat(destination, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: destination, reason: "is a directory") }
            if !overwrite { throw .outputExists(path: destination) }
        }
        let url = URL(fileURLWithPath: destination)
        let dir = url.deletingLastPathComponent().path
        let suffix = ".dualcam-tmp"
        Self.removeAbandoned(in: dir, prefix: ".\(url.lastPathComponent).", suffix: suffix)
        var template = Array("\(dir)/.\(url.lastPathComponent).XXXXXX\(suffix)".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(suffix.utf8.count)) }
        guard fd >= 0 else {
            let failure = Errno.current
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) || !isDir.boolValue {
                throw .cannotWrite(path: destination, reason: "folder \(dir) does not exist")
            }
            throw .system(path: destination, writing: true, errno: failure)
        }
        // mkstemps makes the file private (0600); the result should get the usual mode.
        let mask = umask(0)
        umask(mask)
        fchmod(fd, 0o666 & ~mask)
        _ = RecordingLock.take(fd)
        lockFD = fd
        temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit {
        discard()
        if lockFD >= 0 { Glibc.close(lockFD) }
    }

    public func discard() {
        if !committed { unlink(temporaryPath) }
    }

    /// Temporary files of this name that no run holds: left by a kill, removed.
    static func removeAbandoned(in dir: String, prefix: String, suffix: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        where name.hasPrefix(prefix) && name.hasSuffix(suffix) && name.count == prefix.count + 6 + suffix.count {
            let path = dir + "/" + name
            if !RecordingLock.isHeld(path) { unlink(path) }
        }
    }

    public func commit() throws(MediaError) {
        if !overwrite {
            // Refuse to clobber a file that appeared while we were writing.
            var st = stat()
            if stat(destination, &st) == 0 { throw .outputExists(path: destination) }
        }
        // On disk before it takes OUT's name, and the name on disk after: a power cut then
        // leaves the old file or the new one, never an empty one.
        do {
            if lockFD >= 0 { _ = try systemCall { fsync(lockFD) } }
            _ = try systemCall { rename(temporaryPath, destination) }
        } catch {
            throw .system(path: destination, writing: true, errno: error)
        }
        committed = true
        DurableFile.syncFolder(of: destination)
    }
}
