import Foundation
import MediaIO

/// The name a take is given when the user gives none.
package enum TakeNames {
    /// A name no file (nor a file of its take: --iso's, the intermediate) has and no other
    /// dualcam holds: STEM.mov, else STEM-2.mov, ... A name the user did not choose must never
    /// ask for --overwrite, which would replace an earlier take (two takes in a second). The
    /// name is held from here until the take's file claims it (`NameReservation`), so records
    /// started together each take their own.
    package static func free(stem: String) -> String {
        for n in 1...999 {
            let name = n == 1 ? "\(stem).mov" : "\(stem)-\(n).mov"
            let family = [name, IsoFiles.path(for: name, role: "back"), IsoFiles.path(for: name, role: "front"),
                          IsoFiles.sidecar(for: name), Intermediate.path(for: name)]
            if family.allSatisfy({ OutputPath.entry($0) == nil }) && NameReservation.reserve(name) { return name }
        }
        return "\(stem).mov"
    }
}
