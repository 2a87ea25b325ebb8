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

    /// Which implementation of the kernels runs: the product uses `simd`; `scalar` is the
    /// reference, kept selectable so benchmarks can time both.
    public enum Kernels: String, Sendable, CaseIterable {
        case simd, scalar
    }
    public let kernels: Kernels

    private struct PlanKey: Hashable {
        var source: Size
        var destination: Rect
    }
    private var plans: [PlanKey: ScalePlan] = [:]
    private var conversions: [YCbCrMatrix: ColorConversion] = [:]
    private var scratch: UnsafeMutablePointer<UInt16>
    private var scratchCount: Int
    private let simdScratch = ResampleScratch()

    public init(layout: PiPLayout, kernels: Kernels = .simd) throws(PiPLayout.Problem) {
        try layout.validate()
        self.layout = layout
        self.kernels = kernels
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
                copy(picture.image.y, into: output.y.region(rect))
                copy(picture.image.u, into: output.u.region(plan.chromaDestination))
                copy(picture.image.v, into: output.v.region(plan.chromaDestination))
            }
        } else {
            // Three calls, not a loop over an array: an array literal here could allocate per frame.
            resample(picture.image.y, into: output.y.region(rect), x: plan.lumaX, y: plan.lumaY)
            resample(picture.image.u, into: output.u.region(plan.chromaDestination), x: plan.chromaX, y: plan.chromaY)
            resample(picture.image.v, into: output.v.region(plan.chromaDestination), x: plan.chromaX, y: plan.chromaY)
        }
        if let conversion = conversions[picture.matrix] {
            switch kernels {
            case .simd: conversion.apply(to: output, lumaRect: rect)
            case .scalar: conversion.applyScalar(to: output, lumaRect: rect)
            }
        }
    }

    private func resample(_ source: PlaneView, into destination: PlaneView, x: FilterTable, y: FilterTable) {
        switch kernels {
        case .simd: Resample.simd(source: source, into: destination, x: x, y: y, scratch: simdScratch)
        case .scalar: Resample.scalar(source: source, into: destination, x: x, y: y, scratch: scratch)
        }
    }

    private func copy(_ source: PlaneView, into destination: PlaneView) {
        for y in 0..<source.height {
            switch kernels {
            case .simd: Compositor.Kernels.copySIMD(source.row(y), destination.row(y), count: source.width)
            case .scalar: Compositor.Kernels.copyScalar(source.row(y), destination.row(y), count: source.width)
            }
        }
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
