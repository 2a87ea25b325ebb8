import Foundation

/// How the inset is drawn over the main picture: rounded, anti-aliased corners, an optional
/// light border inside its edge, and an optional soft drop shadow on the main picture.
/// `plain` is the hard-edged rectangle.
public struct InsetStyle: Hashable, Sendable, CustomStringConvertible {
    public var cornerRadius: Int
    public var border: Int
    public var shadow: Bool

    public init(cornerRadius: Int = 0, border: Int = 0, shadow: Bool = false) {
        self.cornerRadius = cornerRadius
        self.border = border
        self.shadow = shadow
    }

    public static let plain = InsetStyle()
    /// What `dualcam` draws unless told otherwise: the camera app's floating inset.
    public static let rounded = InsetStyle(cornerRadius: 12, border: 0, shadow: true)

    public var isPlain: Bool { cornerRadius == 0 && border == 0 && !shadow }

    public var description: String {
        isPlain ? "plain" : "radius \(cornerRadius) px, border \(border) px, \(shadow ? "shadow" : "no shadow")"
    }

    // The shadow: the inset's shape moved down, blurred (a Gaussian edge) and darkening the
    // main picture by up to `shadowOpacity`. Its reach past the inset stays inside the
    // default 16 px margin, so it never touches the frame's edge there.
    public static let shadowOffsetY = 3
    public static let shadowSigma = 3.5
    public static let shadowOpacity = 0.5
    /// How far beyond the shadow's shape its darkening is still visible (under 1/255).
    static var shadowReach: Int { Int((3 * shadowSigma).rounded(.up)) }

    /// Luma and chroma targets of the border and shadow colours (BT.709, limited range).
    public static let borderLuma: UInt8 = 230
    public static let shadowLuma: UInt8 = 16
    public static let neutralChroma: UInt8 = 128

    public enum Problem: Error, CustomStringConvertible, Equatable {
        case radiusTooLarge(Int, inset: Size)
        case borderTooWide(Int, inset: Size)
        case negative(String, Int)
        public var description: String {
            switch self {
            case let .radiusTooLarge(r, inset):
                return "corner radius \(r) px is more than half the \(inset) inset (at most \(min(inset.width, inset.height) / 2))"
            case let .borderTooWide(b, inset):
                return "border \(b) px is more than half the \(inset) inset (at most \(min(inset.width, inset.height) / 2))"
            case let .negative(what, value):
                return "\(what) must be 0 or more, got \(value)"
            }
        }
    }

    public func validate(inset: Size) throws(Problem) {
        guard cornerRadius >= 0 else { throw .negative("corner radius", cornerRadius) }
        guard border >= 0 else { throw .negative("border", border) }
        let half = min(inset.width, inset.height) / 2
        guard cornerRadius <= half else { throw .radiusTooLarge(cornerRadius, inset: inset) }
        guard border <= half else { throw .borderTooWide(border, inset: inset) }
    }

    /// Where the shadow's shape lies for an inset at `inset`: the inset moved down.
    public static func shadowShape(of inset: Rect) -> Rect {
        Rect(x: inset.x, y: inset.y + shadowOffsetY, width: inset.width, height: inset.height)
    }

    /// The canvas area the style may change around `inset`: the inset itself and the
    /// shadow's reach. Even-aligned where the canvas allows, so its chroma is half of it.
    public func affectedRect(inset: Rect, canvas: Size) -> Rect {
        guard shadow else { return inset }
        let s = Self.shadowShape(of: inset), reach = Self.shadowReach
        let x0 = max(0, min(inset.x, s.x - reach) & ~1), y0 = max(0, min(inset.y, s.y - reach) & ~1)
        let x1 = min(canvas.width, (max(inset.maxX, s.maxX + reach) + 1) & ~1)
        let y1 = min(canvas.height, (max(inset.maxY, s.maxY + reach) + 1) & ~1)
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// Coverage masks (0 = none, 255 = all) of a rounded rectangle and of its blurred shadow,
/// at luma and 4:2:0 chroma resolution, built once per layout.
struct RoundedRectMask {
    /// Signed distance from the point to the edge of a `width` x `height` rectangle with
    /// corners of `radius`, centred at the origin (negative inside), and whether the point
    /// lies in a corner's quadrant, where the edge is curved.
    static func distance(_ px: Double, _ py: Double, width: Double, height: Double,
                         radius: Double) -> (distance: Double, inCorner: Bool) {
        let qx = abs(px) - (width / 2 - radius), qy = abs(py) - (height / 2 - radius)
        let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
        return (outside + min(max(qx, qy), 0) - radius, qx > 0 && qy > 0)
    }

    /// Anti-aliasing ramp across a curved edge, in pixels: wider than one pixel, so a corner
    /// is smooth along its diagonal too (a one-pixel ramp leaves no pixel on the diagonal
    /// partly covered for many radii). Straight edges keep a one-pixel ramp: they lie on
    /// pixel boundaries, so every pixel there is wholly in or out and stays crisp.
    static let cornerRamp = 1.5

    /// Coverage of each pixel of `area` (canvas coordinates) by the rounded rectangle `shape`.
    static func coverage(of shape: Rect, radius: Int, over area: Rect) -> [UInt8] {
        guard shape.width > 0, shape.height > 0 else { return [UInt8](repeating: 0, count: area.width * area.height) }
        return field(of: shape, radius: radius, over: area) { d, curved in 0.5 - d / (curved && radius > 0 ? cornerRamp : 1) }
    }

    /// The shadow's darkening of each pixel of `area`: a Gaussian-blurred rounded rectangle.
    static func shadow(of shape: Rect, radius: Int, over area: Rect) -> [UInt8] {
        field(of: shape, radius: radius, over: area) { d, _ in
            InsetStyle.shadowOpacity * 0.5 * erfc(d / (InsetStyle.shadowSigma * 2.0.squareRoot()))
        }
    }

    /// `value(distance, inCorner)` of each pixel centre of `area` against `shape`, quantized.
    private static func field(of shape: Rect, radius: Int, over area: Rect,
                              _ value: (Double, Bool) -> Double) -> [UInt8] {
        let cx = Double(shape.x) + Double(shape.width) / 2, cy = Double(shape.y) + Double(shape.height) / 2
        var out = [UInt8](repeating: 0, count: area.width * area.height)
        for y in 0..<area.height {
            for x in 0..<area.width {
                let (d, curved) = distance(Double(area.x + x) + 0.5 - cx, Double(area.y + y) + 0.5 - cy,
                                           width: Double(shape.width), height: Double(shape.height), radius: Double(radius))
                out[y * area.width + x] = quantize(value(d, curved))
            }
        }
        return out
    }

    static func quantize(_ c: Double) -> UInt8 { UInt8((min(max(c, 0), 1) * 255).rounded()) }

    /// The 4:2:0 chroma mask of a luma mask over `area` (even-aligned or not): each chroma
    /// sample takes the mean of the luma samples it covers, those outside `area` counting 0.
    static func chroma(of luma: [UInt8], area: Rect) -> (mask: [UInt8], rect: Rect) {
        let c = area.chroma420
        var out = [UInt8](repeating: 0, count: c.width * c.height)
        for cy in 0..<c.height {
            for cx in 0..<c.width {
                var sum = 0
                for dy in 0..<2 {
                    for dx in 0..<2 {
                        let x = 2 * (c.x + cx) + dx - area.x, y = 2 * (c.y + cy) + dy - area.y
                        if x >= 0, x < area.width, y >= 0, y < area.height { sum += Int(luma[y * area.width + x]) }
                    }
                }
                out[cy * c.width + cx] = UInt8((sum + 2) / 4)
            }
        }
        return (out, c)
    }
}
