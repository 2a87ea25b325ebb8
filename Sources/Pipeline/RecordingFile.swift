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
final class RecordingFile {
    static let fragmentSeconds = 0.5

    let path: String
    let writer: MovWriter

    init(options o: RecordOptions) throws(MediaError) {
        path = o.output
        var settings = o.video
        settings.inOrder = true
        // The encoders before the file: one that cannot open must not cost an --overwrite'd OUT.
        let video = try VideoEncoder(settings: settings), audio = try AudioEncoder(bitrate: settings.audioBitrate)
        try Self.create(o.output, overwrite: o.overwrite)
        do {
            writer = try MovWriter(path: o.output, video: video, audio: audio,
                                   metadata: o.metadata, layout: .fragmented(seconds: Self.fragmentSeconds))
        } catch {
            unlink(o.output)
            throw error
        }
    }

    /// Claims OUT: refuses an existing file unless `overwrite`, and a folder always.
    private static func create(_ path: String, overwrite: Bool) throws(MediaError) {
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: path, reason: "is a directory") }
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL)
        let mask = umask(0)
        umask(mask)
        let fd = retryingEINTR { open(path, flags, 0o666 & ~mask) }
        guard fd >= 0 else {
            if errno == EEXIST { throw .outputExists(path: path) }
            let reason = String(cString: strerror(errno))
            let dir = DurableFile.folder(of: path)
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) || !isDir.boolValue {
                throw .cannotWrite(path: path, reason: "folder \(dir) does not exist")
            }
            throw .cannotWrite(path: path, reason: reason)
        }
        close(fd)
    }

    /// Nothing was recorded: no empty file is left behind.
    func remove() {
        writer.abandon()
        unlink(path)
    }

    /// After a clean stop: the trailer, then the regular file in OUT's place.
    func finalize() throws(MediaError) -> MovFinalizer.Result {
        try writer.finish()
        return try MovFinalizer.finalizeInPlace(path)
    }

    /// After a failure mid-recording: closes the file as it stands; its complete fragments play.
    func keepAsItIs() { writer.abandon() }

    /// Bytes free where OUT is, or nil when the file system does not say.
    static func freeBytes(near path: String) -> Int64? {
        var s = statvfs()
        guard statvfs(DurableFile.folder(of: path), &s) == 0 else { return nil }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }
}
