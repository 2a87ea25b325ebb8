import Foundation
import MediaIO

/// Every `--json` output in one style, for scripts: one line on stdout, snake_case keys in
/// sorted order, slashes as they are, and first what it is (`schema`: NAME/VERSION, raised when
/// a key changes meaning or goes) and which dualcam wrote it. Docs/json/*.schema.json describe
/// each; the man page shows an example of each.
enum JSONOutput {
    /// `parts` (each encoding as an object) merged into one, after `schema` and `version`.
    static func line(schema: String, _ parts: any Encodable...) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        var fields = ["\"schema\":\"\(schema)\"", "\"version\":\"\(dualcamVersion)\""]
        for part in parts {
            // Each part is one object: its members join the others (keys are not repeated).
            let text = String(decoding: try encoder.encode(part), as: UTF8.self)
            guard text.hasPrefix("{"), text.hasSuffix("}") else { continue }
            let members = text.dropFirst().dropLast()
            if !members.isEmpty { fields.append(String(members)) }
        }
        return Secrets.masked("{" + fields.joined(separator: ",") + "}", insideJSON: true)
    }
}
