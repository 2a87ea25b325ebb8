import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// The recording on disk. While recording it is a fragmented QuickTime file at OUT itself,
/// where the user looks for it, cut into fragments of half a second, each put on disk
/// (fsync) as soon as the muxer completes it: a kill, a crash or a power cut leaves a file
/// that plays up to about a second before the end (a fragment plus the encoder's delay). A
/// clean stop turns it into a regular file with its index first (stream copy beside it, then
/// an atomic rename over it).
///
/// The take is made with no name and locked (`RecordingLock`) before it is given one, so no
/// other dualcam ever sees it unlocked. An existing OUT (`--overwrite`) is replaced only once
/// the new take holds a picture: until then the take is written beside it under a hidden
/// name, renamed over OUT as soon as a fragment with a frame is in it (`claimIfReady`), and
/// OUT is held by the claim so no other writer takes it meanwhile. Should OUT's name be taken
/// from the take while it is recorded (removed, or another file renamed over it), the take is
/// copied out of its open descriptor to a rescue name at the end (`rescueIfLost`).
final class RecordingFile: EncodedMovSink {
    static let fragmentSeconds = 0.5

    let path: String
    let encoders: OutputEncoders
    let writer: MovWriter
    /// Where the take is written while it cannot replace OUT yet; nil once it is at OUT.
    private(set) var pending: String?
    private let claim: OutputClaim
    /// The open descriptor that holds the lock.
    private let lockFD: Int32
    /// What the muxer and its fragment being built hold that the file does not yet: written
    /// within half a second. Read from any thread.
    var bytesNotYetWritten: Int64 { max(Int64(writer.bytesHandedOver) - (Self.size(of: lockFD) ?? 0), 0) }
    var bytesHandedOver: Int64 { Int64(writer.bytesHandedOver) }

    /// `claim`: OUT, claimed before anything else was opened (a fresh one when nil). `live`:
    /// no intermediate stands behind its encoder (`ThreadPriority.liveEncoderLevel`).
    /// `companion`: a file beside the take (`ThreadPriority.companionNiceness`).
    init(path: String, overwrite: Bool, video: VideoEncoderSettings, metadata: MovWriter.Metadata,
         claim given: OutputClaim? = nil, live: Bool = false, companion: Bool = false) throws(MediaError) {
        self.path = path
        if let given { claim = given } else { claim = try OutputClaim(path: path, overwrite: overwrite) }
        // The threading is the plan's (measured on this machine where it could be: `LiveEncoderChoice`).
        var settings = video
        settings.inOrder = true
        // The encoders before the file: one that cannot open must not cost anything at OUT.
        // Opened below the picture's priority: the threads x265 starts keep it.
        let opening = settings
        let open = { @Sendable () throws(MediaError) in try OutputEncoders(settings: opening) }
        encoders = companion ? try ThreadPriority.madeAtCompanionLevel(open)
            : try ThreadPriority.madeAtEncoderLevel(live: live, poolThreads: opening.poolThreads, open)
        Self.removeAbandoned(besides: path)
        // Nothing at OUT: the take has its name from the start (a link never replaces what
        // came meanwhile). Something there (now): kept with --overwrite until the take has a
        // picture, and held meanwhile, unless another dualcam holds it; refused without.
        var made: (fd: Int32, target: String)?
        do {
            if OutputPath.entry(path) == nil { made = (try Self.create(path), path) }
        } catch where error.rawValue == EEXIST {
        } catch {
            throw Self.creationFailure(error, path: path)
        }
        if made == nil {
            guard overwrite else { throw .outputExists(path: path) }
            try claim.holdWhatIsThere()
            let hidden = Self.pendingName(for: path)
            do { made = (try Self.create(hidden), hidden) } catch { throw Self.creationFailure(error, path: path) }
        }
        let (fd, target) = made!
        lockFD = fd
        pending = target == path ? nil : target
        do {
            writer = try MovWriter(path: target, descriptor: fd, reportedPath: path, encoders: encoders,
                                   metadata: metadata, layout: .fragmented(seconds: Self.fragmentSeconds))
        } catch {
            unlink(target)
            close(fd)
            throw error
        }
    }

    deinit { close(lockFD) }

    private static func creationFailure(_ error: Errno, path: String) -> MediaError {
        if error.rawValue == EEXIST { return .outputExists(path: path) }
        let dir = DurableFile.folder(of: path)
        var isDir: ObjCBool = false
        if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) || !isDir.boolValue {
            return .cannotWrite(path: path, reason: "folder \(dir) does not exist")
        }
        return .system(path: path, writing: true, errno: error)
    }

    /// The hidden name a take is written under beside OUT while OUT is kept.
    static func pendingName(for path: String, pid: Int32 = getpid()) -> String {
        PathName.join(PathName.folder(of: path), OwnFile.hiddenPrefix(besides: PathName.last(path)) + "dualcam-\(pid).recording")
    }

    /// A new take at `name`, locked before it has that name; fails with EEXIST rather than
    /// replace anything there.
    static func create(_ name: String) throws(Errno) -> Int32 {
        let folder = DurableFile.folder(of: name)
        let hidden = "\(folder)/" + OwnFile.hiddenPrefix(besides: (name as NSString).lastPathComponent)
        let made = try OwnFile.create(in: folder, hiddenPrefix: hidden, suffix: ".new")
        let named = made.name.map { OwnFile.move($0, toFree: name) } ?? OwnFile.link(made.fd, to: name)
        guard named else {
            let failure = Errno.current
            if let temporary = made.name { unlink(temporary) }
            close(made.fd)
            throw failure
        }
        return made.fd
    }

    /// Hidden takes of OUT that a killed run left (nobody holds their lock): one with no
    /// picture in it yet is removed; one with pictures (killed in the instant between its
    /// first fragment and its rename over OUT) is given a rescue name.
    static func removeAbandoned(besides path: String) {
        let prefix = OwnFile.hiddenPrefix(besides: PathName.last(path)) + "dualcam-"
        let folder = PathName.folder(of: path)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where name.hasPrefix(prefix) && name.hasSuffix(".recording") {
            let leftover = folder + "/" + name
            guard OwnFile.isAbandoned(leftover) else { continue }
            if (try? MovAtoms.topLevel(leftover))?.contains(where: { $0.type == "moof" }) == true,
               let name = freeRescueName(for: path), OwnFile.move(leftover, toFree: name) {
                continue
            }
            unlink(leftover)
        }
    }

    /// A free name beside OUT that says what it is: OUT.rescued.mov, OUT.rescued-2.mov, ...
    static func freeRescueName(for path: String) -> String? {
        // As OUT was given (relative stays relative).
        let stem = (path as NSString).deletingPathExtension, ext = (path as NSString).pathExtension
        return (1...99).lazy.map { "\(stem).rescued\($0 == 1 ? "" : "-\($0)").\(ext)" }.first { OutputPath.entry($0) == nil }
    }

    static func size(of fd: Int32) -> Int64? {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : nil
    }

    /// Renames the take over OUT once a fragment is in it; true when it is at OUT.
    @discardableResult
    func claimIfReady() -> Bool {
        guard let pending else { return true }
        guard holdsAFragment, isOurs(at: pending) else { return false }
        do { try claim.place(pending) } catch { return false }
        self.pending = nil
        return true
    }

    /// Whether a whole fragment, so a picture, is in the file: its top-level boxes read through
    /// the descriptor up to the first `moof`. (Its size said so before; but the header comes
    /// with the first fragment, and a fragment a full disk refused leaves nothing.)
    var holdsAFragment: Bool { MovAtoms.holdsAWholeFragment("/proc/self/fd/\(lockFD)") }

    /// After a failure: a file that holds no picture (the disk filled before its first
    /// fragment) is removed, and an OUT it was to replace stays. Whether it was.
    func removeIfItHoldsNoPicture() -> Bool {
        writer.abandon()
        guard !holdsAFragment else { return false }
        remove()
        return true
    }

    /// Nothing was recorded: no empty file is left behind, and an OUT that was there stays.
    func remove() {
        writer.abandon()
        if isAtItsName { unlink(pending ?? path) }
        claim.release()
    }

    /// After a clean stop: the file is complete as a fragmented one; `finalize` makes it regular.
    /// `drained`: the encoders were emptied already (the take went on in an intermediate).
    func finishWriting(drained: Bool) throws(MediaError) {
        if drained { try writer.finish() } else { try writeTheRestAndTrailer() }
    }

    func finishWriting() throws(MediaError) { try finishWriting(drained: false) }

    /// After `finishWriting`: the regular file in OUT's place, with `rest` (the intermediate
    /// the take went on in) encoded and joined.
    func finalize(rest: IntermediateFile? = nil, progress: JoinProgress? = nil) throws(MediaError) -> MovFinalizer.Result {
        if let pending, !claimIfReady() {
            // A take wholly in its intermediate has no fragment of its own to wait for.
            if rest != nil, isOurs(at: pending) {
                try claim.place(pending)
                self.pending = nil
            } else {
                throw .cannotWrite(path: path, reason: "the take could not be given this name (\(pending) holds it)")
            }
        }
        let (result, lock) = try MovFinalizer.finalizeInPlace(path, holding: lockFD, rest: rest.map { ($0.path, $0.info) },
                                                              progress: progress)
        rest?.remove()
        HeldUntilExit.keep(lock.descriptor)
        return result
    }

    /// After a failure mid-recording: closes the file as it stands; its complete fragments
    /// play. One that holds no picture yet does not replace OUT (and is removed); one that
    /// does but cannot take OUT's name is given a rescue name. Where the take is kept.
    @discardableResult
    func keepAsItIs() -> String {
        writer.abandon()
        guard let pending, !claimIfReady(), isOurs(at: pending) else { return path }
        if holdsAFragment, let name = Self.freeRescueName(for: path),
           OwnFile.move(pending, toFree: name) {
            return name
        }
        unlink(pending)
        return path
    }

    /// Whether the take is still under the name it was written under: finalizing reads and
    /// replaces it by name, which must not reach a file put there by someone else.
    var isAtItsName: Bool { isOurs(at: pending ?? path) }

    /// When OUT's name was taken from the take and it has no other (it was removed, or a file
    /// was renamed over it), its bytes are still there through the descriptor: copied to a
    /// rescue name beside OUT, returned. nil when it still has a name (moved: it is there).
    func rescueIfLost() -> String? {
        var st = stat()
        guard !isAtItsName, fstat(lockFD, &st) == 0, st.st_nlink == 0 else { return nil }
        // Beside OUT; with its folder removed too, in the working folder, else the home folder.
        let home = ProcessInfo.processInfo.environment["HOME"].map { PathName.join($0, PathName.last(path)) }
        for candidate in [path, PathName.last(path), home].compactMap({ $0 }) {
            if let name = Self.freeRescueName(for: candidate), let copied = copy(to: name) { return copied }
        }
        return nil
    }

    /// Whether the take's file still has a name anywhere (moved, not removed).
    var hasAName: Bool {
        var st = stat()
        return fstat(lockFD, &st) != 0 || st.st_nlink > 0
    }

    /// The file as it is, copied from its descriptor to the new file `name`.
    private func copy(to name: String) -> String? {
        let out = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard out >= 0 else { return nil }
        defer { close(out) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { b in (try? systemCall { pread(lockFD, b.baseAddress, b.count, offset) }) ?? -1 }
            if n == 0 { break }
            guard n > 0, buffer.withUnsafeBytes({ b in Self.writeAll(out, b.baseAddress!, n) }) else {
                unlink(name)
                return nil
            }
            offset += off_t(n)
        }
        guard (try? systemCall { fsync(out) }) != nil else { unlink(name); return nil }
        DurableFile.syncFolder(of: name)
        return name
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Bool {
        var done = 0
        while done < count {
            guard let n = try? systemCall({ Glibc.write(fd, bytes + done, count - done) }), n > 0 else { return false }
            done += n
        }
        return true
    }

    /// Whether `name` (not followed if a link) is the file this recording writes through.
    private func isOurs(at name: String) -> Bool { OutputPath.isFile(lockFD, at: name) }

    /// Bytes free where OUT is, or nil when the file system does not say.
    static func freeBytes(near path: String) -> Int64? {
        var s = statvfs()
        guard statvfs(DurableFile.folder(of: path), &s) == 0 else { return nil }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }
}
