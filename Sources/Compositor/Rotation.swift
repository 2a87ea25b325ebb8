/// A clockwise quarter-turn rotation, as needed to show a phone clip upright.
public enum QuarterTurn: Int, Sendable, CaseIterable {
    case none = 0
    case clockwise90 = 90
    case half = 180
    case clockwise270 = 270

    /// From a display-matrix angle as libavutil reports it (counter-clockwise degrees):
    /// the turn that shows the picture upright, snapped to the nearest quarter.
    public init(displayMatrixDegrees ccw: Double) {
        var cw = Int((-ccw).rounded()) % 360
        if cw < 0 { cw += 360 }
        switch (cw + 45) / 90 % 4 {
        case 1: self = .clockwise90
        case 2: self = .half
        case 3: self = .clockwise270
        default: self = .none
        }
    }

    public func rotated(_ size: Size) -> Size {
        switch self {
        case .none, .half: return size
        case .clockwise90, .clockwise270: return Size(width: size.height, height: size.width)
        }
    }

    /// Writes `source` turned by this rotation into `destination` (already of the turned size).
    public func apply(_ source: PlaneView, into destination: PlaneView) {
        let w = source.width, h = source.height
        switch self {
        case .none:
            destination.copy(from: source)
        case .half:
            precondition(destination.width == w && destination.height == h)
            for y in 0..<h {
                let s = source.row(y), d = destination.row(h - 1 - y)
                for x in 0..<w { d[w - 1 - x] = s[x] }
            }
        case .clockwise90:
            // Source row y becomes destination column h-1-y, top to bottom.
            precondition(destination.width == h && destination.height == w)
            for y in 0..<h {
                let s = source.row(y)
                for x in 0..<w { destination[h - 1 - y, x] = s[x] }
            }
        case .clockwise270:
            precondition(destination.width == h && destination.height == w)
            for y in 0..<h {
                let s = source.row(y)
                for x in 0..<w { destination[y, w - 1 - x] = s[x] }
            }
        }
    }

    public func apply(_ source: I420View, into destination: I420View) {
        apply(source.y, into: destination.y)
        apply(source.u, into: destination.u)
        apply(source.v, into: destination.v)
    }
}
