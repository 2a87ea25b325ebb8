/// One input picture and the matrix its Y'CbCr was encoded with.
public struct SourcePicture: @unchecked Sendable {
    public var image: I420View
    public var matrix: YCbCrMatrix
    public init(image: I420View, matrix: YCbCrMatrix) {
        self.image = image
        self.matrix = matrix
    }
}

/// Composes the picture-in-picture frame: the main picture aspect-filled over the whole
/// canvas, the inset picture aspect-filled into the inset rectangle, both re-encoded to the
/// output matrix (BT.709). Scale plans are built on first sight of a source size and reused,
/// so steady-state composition allocates nothing.
public final class PiPCompositor: @unchecked Sendable {
    public let layout: PiPLayout
    public let outputMatrix: YCbCrMatrix = .bt709

    private struct PlanKey: Hashable {
        var source: Size
        var destination: Rect
    }
    private var plans: [PlanKey: ScalePlan] = [:]
    private var conversions: [YCbCrMatrix: ColorConversion] = [:]
    private var scratch: UnsafeMutablePointer<UInt16>
    private var scratchCount: Int

    public init(layout: PiPLayout) throws(PiPLayout.Problem) {
        try layout.validate()
        self.layout = layout
        scratchCount = 4096
        scratch = .allocate(capacity: scratchCount)
        for m in YCbCrMatrix.allCases {
            if let c = ColorConversion(from: m, to: outputMatrix) { conversions[m] = c }
        }
    }

    deinit { scratch.deallocate() }

    /// Composes `main` full-frame and, unless nil, `inset` in the layout's corner.
    /// `output` must be canvas-sized. When `main.image` is `output` itself and already
    /// canvas-sized, only the inset is written (composition in place).
    public func compose(main: SourcePicture, inset: SourcePicture?, into output: I420View) {
        precondition(output.size == layout.canvas, "output is \(output.size), canvas is \(layout.canvas)")
        place(main, in: layout.fullRect, of: output)
        if let inset { place(inset, in: layout.insetRect, of: output) }
    }

    /// Scales `picture` (aspect-filled) into `rect` of `output` and converts its colours.
    public func place(_ picture: SourcePicture, in rect: Rect, of output: I420View) {
        let plan = self.plan(source: picture.image.size, destination: rect)
        if isIdentity(plan) {
            if picture.image.y.base != output.y.base {
                output.y.region(rect).copy(from: picture.image.y)
                output.u.region(plan.chromaDestination).copy(from: picture.image.u)
                output.v.region(plan.chromaDestination).copy(from: picture.image.v)
            }
        } else {
            Resample.scalar(source: picture.image.y, into: output.y.region(rect),
                            x: plan.lumaX, y: plan.lumaY, scratch: scratch)
            Resample.scalar(source: picture.image.u, into: output.u.region(plan.chromaDestination),
                            x: plan.chromaX, y: plan.chromaY, scratch: scratch)
            Resample.scalar(source: picture.image.v, into: output.v.region(plan.chromaDestination),
                            x: plan.chromaX, y: plan.chromaY, scratch: scratch)
        }
        conversions[picture.matrix]?.apply(to: output, lumaRect: rect)
    }

    /// The plan for a source size into a rect, built once.
    public func plan(source: Size, destination: Rect) -> ScalePlan {
        let key = PlanKey(source: source, destination: destination)
        if let p = plans[key] { return p }
        let p = ScalePlan(sourceSize: source, crop: .aspectFill(source: source, target: destination.size),
                          destination: destination)
        if p.scratchCount > scratchCount {
            scratch.deallocate()
            scratchCount = p.scratchCount
            scratch = .allocate(capacity: scratchCount)
        }
        plans[key] = p
        return p
    }

    private func isIdentity(_ plan: ScalePlan) -> Bool {
        plan.sourceSize == plan.destination.size && plan.destination.x % 2 == 0 && plan.destination.y % 2 == 0
    }
}
