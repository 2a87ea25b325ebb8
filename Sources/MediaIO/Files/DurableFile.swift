import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// fsync for a file someone else writes (FFmpeg's muxer): what has reached the kernel is put
/// on the disk, with the folder entry that names the file, so a power cut keeps both.
/// fsync acts on the file, not on the descriptor it is called through, so a descriptor of
/// our own serves for a file FFmpeg opened.
// Sendable: `pending` and `failure` under `lock`; the descriptors are synced on `syncer` alone.
public final class DurableFile: @unchecked Sendable {
    public let path: String
    private let reportedPath: String
    private let file: Int32
    private let folder: Int32
    /// fsync can take tens of ms; the encoder thread must not wait for it.
    private let syncer = DispatchQueue(label: "dualcam-fsync")
    private let lock = NSLock()
    private var pending = false
    private var failure: MediaError?

    /// For the file open at `descriptor` (duplicated: the caller keeps its own), named `path`.
    public init(descriptor: Int32, path: String, reportedPath: String? = nil) throws(MediaError) {
        self.path = path
        self.reportedPath = reportedPath ?? path
        do { file = try systemCall { fcntl(descriptor, F_DUPFD_CLOEXEC, 0) } } catch {
            throw .system(path: reportedPath ?? path, writing: true, errno: error)
        }
        folder = (try? systemCall { open(DurableFile.folder(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC) }) ?? -1
    }

    // No wait for queued fsyncs here: each holds a reference, so none is left by now (and
    // the last one may be running this very deinit on the fsync queue).
    deinit {
        close(file)
        if folder >= 0 { close(folder) }
    }

    /// Puts the file on disk soon, on a thread of its own; one request at a time, later ones
    /// folded into it. A failure is thrown by the next call.
    public func syncSoon() throws(MediaError) {
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw failure }
        guard !pending else { return }
        pending = true
        syncer.async { [self] in
            var error: MediaError?
            do throws(MediaError) { try syncNow() } catch let e { error = e }
            lock.lock(); pending = false; failure = failure ?? error; lock.unlock()
        }
    }

    /// Puts the file on disk now (after any sync still queued).
    public func sync() throws(MediaError) {
        syncer.sync {}
        lock.lock(); let failure = self.failure; lock.unlock()
        if let failure { throw failure }
        try syncNow()
    }

    private func syncNow() throws(MediaError) {
        do { _ = try systemCall { fsync(file) } } catch { throw .system(path: reportedPath, writing: true, errno: error) }
        if folder >= 0 { _ = try? systemCall { fsync(folder) } }
    }

    /// fsyncs the folder holding `path`: after a rename, so the new name survives a power cut.
    public static func syncFolder(of path: String) {
        guard let fd = try? systemCall({ open(folder(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC) }) else { return }
        _ = try? systemCall { fsync(fd) }
        close(fd)
    }

    public static func folder(of path: String) -> String { PathName.folder(of: path) }
}
