import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// The recording on disk. While recording it is a fragmented QuickTime file at OUT itself,
/// where the user looks for it, cut into fragments of half a second, each put on disk
/// (fsync) as soon as the muxer completes it: a kill, a crash or a power cut leaves a file
/// that plays up to about a second before the end (a fragment plus the encoder's delay). A clean stop turns it into a regular file with its index first
/// (stream copy beside it, then an atomic rename over it).
///
/// An existing OUT (`--overwrite`) is replaced only once the new take holds a picture: until
/// then the take is written beside it under a hidden name, renamed over OUT as soon as a
/// fragment with a frame is in it (`claimIfReady`). The take's file carries an advisory lock
/// (`RecordingLock`) for as long as the recording runs.
final class RecordingFile: EncodedMovSink {
    static let fragmentSeconds = 0.5

    let path: String
    let encoders: OutputEncoders
    let writer: MovWriter
    /// Where the take is written while it cannot replace OUT yet; nil once it is at OUT.
    private(set) var pending: String?
    /// The open descriptor that holds the lock.
    private let lockFD: Int32
    /// The file's size with the header alone: more means a fragment is in it.
    private var headerBytes: Int64 = 0

    init(options o: RecordOptions) throws(MediaError) {
        path = o.output
        var settings = o.video
        settings.inOrder = true
        // The encoders before the file: one that cannot open must not cost anything at OUT.
        encoders = try OutputEncoders(settings: settings)
        let (fd, writePath) = try Self.create(o.output, overwrite: o.overwrite)
        lockFD = fd
        pending = writePath == o.output ? nil : writePath
        do {
            writer = try MovWriter(path: writePath, descriptor: fd, encoders: encoders,
                                   metadata: o.metadata, layout: .fragmented(seconds: Self.fragmentSeconds))
        } catch {
            unlink(writePath)
            close(fd)
            throw error
        }
        headerBytes = Self.size(writePath) ?? 0
    }

    deinit { close(lockFD) }

    /// The hidden name a take is written under beside OUT while OUT is kept.
    static func pendingName(for path: String, pid: Int32 = getpid()) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).dualcam-\(pid).recording").path
    }

    /// Claims OUT: refuses a folder, an existing file unless `overwrite`, and a file a live
    /// recording holds. Returns the locked descriptor and where to write.
    private static func create(_ path: String, overwrite: Bool) throws(MediaError) -> (Int32, String) {
        var st = stat()
        let exists = lstat(path, &st) == 0
        if exists && (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: path, reason: "is a directory") }
        if exists && !overwrite { throw .outputExists(path: path) }
        if exists && RecordingLock.isHeld(path) { throw .cannotWrite(path: path, reason: RecordingLock.heldReason) }
        removeAbandoned(besides: path)
        let target = exists ? pendingName(for: path) : path
        let mask = umask(0)
        umask(mask)
        let fd: Int32
        do { fd = try systemCall { open(target, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o666 & ~mask) } } catch {
            if error.rawValue == EEXIST { throw .outputExists(path: path) }
            let dir = DurableFile.folder(of: path)
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) || !isDir.boolValue {
                throw .cannotWrite(path: path, reason: "folder \(dir) does not exist")
            }
            throw .system(path: path, writing: true, errno: error)
        }
        guard RecordingLock.take(fd) else {
            close(fd)
            throw .cannotWrite(path: path, reason: RecordingLock.heldReason)
        }
        return (fd, target)
    }

    /// Hidden takes of OUT that a killed run left (nobody holds their lock): removed.
    static func removeAbandoned(besides path: String) {
        let url = URL(fileURLWithPath: path)
        let prefix = ".\(url.lastPathComponent).dualcam-"
        let folder = url.deletingLastPathComponent().path
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where name.hasPrefix(prefix) && name.hasSuffix(".recording") {
            let leftover = folder + "/" + name
            if !RecordingLock.isHeld(leftover) { unlink(leftover) }
        }
    }

    static func size(_ path: String) -> Int64? {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : nil
    }

    /// Renames the take over OUT once a fragment is in it; true when it is at OUT.
    @discardableResult
    func claimIfReady() -> Bool {
        guard let pending else { return true }
        guard (Self.size(pending) ?? 0) > headerBytes, isOurs(at: pending), rename(pending, path) == 0 else { return false }
        self.pending = nil
        return true
    }

    /// Nothing was recorded: no empty file is left behind, and an OUT that was there stays.
    func remove() {
        writer.abandon()
        if isAtItsName { unlink(pending ?? path) }
    }

    /// After a clean stop: the file is complete as a fragmented one; `finalize` makes it regular.
    func finishWriting() throws(MediaError) { try writeTheRestAndTrailer() }

    /// After `finishWriting`: the regular file in OUT's place.
    func finalize() throws(MediaError) -> MovFinalizer.Result {
        let result = try MovFinalizer.finalizeInPlace(pending ?? path)
        if let pending {
            do { _ = try systemCall { rename(pending, path) } } catch {
                throw .system(path: path, writing: true, errno: error, context: "the take is at \(pending): ")
            }
            self.pending = nil
        }
        return result
    }

    /// After a failure mid-recording: closes the file as it stands; its complete fragments
    /// play. One that holds no picture yet does not replace OUT.
    func keepAsItIs() {
        writer.abandon()
        if pending != nil && !claimIfReady(), let pending, isOurs(at: pending) { unlink(pending) }
    }

    /// Whether the take is still under the name it was written under: finalizing reads and
    /// replaces it by name, which must not reach a file put there by someone else.
    var isAtItsName: Bool { isOurs(at: pending ?? path) }

    /// Whether `name` (not followed if a link) is the file this recording writes through.
    private func isOurs(at name: String) -> Bool {
        var mine = stat(), there = stat()
        return fstat(lockFD, &mine) == 0 && lstat(name, &there) == 0 && mine.st_dev == there.st_dev && mine.st_ino == there.st_ino
    }

    /// Bytes free where OUT is, or nil when the file system does not say.
    static func freeBytes(near path: String) -> Int64? {
        var s = statvfs()
        guard statvfs(DurableFile.folder(of: path), &s) == 0 else { return nil }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }
}
