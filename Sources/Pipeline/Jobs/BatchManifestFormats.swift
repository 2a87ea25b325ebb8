import Foundation

extension BatchManifest {
    typealias Records = Result<[(line: Int, fields: [String: String])], BatchProblems>

    /// RFC 4180 CSV: a header row naming the columns, then a row per composition; fields may be
    /// quoted ("a, b", "say ""hi"""), quoted ones may hold line breaks; blank lines and lines
    /// starting with # are skipped. `line`: where each row starts, for the messages.
    static func csv(_ text: String) -> Records {
        var records: [(line: Int, cells: [String])] = []
        var cells: [String] = [], cell = "", quoted = false, wasQuoted = false, line = 1, rowStart = 1
        var characters = Array(text.replacingOccurrences(of: "\r\n", with: "\n")).makeIterator()
        var pending: Character? = nil
        func endRow() {
            cells.append(cell)
            let blank = cells.count == 1 && cells[0].trimmingCharacters(in: .whitespaces).isEmpty && !wasQuoted
            if !blank && !(cells[0].hasPrefix("#") && !wasQuoted) { records.append((rowStart, cells)) }
            cells = []; cell = ""; wasQuoted = false
        }
        while let c = pending ?? characters.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    let next = characters.next()
                    if next == "\"" { cell.append("\"") } else { quoted = false; pending = next }
                } else {
                    if c == "\n" { line += 1 }
                    cell.append(c)
                }
            } else if c == "\"" && cell.trimmingCharacters(in: .whitespaces).isEmpty {
                quoted = true; wasQuoted = true; cell = ""
            } else if c == "," {
                cells.append(cell); cell = ""
            } else if c == "\n" {
                endRow()
                line += 1; rowStart = line
            } else {
                cell.append(c)
            }
        }
        if quoted { return .failure(BatchProblems(lines: ["a quoted field opened on line \(rowStart) is never closed"])) }
        if !cell.isEmpty || !cells.isEmpty { endRow() }
        guard let header = records.first else { return .success([]) }
        let names = header.cells.map { $0.trimmingCharacters(in: .whitespaces) }
        if let twice = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            return .failure(BatchProblems(lines: ["column \(twice) is named twice in the header"]))
        }
        var rows: [(line: Int, fields: [String: String])] = []
        for record in records.dropFirst() {
            guard record.cells.count == names.count else {
                return .failure(BatchProblems(lines: ["line \(record.line) has \(record.cells.count) fields, the header \(names.count)"]))
            }
            rows.append((record.line, Dictionary(uniqueKeysWithValues: zip(names, record.cells))))
        }
        return .success(rows)
    }

    /// JSON Lines: an object per line, its values strings, numbers or booleans (a list of
    /// numbers for swap_at); blank lines skipped.
    static func jsonLines(_ text: String) -> Records {
        var rows: [(line: Int, fields: [String: String])] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return .failure(BatchProblems(lines: ["line \(n + 1) is not a JSON object"]))
            }
            var fields: [String: String] = [:]
            for (key, value) in object {
                guard let text = cellText(value) else {
                    return .failure(BatchProblems(lines: ["line \(n + 1): \(key) is neither text, a number nor true or false"]))
                }
                fields[key] = text
            }
            rows.append((n + 1, fields))
        }
        return .success(rows)
    }

    private static func cellText(_ value: Any) -> String? {
        switch value {
        case let text as String: return text
        // JSON's true and false, not the numbers 1 and 0 (both can be read as either).
        case let flag as Bool where ["true", "false"].contains(String(describing: value)): return flag ? "true" : "false"
        case let number as NSNumber: return number.stringValue
        case let list as [Any]: return list.allSatisfy({ cellText($0) != nil }) ? list.compactMap(cellText).joined(separator: " ") : nil
        default: return nil
        }
    }

    /// The batch's own command line after its options: compose's options, by column name, as
    /// defaults for every row (`--size 1280x720 --no-shadow --swap-at 5 --swap-at 9`).
    public static func defaults(from arguments: [String]) -> Result<[String: String], BatchProblems> {
        var defaults: [String: String] = [:], problems: [String] = [], i = 0
        while i < arguments.count {
            let word = arguments[i]
            let name = String(word.drop { $0 == "-" }).split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            let inline = word.contains("=") ? String(word.split(separator: "=", maxSplits: 1)[1]) : nil
            let toggled = name.hasPrefix("no-") ? String(name.dropFirst(3)) : name
            if word.hasPrefix("--"), let column = columns.first(where: { $0.name == toggled }), column.kind == .toggle {
                defaults[column.name] = toggled == name ? "true" : "false"
                i += 1
            } else if word.hasPrefix("--"), let column = columns.first(where: { $0.name == name }),
                      let value = inline ?? (i + 1 < arguments.count ? arguments[i + 1] : nil) {
                defaults[column.name] = column.kind == .times && defaults[column.name] != nil ? defaults[column.name]! + " " + value : value
                i += inline == nil ? 2 : 1
            } else {
                problems.append("\(word): not an option a row can take (compose's: "
                                + columns.map { "--\($0.name)" }.joined(separator: ", ") + ")")
                i += 1
            }
        }
        return problems.isEmpty ? .success(defaults) : .failure(BatchProblems(lines: problems))
    }
}
