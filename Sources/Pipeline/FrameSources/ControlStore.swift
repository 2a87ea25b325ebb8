import Foundation
import MediaIO

/// Camera controls saved per camera (`dualcam controls DEV --set ... --save`), applied
/// whenever that camera is opened, a replug included. Kept in
/// $XDG_CONFIG_HOME/dualcam/controls.json (~/.config when unset), keyed by the camera's bus
/// path, name and driver, which a replug keeps (a driver that gives no bus path leaves the
/// name and driver: two such cameras of one model share their controls).
public struct ControlStore: Sendable {
    public let url: URL

    struct Entry: Codable, Equatable {
        var bus: String
        var card: String
        var driver: String
        var controls: [ControlSetting]
    }
    struct Contents: Codable { var cameras: [Entry] = [] }

    public init(url: URL) { self.url = url }

    /// The user's store, or nil without a home folder.
    public static func standard(environment env: [String: String] = ProcessInfo.processInfo.environment) -> ControlStore? {
        let base = env["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? env["HOME"].map { $0 + "/.config" }
        return base.map { ControlStore(url: URL(fileURLWithPath: $0).appendingPathComponent("dualcam/controls.json")) }
    }

    func read() throws(MediaError) -> Contents {
        guard FileManager.default.fileExists(atPath: url.path) else { return Contents() }
        do { return try JSONDecoder().decode(Contents.self, from: Data(contentsOf: url)) } catch {
            throw .cannotOpen(path: url.path, reason: "not a saved-controls file (\(error.localizedDescription)); move it away to start afresh")
        }
    }

    /// The camera's entry: by bus path, name and driver. Two cameras of one model on two
    /// ports are two entries; a camera moved to another port is a new one.
    private func index(in contents: Contents, _ identity: CameraIdentity) -> Int? {
        contents.cameras.firstIndex { $0.bus == identity.bus && $0.card == identity.card && $0.driver == identity.driver }
    }

    /// What is saved for this camera (none when nothing is, or the file cannot be read).
    func saved(for identity: CameraIdentity) -> [ControlSetting] {
        guard let contents = try? read(), let i = index(in: contents, identity) else { return [] }
        return contents.cameras[i].controls
    }

    public func saved(bus: String, card: String, driver: String) -> [ControlSetting] {
        saved(for: CameraIdentity(bus: bus, card: card, driver: driver))
    }

    /// Adds `settings` to what is saved for the camera (a control named again takes the new
    /// value); an empty list with `replacing` forgets the camera. Written atomically.
    public func save(_ settings: [ControlSetting], bus: String, card: String, driver: String, replacing: Bool = false) throws(MediaError) {
        var contents = try read()
        let exact = index(in: contents, CameraIdentity(bus: bus, card: card, driver: driver))
        var entry = exact.map { contents.cameras[$0] } ?? Entry(bus: bus, card: card, driver: driver, controls: [])
        entry.controls = replacing ? settings : Self.merged(entry.controls, settings)
        if let exact { contents.cameras.remove(at: exact) }
        if !entry.controls.isEmpty { contents.cameras.append(entry) }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(contents).write(to: url, options: .atomic)
        } catch {
            throw .cannotWrite(path: url.path, reason: error.localizedDescription)
        }
    }

    /// `base` with `overrides` on top: a name in both takes the override's value and place.
    public static func merged(_ base: [ControlSetting], _ overrides: [ControlSetting]) -> [ControlSetting] {
        base.filter { b in !overrides.contains { $0.name == b.name } } + overrides
    }
}
