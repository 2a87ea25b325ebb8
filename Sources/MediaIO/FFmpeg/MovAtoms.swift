import Foundation

/// The top-level boxes of a QuickTime/MP4 file, read from their headers alone: enough to
/// tell a fragmented recording (moof) from a finished one, and where its index lies.
public enum MovAtoms {
    public struct Atom: Equatable, Sendable {
        public let type: String
        public let offset: Int64
        public let size: Int64
    }

    /// The boxes in file order. A box whose size runs past the end (a file cut short
    /// mid-write) is listed with the size its header claims.
    public static func topLevel(_ path: String) throws(MediaError) -> [Atom] { try boxes(path).atoms }

    /// Whether a whole fragment (a `moof` that ends within the file) is in it: the boxes read
    /// up to the first one only (a recording asks every slot until it has one).
    public static func holdsAWholeFragment(_ path: String) -> Bool {
        guard let (atoms, end) = try? boxes(path, upTo: "moof"), let moof = atoms.last, moof.type == "moof" else { return false }
        return moof.offset + moof.size <= end
    }

    /// The top-level boxes and the file's length; with `upTo`, none after the first of that type.
    private static func boxes(_ path: String, upTo last: String? = nil) throws(MediaError) -> (atoms: [Atom], end: Int64) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .system(path: path, writing: false, errno: .current)
        }
        defer { try? handle.close() }
        let end = Int64((try? handle.seekToEnd()) ?? 0)
        var atoms: [Atom] = []
        var offset: Int64 = 0
        while offset + 8 <= end && atoms.count < 1_000_000 {
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil,
                  let header = try? handle.read(upToCount: 16), header.count >= 8 else { break }
            let b = [UInt8](header)
            var size = Int64(b[0]) << 24 | Int64(b[1]) << 16 | Int64(b[2]) << 8 | Int64(b[3])
            let type = String(decoding: b[4..<8], as: UTF8.self)
            if size == 1 {
                guard b.count == 16 else { break }
                size = b[8..<16].reduce(Int64(0)) { ($0 << 8) | Int64($1) }
            } else if size == 0 {
                size = end - offset  // runs to the end of the file
            }
            guard size >= 8 else { break }
            atoms.append(Atom(type: type, offset: offset, size: size))
            if type == last { break }
            let (next, overflow) = offset.addingReportingOverflow(size)
            if overflow { break }
            offset = next
        }
        return (atoms, end)
    }

    /// Whether a regular file under one of our hidden names, left by a kill, is ours to
    /// remove: empty (made, nothing written yet), or starting as a movie does. Anything else
    /// under such a name is someone's file, and stays.
    public static func isEmptyOrStartsAsMovie(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 8) ?? Data() else { return false }
        if header.isEmpty { return true }
        return header.count == 8 && ["ftyp", "moov", "mdat", "free", "skip", "wide"]
            .contains(String(decoding: header.suffix(4), as: UTF8.self))
    }

    /// Whether the file is QuickTime or MP4 at all: it starts with one of their top-level
    /// boxes and has an index (moov) or fragments (moof).
    public static func isQuickTime(_ path: String) throws(MediaError) -> Bool {
        let atoms = try topLevel(path)
        guard let first = atoms.first?.type, ["ftyp", "moov", "mdat", "free", "skip", "wide"].contains(first) else { return false }
        return atoms.contains { $0.type == "moov" || $0.type == "moof" }
    }

    /// Whether the file is a whole movie: an index (moov), and every top-level box ends
    /// within the file (a few bytes after the last are left to players, which skip them). A
    /// file cut short mid-box (copied in part, a disk that filled) is not, whatever its first
    /// boxes say.
    public static func isWholeMovie(_ path: String) throws(MediaError) -> Bool {
        let (atoms, end) = try boxes(path)
        return atoms.contains { $0.type == "moov" } && atoms.allSatisfy { $0.offset + $0.size <= end }
    }

    /// Whether the file holds movie fragments (a recording not yet finalised).
    public static func isFragmented(_ path: String) throws(MediaError) -> Bool {
        try topLevel(path).contains { $0.type == "moof" }
    }
}
