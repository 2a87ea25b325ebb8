import Foundation
import MediaIO

/// TAKE.dualcam.json: what `relayout` reads to compose a take's cameras again. Its keys are
/// snake_case, with `schema` and `version`, as every JSON dualcam writes
/// (Docs/json/iso.schema.json); sidecars written before (camelCase, neither) still read.
public struct IsoSidecar: Codable, Sendable, Equatable {
    public static let schemaName = "dualcam.iso/1"
    /// What this object is, NAME/VERSION (nil in sidecars written before it had one).
    public var schema: String? = schemaName
    /// The dualcam release that wrote it.
    public var version: String? = dualcamVersion
    /// The take's file name.
    public var take: String
    /// Each camera's own file name, by role ("back", "front").
    public var cameras: [String: String]
    /// When the roles changed, in seconds of the take (to the millisecond).
    public var swaps: [Double]
    /// Whether the take began with the front camera full frame.
    public var startsSwapped: Bool
    /// The take's identity, as its files' comment tags give it (none in sidecars written
    /// before takes had one).
    public var takeID: String?
    /// Where the cameras' files stop when they stopped before the take (seconds of it): the
    /// disk had room left for the take alone.
    public var stoppedAt: Double?

    public init(take: String, cameras: [String: String], swaps: [Double], startsSwapped: Bool, takeID: String?, stoppedAt: Double?) {
        self.take = take
        self.cameras = cameras
        self.swaps = swaps
        self.startsSwapped = startsSwapped
        self.takeID = takeID
        self.stoppedAt = stoppedAt
    }

    enum CodingKeys: String, CodingKey {
        case schema, version, take, cameras, swaps, startsSwapped = "starts_swapped", takeID = "take_id", stoppedAt = "stopped_at"
    }
    /// The keys sidecars were written with before they were snake_case.
    private enum EarlierKeys: String, CodingKey { case startsSwapped, takeID, stoppedAt }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self), earlier = try decoder.container(keyedBy: EarlierKeys.self)
        schema = try keys.decodeIfPresent(String.self, forKey: .schema)
        version = try keys.decodeIfPresent(String.self, forKey: .version)
        take = try keys.decode(String.self, forKey: .take)
        cameras = try keys.decode([String: String].self, forKey: .cameras)
        swaps = try keys.decode([Double].self, forKey: .swaps)
        startsSwapped = try keys.decodeIfPresent(Bool.self, forKey: .startsSwapped) ?? earlier.decode(Bool.self, forKey: .startsSwapped)
        takeID = try keys.decodeIfPresent(String.self, forKey: .takeID) ?? earlier.decodeIfPresent(String.self, forKey: .takeID)
        stoppedAt = try keys.decodeIfPresent(Double.self, forKey: .stoppedAt) ?? earlier.decodeIfPresent(Double.self, forKey: .stoppedAt)
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    public static func decoded(from data: Data) throws -> IsoSidecar { try JSONDecoder().decode(IsoSidecar.self, from: data) }
}
