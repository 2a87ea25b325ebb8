import Foundation
@testable import Pipeline
import Testing

/// TAKE.dualcam.json: written with snake_case keys, `schema` and `version`, as every JSON
/// dualcam writes; a sidecar written before that (camelCase) still tells relayout the swaps.
@Suite(.timeLimit(.minutes(1))) struct IsoSidecarTests {
    @Test func itIsWrittenInSnakeCaseWithItsSchema() throws {
        let sidecar = IsoSidecar(take: "t.mov", cameras: ["back": "t.back.mov"], swaps: [1.5], startsSwapped: true, takeID: "id-1",
                                 stoppedAt: 2.25)
        let data = try IsoSidecar.encoder.encode(sidecar)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["schema", "version", "take", "cameras", "swaps", "starts_swapped", "take_id", "stopped_at"])
        #expect(object["schema"] as? String == "dualcam.iso/1" && object["starts_swapped"] as? Bool == true)
        #expect(try IsoSidecar.decoded(from: data) == sidecar)
    }

    @Test func oneWrittenBeforeStillReads() throws {
        let earlier = #"{"cameras":{"back":"t.back.mov","front":"t.front.mov"},"startsSwapped":true,"stoppedAt":3.5,"swaps":[0.8,2],"#
            + #""take":"t.mov","takeID":"abc"}"#
        let read = try IsoSidecar.decoded(from: Data(earlier.utf8))
        #expect(read.swaps == [0.8, 2] && read.startsSwapped && read.takeID == "abc" && read.stoppedAt == 3.5 && read.schema == nil)
        // One from before takes had an identity.
        let older = try IsoSidecar.decoded(from: Data(#"{"cameras":{},"startsSwapped":false,"swaps":[],"take":"t.mov"}"#.utf8))
        #expect(older.takeID == nil && older.stoppedAt == nil && !older.startsSwapped)
    }
}
