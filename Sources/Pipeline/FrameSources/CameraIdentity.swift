import MediaIO

/// Which physical camera a device node is, so that one unplugged and plugged back in is
/// found again whatever node number it gets. USB cameras keep their bus path (port) and
/// name; a camera moved to another port keeps only its name.
struct CameraIdentity: Equatable, Sendable {
    var bus: String
    var card: String
    var driver: String

    init(bus: String, card: String, driver: String) {
        self.bus = bus
        self.card = card
        self.driver = driver
    }

    init(_ info: CaptureDeviceInfo) { self.init(bus: info.bus, card: info.card, driver: info.driver) }

    /// The device among `devices` that is this camera: the one on the same bus path, else
    /// the only one of the same name and driver. Paths in `claimed` (the other camera's) are
    /// never it; two unclaimed cameras of one name leave it undecided (nil).
    func find(among devices: [CaptureDeviceInfo], claimed: Set<String>) -> CaptureDeviceInfo? {
        let free = devices.filter { !claimed.contains($0.path) }
        if let same = free.first(where: { CameraIdentity($0) == self }) { return same }
        let named = free.filter { $0.card == card && $0.driver == driver }
        return named.count == 1 ? named[0] : nil
    }
}
