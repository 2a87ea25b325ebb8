import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// What a batch made of each row, and the rules that say a row is made already: each row's
/// result is kept beside its output (OUT.batch.json), so that a rerun, another node of a job
/// array or `--report-only` knows it without the run that made it.
public struct BatchReport: Sendable {
    public enum Status: String, Codable, Sendable {
        /// Made now; made by an earlier run from the same inputs and options (not made again);
        /// failed; stopped by a stop signal (its unfinished output removed); not run yet.
        case done, skipped, failed, interrupted, notRun = "not_run"
    }

    public struct Outcome: Codable, Sendable, Equatable {
        public var row: Int
        public var back: String
        public var front: String
        public var output: String
        public var status: Status
        /// What the output is made from (`BatchManifest.Row.digest`).
        public var digest: String
        public var seconds: Double?
        public var bytes: Int?
        /// The output's length and frames, as compose's summary gave them.
        public var duration: Double?
        public var frames: Int?
        /// The output's modification time when made: a file replaced since is not this row's.
        public var madeAt: Double?
        /// The one line compose failed with.
        public var error: String?

        enum CodingKeys: String, CodingKey {
            case row, back, front, output, status, digest, seconds, bytes, duration, frames, error, madeAt = "made_at"
        }

        public init(_ row: BatchManifest.Row, digest: String, status: Status) {
            self.row = row.index
            back = row.back
            front = row.front
            output = row.output
            self.status = status
            self.digest = digest
        }
    }

    public static let schema = "dualcam.batch/1", rowSchema = "dualcam.batch-row/1"

    public let manifest: String
    public let outcomes: [Outcome]
    /// How long the run took, start to end (nil: nothing was run, as with --report-only).
    public let elapsed: Double?

    public init(manifest: String, outcomes: [Outcome], elapsed: Double? = nil) {
        self.manifest = manifest
        self.outcomes = outcomes
        self.elapsed = elapsed
    }

    public func count(_ status: Status) -> Int { outcomes.filter { $0.status == status }.count }
    public var failed: Int { count(.failed) }
    public var notRun: Int { count(.notRun) + count(.interrupted) }

    /// OUT.batch.json: the row's result beside its output.
    public static func resultPath(for output: String) -> String { output + ".batch.json" }

    /// The row as an earlier run left it, when that run made it from the same inputs and
    /// options and the output is still the file it made.
    public static func alreadyMade(_ row: BatchManifest.Row, digest: String) -> Outcome? {
        guard var kept = madeFile(at: row.output), kept.digest == digest else { return nil }
        kept.status = .skipped
        return kept
    }

    /// The result an earlier run kept for the file now at the row's output, when that run made
    /// this very file (its size and modification time as made): nil for a file of anyone
    /// else's, even beside a result of a row that failed or was stopped.
    private static func madeFile(at output: String) -> Outcome? {
        guard let kept = result(at: output), kept.status == .done || kept.status == .skipped,
              let st = OutputPath.entry(output), (st.st_mode & S_IFMT) == S_IFREG, Int(st.st_size) == kept.bytes,
              modificationTime(st) == kept.madeAt else { return nil }
        return kept
    }

    /// For --report-only: what the row left, or not run (nothing there, or a result for other
    /// inputs or options than the manifest's now).
    public static func gathered(_ row: BatchManifest.Row, digest: String) -> Outcome {
        if let made = alreadyMade(row, digest: digest) {
            var done = made
            done.status = .done
            return done
        }
        guard let kept = result(at: row.output), kept.digest == digest, kept.status == .failed else {
            return Outcome(row, digest: digest, status: .notRun)
        }
        return kept
    }

    /// Whether `path` is a row's result as a batch keeps it (and so may be written over).
    public static func isResultFile(_ path: String) -> Bool {
        guard let st = OutputPath.entry(path), (st.st_mode & S_IFMT) == S_IFREG, st.st_size < 1 << 20,
              let data = readFile(path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return false }
        return object["schema"] as? String == rowSchema
    }

    /// Whether the file at the row's output is one a batch made (so it may be made again
    /// without --force).
    public static func madeByABatch(_ row: BatchManifest.Row) -> Bool { madeFile(at: row.output) != nil }

    private static func result(at output: String) -> Outcome? {
        guard let data = readFile(resultPath(for: output)),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["schema"] as? String == rowSchema
        else { return nil }
        return try? JSONDecoder().decode(Outcome.self, from: data)
    }

    static func modificationTime(_ st: stat) -> Double { Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9 }

    /// Keeps `outcome` beside its output (with the output's size and time when it was made)
    /// and returns it so. A row that failed or was stopped where an earlier run's file is still
    /// there (compose keeps the old file until the new one is whole) leaves that file's result:
    /// it still says whose the file is.
    @discardableResult
    public static func keep(_ outcome: Outcome) -> Outcome {
        var kept = outcome
        if outcome.status == .done, let st = OutputPath.entry(outcome.output) {
            kept.bytes = Int(st.st_size)
            kept.madeAt = modificationTime(st)
        } else if madeFile(at: outcome.output) != nil {
            return kept
        }
        do {
            try writeFile(resultPath(for: outcome.output), json(kept, schema: rowSchema))
        } catch {
            // Made, but with nothing to say so the next run would take it for someone else's.
            guard kept.status == .done else { return kept }
            kept.status = .failed
            kept.error = "\(outcome.output) was made, but its result could not be kept beside it "
                + "(\(PathName.last(resultPath(for: outcome.output))): \(error)): a rerun needs --force"
        }
        return kept
    }

    /// The file's bytes, by the path as given: Foundation resolves a relative path against the
    /// working folder's name, which it cannot read where that name is not UTF-8.
    static func readFile(_ path: String) -> Data? {
        guard let fd = try? systemCall({ open(path, O_RDONLY | O_CLOEXEC) }) else { return nil }
        defer { close(fd) }
        var data = Data(), buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            guard let n = try? systemCall({ Glibc.read(fd, &buffer, buffer.count) }) else { return nil }
            if n == 0 { return data }
            data.append(contentsOf: buffer[0..<n])
        }
    }

    /// Writes `data` whole under a temporary name beside `path`, then renames it there.
    static func writeFile(_ path: String, _ data: Data) throws(Errno) {
        let temporary = path + ".\(getpid()).tmp"
        let fd = try systemCall { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        var failure: Errno? = data.withUnsafeBytes { bytes -> Errno? in
            var done = 0
            while done < bytes.count {
                do throws(Errno) {
                    let n = try systemCall { Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done) }
                    guard n > 0 else { return Errno(ENOSPC) }
                    done += n
                } catch {
                    return error
                }
            }
            return nil
        }
        // close is not retried: on Linux the descriptor is gone whatever it returns.
        if close(fd) != 0 && failure == nil { failure = .current }
        if failure == nil && rename(temporary, path) != 0 { failure = .current }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// An object with `schema` and `version` and snake_case keys, as every JSON dualcam writes.
    static func json<T: Encodable>(_ value: T, schema: String) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var object = try JSONSerialization.jsonObject(with: encoder.encode(value)) as? [String: Any] ?? [:]
        object["schema"] = schema
        object["version"] = dualcamVersion
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    private struct Whole: Encodable {
        let manifest: String
        let rows: [Outcome]
        let done: Int, skipped: Int, failed: Int, interrupted: Int
        let notRun: Int
        enum CodingKeys: String, CodingKey { case manifest, rows, done, skipped, failed, interrupted, notRun = "not_run" }
    }

    /// The report as --report writes it (Docs/json/batch.schema.json).
    public func write(to path: String) throws {
        let whole = Whole(manifest: manifest, rows: outcomes, done: count(.done), skipped: count(.skipped), failed: failed,
                          interrupted: count(.interrupted), notRun: count(.notRun))
        do { try Self.writeFile(path, Self.json(whole, schema: Self.schema)) } catch let error as Errno {
            throw MediaError.cannotWrite(path: path, reason: error.description)
        }
    }

    /// What is wrong with --report's name, before anything runs.
    public static func nameProblem(_ path: String) -> String? {
        guard PathName.pathExtension(path).lowercased() == "json" else { return "--report \(path): the name must end in .json" }
        var isFolder: ObjCBool = false
        let folder = PathName.folder(of: path)
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            return "--report \(path): folder \(folder) does not exist"
        }
        if let st = OutputPath.entry(path), (st.st_mode & S_IFMT) == S_IFDIR { return "--report \(path) is a folder" }
        // Said now, not after every row has run (a read-only disk, a folder of someone else's).
        if access(folder, W_OK) != 0 { return "--report \(path): cannot write in \(folder): \(String(cString: strerror(errno)))" }
        return nil
    }

    /// One screen: a line per row that was not made, then the counts.
    public var summaryLines: [String] {
        let notMade = outcomes.filter { $0.status != .done && $0.status != .skipped }.map { o in
            // compose's line names the file itself.
            let detail = o.error.map { $0.hasPrefix(o.output) ? $0 : "\(o.output): \($0)" } ?? o.output
            return "row \(o.row) \(o.status.rawValue.replacingOccurrences(of: "_", with: " ")): \(detail)"
        }
        let seconds = outcomes.filter { $0.status != .skipped }.compactMap(\.seconds).reduce(0, +)
        // The compositions' seconds add up those run side by side: the run's own time beside them.
        let time = elapsed.map { String(format: " in %.1f s (%.1f s of compositions)", $0, seconds) }
            ?? String(format: " (%.1f s of compositions)", seconds)
        return notMade + [String(format: "batch: %d rows: %d made, %d made before, %d failed, %d interrupted, %d not run",
                                 outcomes.count, count(.done), count(.skipped), failed, count(.interrupted), count(.notRun)) + time]
    }
}
