import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// `dualcam batch MANIFEST`: one composition per row of a CSV file (a header row first) or of
/// a JSON Lines file (an object per line), each row `back`, `front`, `output` and any of
/// compose's options as a column. Paths are relative to the manifest's folder. Everything
/// that can be told without running anything is checked here, for every row, before any row
/// runs: the CLI only parses its own options and prints.
public struct BatchManifest: Sendable {
    /// One composition: where it is in the manifest (0-based, as a job array counts), its
    /// files resolved against the manifest's folder, and compose's options from its columns.
    public struct Row: Sendable, Equatable {
        public var index: Int
        public var back: String
        public var front: String
        public var output: String
        /// compose's options the row sets, by column name (an empty cell sets none).
        public var settings: [String: String]
        /// back, front and output as the manifest writes them (relative to its folder): what
        /// the row is, however the manifest is named (from another folder, another node).
        public var written: [String] = []

        /// compose's arguments for this row: `defaults` (the batch's command line, by column
        /// name) where the row sets nothing.
        public func composeArguments(defaults: [String: String]) -> [String] {
            arguments(files: [back, front, output].map(Self.notAnOption), defaults: defaults)
        }

        private func arguments(files: [String], defaults: [String: String]) -> [String] {
            let merged = defaults.merging(settings) { _, own in own }
            return [files[0], files[1], "-o", files[2]] + BatchManifest.columns.flatMap { column in
                merged[column.name].map { column.arguments($0) } ?? []
            }
        }

        /// A file named "-x.mov" in the working folder is "./-x.mov" to compose, not an option.
        static func notAnOption(_ path: String) -> String { path.hasPrefix("-") ? "./" + path : path }

        /// What the row's output is made from: its arguments and its inputs as they are now
        /// (size and modification time), so that a changed input or option is made again.
        public func digest(defaults: [String: String]) -> String {
            var text = arguments(files: written.isEmpty ? [back, front, output] : written, defaults: defaults).joined(separator: "\u{0}")
            for input in [back, front] {
                var st = stat()
                if stat(input, &st) == 0 { text += "\u{0}\(st.st_size)\u{0}\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)" }
            }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            let hex = String(hash, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    /// A column compose takes: a value (`--size 1280x720`), a switch (`--shadow` or
    /// `--no-shadow`), or swap times (`--swap-at` for each, written "12 40.5" in one cell).
    public struct Column: Sendable {
        public enum Kind: Sendable { case value, toggle, times }
        public let name: String
        public let kind: Kind

        func arguments(_ value: String) -> [String] {
            switch kind {
            case .value: return ["--\(name)", value]
            case .toggle: return Self.isOn(value) ? ["--\(name)"] : ["--no-\(name)"]
            case .times: return Self.times(value).flatMap { ["--\(name)", $0] }
            }
        }

        static func isOn(_ value: String) -> Bool { ["1", "true", "yes", "on"].contains(value.lowercased()) }
        static func isToggle(_ value: String) -> Bool { ["0", "1", "true", "false", "yes", "no", "on", "off"].contains(value.lowercased()) }
        static func times(_ value: String) -> [String] { value.split(whereSeparator: { " ;|".contains($0) }).map(String.init) }
    }

    /// compose's options a row may set, as its columns are named (snake_case names are taken
    /// too). What the batch itself decides (messages, --json, --overwrite) is not among them.
    public static let columns: [Column] = [
        "size", "rate", "rotate", "location", "codec", "encoder", "preset", "crf", "bitrate", "audio-bitrate", "layout", "inset",
        "corner", "margin", "corner-radius", "border", "audio",
    ].map { Column(name: $0, kind: .value) } + [Column(name: "shadow", kind: .toggle), Column(name: "swap-at", kind: .times)]

    public static let fileColumns = ["back", "front", "output"]

    public let path: String
    public let rows: [Row]

    /// Reads and checks the whole manifest; every problem found, one line each (nothing runs
    /// while there is one).
    public static func read(_ path: String) -> Result<BatchManifest, BatchProblems> {
        let (manifest, problems) = readAll(path)
        guard let manifest, problems.isEmpty else { return .failure(BatchProblems(lines: problems)) }
        return .success(manifest)
    }

    /// The rows that are right and the problems of the others, so that a caller can check
    /// more of the rows that are right and say everything in one go; no manifest where the
    /// file itself cannot be read.
    public static func readAll(_ path: String) -> (manifest: BatchManifest?, problems: [String]) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            return (nil, ["\(path): cannot be read as a UTF-8 text file"])
        }
        let folder = PathName.folder(of: path)
        let records: [(line: Int, fields: [String: String])]
        switch path.lowercased().hasSuffix(".jsonl") || path.lowercased().hasSuffix(".ndjson") ? jsonLines(text) : csv(text) {
        case let .success(read): records = read
        case let .failure(problem): return (nil, ["\(path): \(problem.lines.joined(separator: "; "))"])
        }
        guard !records.isEmpty else { return (nil, ["\(path): no rows"]) }
        var problems: [String] = [], rows: [Row] = [], named: Set<String> = []
        for record in records {
            for key in record.fields.keys.sorted() where columnName(key).map({ !named.contains($0) }) ?? false {
                let name = columnName(key)!
                named.insert(name)
                guard !fileColumns.contains(name), !columns.contains(where: { $0.name == name }) else { continue }
                problems.append("\(path):\(record.line): unknown column \(key) (back, front, output, or one of compose's options: "
                                + columns.map(\.name).joined(separator: ", ") + ")")
            }
        }
        for (index, record) in records.enumerated() {
            switch row(index: index, record.fields, folder: folder) {
            case let .success(row): rows.append(row)
            case let .failure(found): problems += found.lines.map { "\(path):\(record.line): row \(index): \($0)" }
            }
        }
        problems += crossChecks(rows, path: path, lines: records.map(\.line))
        return (BatchManifest(path: path, rows: rows), problems)
    }

    static func row(index: Int, _ fields: [String: String], folder: String) -> Result<Row, BatchProblems> {
        var problems: [String] = [], settings: [String: String] = [:]
        var files: [String: String] = [:]
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            guard let name = columnName(key) else { continue }
            // No file name or option holds one; the system would end the name there.
            if value.contains("\u{0}") { return .failure(BatchProblems(lines: ["\(name) holds a NUL byte"])) }
            let value = value.trimmingCharacters(in: .whitespaces)
            if fileColumns.contains(name) {
                files[name] = value
            } else if let column = columns.first(where: { $0.name == name }) {
                guard !value.isEmpty else { continue }  // an empty cell: the batch's default
                if column.kind == .toggle && !Column.isToggle(value) {
                    problems.append("\(name) must be true or false; got \(value)")
                } else {
                    settings[column.name] = value
                }
            }
        }
        for name in fileColumns where (files[name] ?? "").isEmpty { problems.append("no \(name)") }
        for name in ["back", "front"] {
            guard let given = files[name], !given.isEmpty else { continue }
            let path = PathName.join(folder, given)
            var isFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
                problems.append("\(name) \(given): no such file")
            } else if isFolder.boolValue {
                problems.append("\(name) \(given) is a folder")
            }
        }
        // compose makes no folder: a row that would fail at its end is refused before any runs
        // (on a cluster, every task of the array would fail).
        if let given = files["output"], !given.isEmpty {
            let parent = PathName.folder(of: PathName.join(folder, given))
            var isFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder) || !isFolder.boolValue {
                problems.append("output \(given): folder \(PathName.folder(of: given)) does not exist")
            }
            // Each row keeps its result there: a file of anyone else's is not written over.
            let result = BatchReport.resultPath(for: PathName.join(folder, given))
            if OutputPath.entry(result) != nil && !BatchReport.isResultFile(result) {
                problems.append("output \(given): \(PathName.last(result)) is there and is not a batch's result file (move it away: it would be written over)")
            }
        }
        guard problems.isEmpty else { return .failure(BatchProblems(lines: problems)) }
        func resolved(_ name: String) -> String { PathName.join(folder, files[name]!) }
        var row = Row(index: index, back: resolved("back"), front: resolved("front"), output: resolved("output"), settings: settings)
        row.written = fileColumns.map { files[$0]! }
        return .success(row)
    }

    /// A column as named in the manifest, in compose's terms (`swap_at`, `Swap-At`: swap-at).
    static func columnName(_ key: String) -> String? {
        let name = key.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "_", with: "-")
        return name.isEmpty ? nil : name
    }

    /// Two rows writing one file, or a row writing what another reads.
    static func crossChecks(_ rows: [Row], path: String, lines: [Int]) -> [String] {
        var problems: [String] = [], writer: [String: Int] = [:]
        for row in rows {
            let key = normalized(row.output)
            if let first = writer[key] {
                problems.append("\(path):\(lines[row.index]): row \(row.index): output \(row.output) is row \(first)'s output too")
            } else {
                writer[key] = row.index
            }
        }
        for row in rows {
            for input in [row.back, row.front] {
                if let other = writer[normalized(input)] {
                    problems.append("\(path):\(lines[row.index]): row \(row.index): \(input) is the output of row \(other)")
                }
            }
        }
        return problems
    }

    /// One spelling of a file's place: absolute, with its folder's links followed (two rows
    /// writing out/a.mov and link-to-out/a.mov write one file).
    public static func normalized(_ path: String) -> String {
        let standard = URL(fileURLWithPath: path).standardizedFileURL.path
        guard let real = realpath(PathName.folder(of: standard), nil) else { return standard }
        defer { free(real) }
        let folder = String(cString: real)
        return (folder == "/" ? "" : folder) + "/" + PathName.last(standard)
    }
}

/// What is wrong with a manifest: one line each.
public struct BatchProblems: Error, Sendable {
    public var lines: [String]
}
