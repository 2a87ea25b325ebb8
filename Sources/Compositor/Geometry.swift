public struct Size: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)" }
    public var chroma420: Size { Size(width: (width + 1) / 2, height: (height + 1) / 2) }

    /// Parses "WxH" (e.g. "160x213").
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }
}

public struct Rect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var size: Size { Size(width: width, height: height) }
    public var description: String { "\(width)x\(height)@\(x),\(y)" }

    /// The chroma samples of a 4:2:0 plane that any luma pixel of this rect uses.
    /// A rect on odd coordinates shares its edge chroma rows/columns with what lies
    /// beside it; the rect's own content wins those shared samples.
    public var chroma420: Rect {
        let x0 = x >> 1, y0 = y >> 1
        let x1 = (maxX + 1) >> 1, y1 = (maxY + 1) >> 1
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// A sub-pixel rectangle of a source image, in luma pixels.
public struct CropRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)@\(x),\(y)" }

    /// The centred crop of `source` with the aspect ratio of `target` ("aspect fill"):
    /// the whole target is covered, nothing is stretched, the excess is cut evenly from
    /// both sides. Sub-pixel, so odd sizes lose no precision to rounding.
    public static func aspectFill(source: Size, target: Size) -> CropRect {
        precondition(source.width > 0 && source.height > 0 && target.width > 0 && target.height > 0)
        let sw = Double(source.width), sh = Double(source.height)
        // Compare sw/sh with tw/th without dividing: exact for all integer sizes.
        let lhs = source.width * target.height, rhs = target.width * source.height
        if lhs > rhs {  // source is wider: cut left and right
            let w = sh * Double(target.width) / Double(target.height)
            return CropRect(x: (sw - w) / 2, y: 0, width: w, height: sh)
        } else if lhs < rhs {  // source is taller: cut top and bottom
            let h = sw * Double(target.height) / Double(target.width)
            return CropRect(x: 0, y: (sh - h) / 2, width: sw, height: h)
        }
        return CropRect(x: 0, y: 0, width: sw, height: sh)
    }
}

public enum Corner: String, CaseIterable, Sendable {
    case topRight = "top-right"
    case topLeft = "top-left"
    case bottomRight = "bottom-right"
    case bottomLeft = "bottom-left"
}

/// How the two pictures share the canvas.
public enum Arrangement: String, CaseIterable, Sendable {
    /// The main picture over the whole canvas, the other in an inset in a corner.
    case pip
    /// Each picture aspect-filled into its half of the canvas, the main one on the left.
    case sideBySide = "side-by-side"
}

/// Where the two pictures go on the output canvas.
public struct PiPLayout: Hashable, Sendable {
    public var canvas: Size
    public var inset: Size
    public var corner: Corner
    public var margin: Int
    public var style: InsetStyle
    /// Side by side, the inset's size, corner, margin and style do not apply: the "inset"
    /// is the right half of the canvas.
    public var arrangement = Arrangement.pip

    public static let defaultCanvas = Size(width: 1920, height: 1080)
    public static let defaultInset = Size(width: 160, height: 213)
    public static let defaultMargin = 16

    /// The smallest inset offered: below it a rounded, bordered inset shows nothing of its
    /// picture.
    public static let minimumInset = Size(width: 16, height: 16)

    public init(canvas: Size = PiPLayout.defaultCanvas, inset: Size = PiPLayout.defaultInset,
                corner: Corner = .topRight, margin: Int = PiPLayout.defaultMargin, style: InsetStyle = .plain) {
        self.canvas = canvas
        self.inset = inset
        self.corner = corner
        self.margin = margin
        self.style = style
    }

    public enum Problem: Error, CustomStringConvertible, Equatable {
        case insetDoesNotFit(inset: Size, margin: Int, canvas: Size)
        case negativeMargin(Int)
        case style(InsetStyle.Problem)
        public var description: String {
            switch self {
            case let .insetDoesNotFit(inset, margin, canvas):
                return "inset \(inset) with a \(margin) px margin does not fit in \(canvas)"
            case let .negativeMargin(m):
                return "margin must be 0 or more, got \(m)"
            case let .style(problem):
                return problem.description
            }
        }
    }

    public func validate() throws(Problem) {
        if arrangement == .sideBySide { return }
        guard margin >= 0 else { throw .negativeMargin(margin) }
        guard inset.width >= 1, inset.height >= 1,
              // Subtracted, not added: a margin or inset near Int.max must not overflow.
              inset.width <= canvas.width, inset.height <= canvas.height,
              margin <= canvas.width - inset.width, margin <= canvas.height - inset.height
        else { throw .insetDoesNotFit(inset: inset, margin: margin, canvas: canvas) }
        do { try style.validate(inset: inset) } catch { throw .style(error) }
    }

    /// The left half side by side (an even width, so that the halves share no chroma
    /// column), the whole canvas in picture-in-picture.
    public var mainRect: Rect {
        guard arrangement == .sideBySide else { return fullRect }
        return Rect(x: 0, y: 0, width: (canvas.width / 2) & ~1, height: canvas.height)
    }

    /// The inset's luma rectangle on the canvas (side by side: the right half).
    public var insetRect: Rect {
        if arrangement == .sideBySide {
            let left = (canvas.width / 2) & ~1
            return Rect(x: left, y: 0, width: canvas.width - left, height: canvas.height)
        }
        let right = canvas.width - margin - inset.width
        let bottom = canvas.height - margin - inset.height
        switch corner {
        case .topRight: return Rect(x: right, y: margin, width: inset.width, height: inset.height)
        case .topLeft: return Rect(x: margin, y: margin, width: inset.width, height: inset.height)
        case .bottomRight: return Rect(x: right, y: bottom, width: inset.width, height: inset.height)
        case .bottomLeft: return Rect(x: margin, y: bottom, width: inset.width, height: inset.height)
        }
    }

    public var fullRect: Rect { Rect(x: 0, y: 0, width: canvas.width, height: canvas.height) }

    /// The corner an inset dropped with its centre at (`x`, `y`) on the canvas settles in:
    /// the one whose quarter of the canvas holds that point.
    public func corner(nearest x: Double, _ y: Double) -> Corner {
        let left = x < Double(canvas.width) / 2, top = y < Double(canvas.height) / 2
        switch (left, top) {
        case (true, true): return .topLeft
        case (false, true): return .topRight
        case (true, false): return .bottomLeft
        case (false, false): return .bottomRight
        }
    }

    /// Whether a canvas-sized picture may carry the inset drawn into it (composition in
    /// place) and still serve as the inset source after a swap: true when the inset's
    /// rectangle lies outside the crop the inset then shows of it, by more than any
    /// filter's reach. With the default layout the inset shows the middle 810 columns of
    /// 1920, far from the corner.
    public var insetCornerUnseenInInset: Bool {
        // Side by side, the other half overlaps what the main picture is scaled from.
        if arrangement == .sideBySide { return false }
        let crop = CropRect.aspectFill(source: canvas, target: inset)
        let reach = 8.0  // pixels a downscaling filter reads beyond its crop, with room to spare
        let r = style.affectedRect(inset: insetRect, canvas: canvas)  // the shadow changes pixels too
        let apart = Double(r.maxX) + reach <= crop.x || Double(r.x) - reach >= crop.x + crop.width
            || Double(r.maxY) + reach <= crop.y || Double(r.y) - reach >= crop.y + crop.height
        return apart
    }
}
