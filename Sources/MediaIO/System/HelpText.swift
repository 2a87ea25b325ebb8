import Foundation

/// Help as the parser writes it, rearranged.
public enum HelpText {
    /// Moves the "EXAMPLES:" block, which the parser prints inside the overview, to the end.
    public static func examplesLast(_ help: String) -> String {
        var lines = help.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: "EXAMPLES:") else { return help }
        let end = lines[start...].firstIndex(where: { $0.hasPrefix("USAGE:") }) ?? lines.endIndex
        var block = Array(lines[start..<end])
        lines.removeSubrange(start..<end)
        while block.last?.isEmpty == true { block.removeLast() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return (lines + [""] + block).joined(separator: "\n")
    }
}
