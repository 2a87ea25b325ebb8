import Foundation

/// A path's parts, taken from the text as given, never through the working directory: a
/// relative name resolved by `URL(fileURLWithPath:)` went through the current folder's name
/// as a String, and in a folder whose name is not UTF-8 (a Latin-1 "café") that name came back
/// altered, so every command said "folder ... does not exist".
public enum PathName {
    /// The folder `path` names its file in: "." for a bare name, "/" for one at the root.
    public static func folder(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let folder = trimmingTrailingSlashes(String(trimmed[..<slash]))
        return folder.isEmpty ? "/" : folder
    }

    /// The file's own name: what follows the last slash.
    public static func last(_ path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        return trimmed.lastIndex(of: "/").map { String(trimmed[trimmed.index(after: $0)...]) } ?? trimmed
    }

    /// The name's extension ("" with none; a leading dot starts no extension).
    public static func pathExtension(_ path: String) -> String {
        let name = last(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// `path` without its extension and its dot.
    public static func deletingExtension(_ path: String) -> String {
        let ext = pathExtension(path)
        return ext.isEmpty ? path : String(trimmingTrailingSlashes(path).dropLast(ext.count + 1))
    }

    /// `name` in `folder` ("." left out, as the user would write it).
    public static func join(_ folder: String, _ name: String) -> String {
        folder == "." ? name : folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        return String(p)
    }
}
