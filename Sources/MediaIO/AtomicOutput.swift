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
        var template = Array("\(dir)/.\(url.lastPathComponent).XXXXXX\(suffix)".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(suffix.utf8.count)) }
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) || !isDir.boolValue {
                throw .cannotWrite(path: destination, reason: "folder \(dir) does not exist")
            }
            throw .cannotWrite(path: destination, reason: reason)
        }
        // mkstemps makes the file private (0600); the result should get the usual mode.
        let mask = umask(0)
        umask(mask)
        fchmod(fd, 0o666 & ~mask)
        Glibc.close(fd)
        temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { discard() }

    public func discard() {
        if !committed { unlink(temporaryPath) }
    }

    public func commit() throws(MediaError) {
        if !overwrite {
            // Refuse to clobber a file that appeared while we were writing.
            var st = stat()
            if stat(destination, &st) == 0 { throw .outputExists(path: destination) }
        }
        guard rename(temporaryPath, destination) == 0 else {
            throw .cannotWrite(path: destination, reason: String(cString: strerror(errno)))
        }
        committed = true
    }
}
