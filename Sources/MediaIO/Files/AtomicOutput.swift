import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file that appears at its destination complete or not at all: it is written with no name
/// beside it (same file system, so it can be given OUT's name in one step) and given that
/// name by `commit()`; dropped unless committed. OUT is claimed from the start
/// (`OutputClaim`): no other dualcam can write it meanwhile, and nothing is replaced unless
/// `overwrite`.
public final class AtomicOutput {
    public let destination: String
    /// A name for messages and for the folder the file is in; it is given to the file only
    /// where the file system has no unnamed files (or for an instant at commit).
    public private(set) var temporaryPath: String
    private let claim: OutputClaim
    /// What the file's hidden names start with: the folder, a dot, OUT's name, a dot.
    private let hiddenPrefix: String
    private var committed = false
    /// Whether the file has a name of its own yet (`temporaryPath`).
    private var named: Bool
    /// The file, open for reading and writing and locked: write through it, not by name.
    public let descriptor: Int32

    static let suffix = ".dualcam-tmp"

    /// `holding`: a descriptor of the caller's that holds the file now at `destination`.
    public init(destination: String, overwrite: Bool, holding own: Int32? = nil) throws(MediaError) {
        self.destination = destination
        claim = try OutputClaim(path: destination, overwrite: overwrite, holding: own)
        let dir = DurableFile.folder(of: destination)
        let hidden = OwnFile.hiddenPrefix(besides: PathName.last(destination))
        let prefix = "\(dir)/\(hidden)"
        hiddenPrefix = prefix
        Self.removeAbandoned(in: dir, prefix: hidden, suffix: Self.suffix)
        do {
            let (fd, name) = try OwnFile.create(in: dir, hiddenPrefix: prefix, suffix: Self.suffix)
            descriptor = fd
            named = name != nil
            temporaryPath = name ?? prefix + "unnamed" + Self.suffix
        } catch {
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) || !isDir.boolValue {
                throw .cannotWrite(path: destination, reason: "folder \(dir) does not exist")
            }
            throw .system(path: destination, writing: true, errno: error)
        }
    }

    deinit {
        discard()
        close(descriptor)
    }

    public func discard() {
        if !committed && named { unlink(temporaryPath) }
    }

    /// Hidden files of this name that no run holds: left by a kill, removed. (Only a file
    /// system without unnamed files leaves them, and only ever locked before they have a name
    /// of this pattern: `OwnFile.create`.)
    static func removeAbandoned(in dir: String, prefix: String, suffix: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let path = dir + "/" + name
            if OwnFile.isAbandoned(path) { unlink(path) }
        }
    }

    /// Puts the file on disk, then gives it OUT's name: a power cut leaves the old file or
    /// the new one, never an empty one.
    public func commit() throws(MediaError) {
        do { _ = try systemCall { fsync(descriptor) } } catch { throw .system(path: destination, writing: true, errno: error) }
        if !named {
            // The file takes a hidden name of its own first (locked from its first instant: the
            // lock is the file's), then OUT's by rename, which never replaces without overwrite.
            do { temporaryPath = try OwnFile.name(descriptor, hiddenPrefix: hiddenPrefix, suffix: Self.suffix) } catch {
                throw .system(path: destination, writing: true, errno: error)
            }
            named = true
        }
        do { try claim.place(temporaryPath) } catch {
            // Kept under a name of its own (the error says which): not to be removed.
            if claim.keptElsewhere != nil { committed = true }
            throw error
        }
        committed = true
    }
}
