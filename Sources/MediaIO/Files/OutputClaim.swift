import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A command's hold on OUT's name, from its checks before anything is opened to the moment its
/// file takes that name. Every dualcam writer of a file (record, compose, relayout, finish,
/// `--iso`'s files) takes one, so no two of them write one name at once:
/// - what stands at OUT when the claim is made stays locked (`RecordingLock`) until the new
///   file replaces it, so a second writer is refused at its start, not at its end;
/// - the new file takes the name without replacing anything unless `--overwrite` was given
///   (`RENAME_NOREPLACE`, or a hard link, which never replaces), and even then it replaces
///   only what stood there at the claim, or a file that no other dualcam holds.
/// - OUT's name itself is held from the claim until the new file has it (`NameLock`), so a
///   writer that finds nothing there yet is no less alone than one that finds a file.
/// A file being written is locked by its writer from the moment it has a name, so "held" is
/// always a question the kernel answers (the lock goes with the process, however it ends).
public final class OutputClaim {
    public let path: String
    public let overwrite: Bool
    private var nameLock: NameLock?
    /// What lstat found at OUT when claimed (nil: nothing).
    private var found: (device: UInt64, inode: UInt64)?
    /// The file found at OUT, open to hold its lock; -1 when there is none to hold (nothing
    /// there, a symbolic link, or the caller's own file).
    private var lockedFD: Int32 = -1
    /// The caller's own file stood at OUT when claimed (`finish` in place, a recording's end):
    /// that file alone may be replaced (`placeOverOwn`).
    private var replacesOwnOnly = false
    /// Where the new file was left when OUT had become another file: it is not to be removed.
    public private(set) var keptElsewhere: String?

    /// Claims OUT: refuses a folder, anything at all (a dangling link too) unless `overwrite`,
    /// and a file another dualcam writes. `holding` is a descriptor of the caller's own that
    /// already holds the file at OUT (`finish` replacing a recording in place).
    public init(path: String, overwrite: Bool, holding own: Int32? = nil) throws(MediaError) {
        self.path = path
        self.overwrite = overwrite
        nameLock = NameReservation.take(path) ?? NameLock(for: path)
        // The caller holding the file at OUT may hold its name too (a recording finishing its
        // own take); anyone else who holds the name is writing OUT.
        if nameLock?.isHeldByAnother == true {
            nameLock = nil
            if own == nil { throw .cannotWrite(path: path, reason: RecordingLock.heldReason) }
        }
        guard let st = OutputPath.entry(path) else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: path, reason: "is a directory") }
        guard overwrite else { throw .outputExists(path: path) }
        found = (UInt64(st.st_dev), UInt64(st.st_ino))
        if let own, Self.identity(of: own).map({ $0 == found! }) == true {
            replacesOwnOnly = true
            return
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG: lockedFD = try Self.lock(path)
        case S_IFLNK: break  // replaced as a link: what it points to is not written
        default: throw .cannotWrite(path: path, reason: "is not a regular file")
        }
    }

    deinit { release() }

    /// Whether a writer (another dualcam) holds the name `path` now: a name to pass over when
    /// choosing one.
    public static func isNameHeld(_ path: String) -> Bool { NameLock(for: path).isHeldByAnother }

    /// Holds whatever stands at OUT now, should it have come since the claim (another
    /// writer's file made meanwhile): refused, as at the claim, when another dualcam holds it.
    /// Asked before anything is written to replace it.
    public func holdWhatIsThere() throws(MediaError) {
        guard let st = OutputPath.entry(path) else { return }
        let now = (UInt64(st.st_dev), UInt64(st.st_ino))
        if let found, found == now { return }
        guard overwrite else { throw .outputExists(path: path) }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            let fd = try Self.lock(path)
            letGoOfFound()
            lockedFD = fd
        case S_IFLNK: letGoOfFound()
        case S_IFDIR: throw .cannotWrite(path: path, reason: "is a directory")
        default: throw .cannotWrite(path: path, reason: "is not a regular file")
        }
        found = now
    }

    /// Lets go of OUT: of its name and of the file that stood there (replaced, or the command
    /// is over).
    public func release() {
        letGoOfFound()
        nameLock = nil
    }

    private func letGoOfFound() {
        if lockedFD >= 0 { close(lockedFD) }
        lockedFD = -1
    }

    /// Opens the file at `path` and takes its lock, for as long as the descriptor stays open:
    /// throws when another dualcam holds it, or when it cannot be opened to tell (it is then
    /// not replaced on a guess). -1 when nothing is there any more.
    static func lock(_ path: String) throws(MediaError) -> Int32 {
        let fd: Int32
        do { fd = try systemCall { open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) } } catch {
            if error.rawValue == ENOENT { return -1 }
            throw .cannotWrite(path: path, reason: "cannot be opened to check that no other dualcam writes it (\(error))")
        }
        guard RecordingLock.take(fd) else {
            close(fd)
            throw .cannotWrite(path: path, reason: RecordingLock.heldReason)
        }
        return fd
    }

    static func identity(of fd: Int32) -> (UInt64, UInt64)? {
        var st = stat()
        return fstat(fd, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
    }

    /// Gives `name` (a file of ours beside OUT, locked by us) OUT's name. Without `overwrite`
    /// nothing is ever replaced; with it, what stood at OUT when claimed, or what came since
    /// if no other dualcam holds it.
    public func place(_ name: String) throws(MediaError) {
        if replacesOwnOnly { return try placeOverOwn(name) }
        for _ in 0..<3 {
            var st = stat()
            guard lstat(path, &st) == 0 else {
                // Nothing there: taking the name never replaces what appears meanwhile.
                if OwnFile.move(name, toFree: path) { return finished() }
                let e = errno
                if e == EEXIST { if overwrite { continue } else { throw .outputExists(path: path) } }
                throw .system(path: path, writing: true, errno: Errno(e))
            }
            guard overwrite else { throw .outputExists(path: path) }
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotWrite(path: path, reason: "is a directory") }
            var newcomer: Int32 = -1
            if found.map({ $0 != (UInt64(st.st_dev), UInt64(st.st_ino)) }) ?? true, (st.st_mode & S_IFMT) == S_IFREG {
                // Put there since the claim: replaced only if no other dualcam holds it.
                newcomer = try Self.lock(path)
            }
            defer { if newcomer >= 0 { close(newcomer) } }
            do { _ = try systemCall { rename(name, path) } } catch { throw .system(path: path, writing: true, errno: error) }
            return finished()
        }
        throw .cannotWrite(path: path, reason: "another program keeps putting files there")
    }

    private func finished() {
        release()
        DurableFile.syncFolder(of: path)
    }

    /// Replaces the caller's own file at OUT, and nothing else: the two are exchanged in one
    /// step and what came back is looked at; if it is not the caller's file (another moved
    /// over the take while it was finished, or a linked folder was pointed elsewhere), it is
    /// put back and the new file keeps a name of its own beside it. A rename after a check
    /// replaced whatever had the name by then (an attacker's movie, exit 0).
    private func placeOverOwn(_ name: String) throws(MediaError) {
        guard let found else { return }
        guard dc_rename_exchange(name, path) == 0 else {
            let e = errno
            // Nothing at OUT any more (the take moved away): ours takes the free name.
            if e == ENOENT, OwnFile.move(name, toFree: path) { return finished() }
            // A file system that cannot exchange: looked at, then replaced.
            var st = stat()
            guard [EINVAL, ENOSYS, EOPNOTSUPP].contains(e), lstat(path, &st) == 0,
                  (UInt64(st.st_dev), UInt64(st.st_ino)) == found else { throw .system(path: path, writing: true, errno: Errno(e)) }
            do { _ = try systemCall { rename(name, path) } } catch { throw .system(path: path, writing: true, errno: error) }
            return finished()
        }
        var st = stat()
        if lstat(name, &st) == 0, (UInt64(st.st_dev), UInt64(st.st_ino)) == found {
            unlink(name)  // the take as it was, replaced
            return finished()
        }
        _ = dc_rename_exchange(name, path)
        let stem = PathName.deletingExtension(path), ext = PathName.pathExtension(path)
        let kept = (1...99).lazy.map { "\(stem).rescued\($0 == 1 ? "" : "-\($0)")" + (ext.isEmpty ? "" : ".\(ext)") }
            .first { OwnFile.move(name, toFree: $0) } ?? name
        keptElsewhere = kept
        release()
        DurableFile.syncFolder(of: kept)
        throw .cannotWrite(path: path, reason: "became another file while it was being finished (moved there, or its folder "
                           + "pointed elsewhere): that file is left as it is, and the finished take is at \(kept)")
    }
}

/// A lock on a file's name, whether or not anything is there: an abstract Unix socket named
/// after the folder (its device and inode, so every path to it is one name) and the file's
/// name. It leaves nothing on disk, and goes with the process however it ends.
/// Names this process chose for itself (a take's default name) and holds until it claims
/// them: three records started in one second chose one name, and two were refused as if
/// another dualcam wrote it, where each should have taken the next free one.
public enum NameReservation {
    private static let held = Locked<[String: NameLock]>([:])

    /// Takes `path`'s name lock for this process's claim of it to come; false when another
    /// process (or an earlier reservation here) holds it.
    public static func reserve(_ path: String) -> Bool {
        let lock = NameLock(for: path)
        guard !lock.isHeldByAnother else { return false }
        held.withLock { $0[path] = lock }
        return true
    }

    /// The reservation of `path`, handed to the claim that takes the name.
    static func take(_ path: String) -> NameLock? { held.withLock { $0.removeValue(forKey: path) } }
}

final class NameLock {
    private let socket: Int32
    /// Another process (or another claim of this one) holds the name.
    let isHeldByAnother: Bool

    /// Takes the name's lock. Where it cannot be had for another reason than its holder (no
    /// such folder: the write says so itself), nothing is held and nothing refused.
    init(for path: String) {
        var folder = stat()
        let name = Array((path as NSString).lastPathComponent.utf8)
        guard stat(DurableFile.folder(of: path), &folder) == 0 else {
            (socket, isHeldByAnother) = (-1, false)
            return
        }
        let key = String(format: "dualcam-out:%llx:%llx:%016llx%016llx:%d", UInt64(folder.st_dev), UInt64(folder.st_ino),
                         Self.fnv1a(name), Self.djb2(name), name.count)
        socket = dc_bind_abstract(key)
        isHeldByAnother = socket < 0 && errno == EADDRINUSE
    }

    deinit { if socket >= 0 { close(socket) } }

    /// Two independent 64-bit hashes of the name: 128 bits keep two names in one folder from
    /// ever sharing a lock.
    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    static func djb2(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(5381) { ($0 << 5) &+ $0 &+ UInt64($1) }
    }
}

/// Files of ours beside OUT: unnamed until they are whole where the file system allows it.
public enum OwnFile {
    /// How every hidden name beside OUT (named `name`) begins: ".NAME." (then "PID-N-RAND...",
    /// "dualcam-PID.recording"). NAME is OUT's whole name when short, else its first 100 bytes
    /// and a hash of it, so that a long but legal OUT (up to 255 bytes) never makes a hidden
    /// name over the file system's 255. (A 230-byte OUT failed to be written, and a take
    /// under one could not be finished.)
    public static func hiddenPrefix(besides name: String) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count > 120 else { return ".\(name)." }
        var cut = 100
        while cut > 0 && (bytes[cut] & 0xC0) == 0x80 { cut -= 1 }  // not inside a UTF-8 character
        return "." + String(decoding: bytes[..<cut], as: UTF8.self) + String(format: "~%016llx.", NameLock.fnv1a(bytes))
    }

    /// Whether the file at `path`, under one of our hidden names, is one a killed run left
    /// and so ours to remove: a regular file nobody holds the lock of, empty or starting as a
    /// movie does (anything else under such a name is someone's, and stays).
    public static func isAbandoned(_ path: String) -> Bool {
        guard let st = OutputPath.entry(path), (st.st_mode & S_IFMT) == S_IFREG, !RecordingLock.isHeld(path) else { return false }
        return MovAtoms.isEmptyOrStartsAsMovie(path)
    }

    /// A new file for writing in `folder`, locked, with no name (none can be seen, so none is
    /// left by a kill), or, where the file system has no unnamed files, under a new hidden
    /// name made from `hiddenPrefix` and `suffix`, which it takes only once locked (made as
    /// NAME.new first: a name with `suffix` is never seen unlocked, so whoever removes the
    /// unlocked ones a kill left never removes one being made). The mode is the usual one: the
    /// kernel applies the umask (reading it with umask(2) would set it, racing with other
    /// threads that create files).
    public static func create(in folder: String, hiddenPrefix: String, suffix: String) throws(Errno) -> (fd: Int32, name: String?) {
        let unnamed = dc_open_unnamed(folder, 0o666)
        if unnamed >= 0 {
            _ = RecordingLock.take(unnamed)
            return (unnamed, nil)
        }
        let failure = Errno.current
        guard [EOPNOTSUPP, EISDIR, EINVAL].contains(failure.rawValue) else { throw failure }
        for attempt in 0..<100 {
            let name = "\(hiddenPrefix)\(getpid())-\(attempt)-\(UInt32.random(in: 0...UInt32.max))\(suffix)"
            let fd = open(name + ".new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if fd < 0 {
                if errno == EEXIST || errno == EINTR { continue }
                throw Errno.current
            }
            _ = RecordingLock.take(fd)
            // Both names are this process's own (its pid in them): a plain rename.
            guard rename(name + ".new", name) == 0 else {
                let e = Errno.current
                unlink(name + ".new")
                close(fd)
                throw e
            }
            return (fd, name)
        }
        throw Errno(EEXIST)
    }

    /// Gives the unnamed file `fd` a new hidden name from `hiddenPrefix` (locked from its
    /// first instant: the lock is the file's); the name.
    public static func name(_ fd: Int32, hiddenPrefix: String, suffix: String) throws(Errno) -> String {
        for attempt in 0..<100 {
            let name = "\(hiddenPrefix)\(getpid())-\(attempt)-\(UInt32.random(in: 0...UInt32.max))\(suffix)"
            if link(fd, to: name) { return name }
            if errno != EEXIST { throw Errno.current }
        }
        throw Errno(EEXIST)
    }

    /// Gives the file open at `fd` the name `path`, which must be free (a link never
    /// replaces); false with errno set otherwise.
    public static func link(_ fd: Int32, to path: String) -> Bool { dc_link_descriptor(fd, path) == 0 }

    /// Moves `from` to `to`, never replacing what is at `to` (false with errno EEXIST):
    /// RENAME_NOREPLACE; where the file system has none (9p, which shares the test VM's
    /// root; NFS) a rename once `to` is seen free, the name lock keeping every other dualcam
    /// away meanwhile. (Not a hard link and an unlink: 9p then loses the file under its new
    /// name, seen in the VM.)
    public static func move(_ from: String, toFree to: String) -> Bool {
        if dc_rename_noreplace(from, to) == 0 { return true }
        if errno == EEXIST { return false }
        guard OutputPath.entry(to) == nil else {
            errno = EEXIST
            return false
        }
        return rename(from, to) == 0
    }
}
