/// One input picture and the matrix its Y'CbCr was encoded with.
// Sendable: a view of memory its owner keeps alive and unwritten while it is composed.
public struct SourcePicture: @unchecked Sendable {
    public var image: I420View
    public var matrix: YCbCrMatrix
    public init(image: I420View, matrix: YCbCrMatrix) {
        self.image = image
        self.matrix = matrix
    }
}

/// Which implementation of the kernels runs: the product uses `simd`; `scalar` is the
/// reference, kept selectable so tests compare them and benchmarks time both.
public enum KernelVariant: String, Sendable, CaseIterable {
    case simd, scalar
}

/// Composes the picture-in-picture frame: the main picture aspect-filled over the whole
/// canvas, the inset picture aspect-filled into the inset rectangle, both re-encoded to the
/// output matrix (BT.709). A layout is two placements (main and inset; side by side, left
/// and right), each drawn by the one `PictureScaler`; the styled inset adds its mask,
/// border and shadow.
// Sendable: one composing thread at a time: its scaler's plans and scratch are that thread's.
public final class PiPCompositor: @unchecked Sendable {
    public let layout: PiPLayout
    /// What every output is encoded with; cameras that unpack their own buffers re-encode to it.
    public static let outputMatrix: YCbCrMatrix = .bt709
    public var outputMatrix: YCbCrMatrix { Self.outputMatrix }

    public let kernels: KernelVariant
    public var threads: Int { scaler.threads }
    /// Draws each placement.
    public let scaler: PictureScaler
    /// The rounded corners, border and shadow; nil for the plain rectangle.
    private let styled: StyledInset?

    public init(layout: PiPLayout, kernels: KernelVariant = .simd, threads: Int = 1) throws(PiPLayout.Problem) {
        try layout.validate()
        self.layout = layout
        self.kernels = kernels
        scaler = PictureScaler(canvas: layout.canvas, kernels: kernels, threads: threads)
        styled = layout.style.isPlain || layout.arrangement == .sideBySide ? nil : StyledInset(layout: layout)
    }

    /// Composes `main` full-frame and, unless nil, `inset` in the layout's corner; side by
    /// side, `main` in the left half and `inset` in the right (with no inset, `main` fills
    /// the canvas: one camera left). `output` must be canvas-sized. When `main.image` is
    /// `output` itself and already canvas-sized, only the inset is written (composition in
    /// place, picture-in-picture only).
    public func compose(main: SourcePicture, inset: SourcePicture?, into output: I420View) {
        precondition(output.size == layout.canvas, "output is \(output.size), canvas is \(layout.canvas)")
        scaler.place(main, in: inset == nil ? layout.fullRect : layout.mainRect, of: output)
        guard let inset else { return }
        if let styled {
            // The output's corner comes into cache while the inset is scaled into the scratch.
            if kernels == .simd { styled.prefetch(output) }
            scaler.place(inset, in: styled.scratchRect, of: styled.scratch.view)
            styled.drawShadow(on: output, kernels: kernels)
            styled.drawInset(on: output, kernels: kernels)
        } else {
            scaler.place(inset, in: layout.insetRect, of: output)
        }
    }

    /// Scales `picture` (aspect-filled) into `rect` of `output` and converts its colours.
    public func place(_ picture: SourcePicture, in rect: Rect, of output: I420View) {
        scaler.place(picture, in: rect, of: output)
    }

    /// The plan for a source size into a rect, built once.
    public func plan(source: Size, destination: Rect) -> ScalePlan { scaler.plan(source: source, destination: destination) }
}

/// Scales a picture (aspect-filled) into a rectangle of another and converts its colours to
/// the output matrix: the one drawing operation every placement, the preview and each
/// camera's own file (`record --iso`) use. Scale plans are built on first sight of a source
/// size and reused, so steady-state drawing allocates nothing. With `threads` above one a
/// large placement's rows are split between the caller and worker threads (`ForkJoin`).
// Sendable: one drawing thread at a time: its plans and scratch are that thread's, its worker gets rows through ForkJoin's semaphores.
public final class PictureScaler: @unchecked Sendable {
    /// The picture drawn into: what counts as a large placement is measured against it.
    public let canvas: Size
    public let kernels: KernelVariant
    public let threads: Int

    private struct PlanKey: Hashable {
        var source: Size
        var destination: Rect
    }
    private var plans: [PlanKey: ScalePlan] = [:]
    private var conversions: [YCbCrMatrix: ColorConversion] = [:]
    private var scratch: UnsafeMutablePointer<UInt8>
    private var scratchCount: Int
    /// One per part of a split placement.
    private let simdScratch: [ResampleScratch]
    private var fork: ForkJoin?
    private lazy var placement = Placement(self)

    /// One placement's rows for the threads, refilled for every split placement.
    private final class Placement: ForkJoinJob {
        unowned let scaler: PictureScaler
        var picture: SourcePicture?, rect = Rect(x: 0, y: 0, width: 0, height: 0), output: I420View?, plan: ScalePlan?
        init(_ scaler: PictureScaler) { self.scaler = scaler }
        func run(part: Int, of parts: Int) { scaler.placeRows(picture!, in: rect, of: output!, plan: plan!, part: part, of: parts) }
    }

    /// The most threads a placement is split over: rows enough for each at 8K.
    public static let maxThreads = 8

    public init(canvas: Size, kernels: KernelVariant = .simd, threads: Int = 1) {
        self.canvas = canvas
        self.kernels = kernels
        self.threads = kernels == .simd ? min(max(threads, 1), Self.maxThreads) : 1
        simdScratch = (0..<self.threads).map { _ in ResampleScratch() }
        scratchCount = 4096
        scratch = .allocate(capacity: scratchCount)
        for m in YCbCrMatrix.allCases {
            if let c = ColorConversion(from: m, to: PiPCompositor.outputMatrix) { conversions[m] = c }
        }
    }

    deinit { scratch.deallocate() }

    /// The whole canvas.
    public var fullRect: Rect { Rect(x: 0, y: 0, width: canvas.width, height: canvas.height) }

    /// Scales `picture` (aspect-filled) into `rect` of `output` and converts its colours.
    public func place(_ picture: SourcePicture, in rect: Rect, of output: I420View) {
        let plan = self.plan(source: picture.image.size, destination: rect)
        // Composing in place into a frame that needs no colour change: nothing to do at all
        // (and no reason to wake the worker).
        if isIdentity(plan) && picture.image.y.base == output.y.base && conversions[picture.matrix] == nil { return }
        // Only big placements are split: big in what they write, or in what they read (an
        // inset taken from a 1080p or 4K picture reads a third of it, cold). A 720p camera's
        // inset is bound by memory, which two threads here share (measured: slower on two
        // threads), and pays the hand-off for nothing.
        let quarterCanvas = canvas.width * canvas.height / 4
        if threads > 1 && max(rect.width * rect.height, Int(plan.crop.width * plan.crop.height)) >= quarterCanvas {
            if fork == nil { fork = ForkJoin(name: "dualcam-compositor", parts: threads) }
            (placement.picture, placement.rect, placement.output, placement.plan) = (picture, rect, output, plan)
            fork!.run(placement)
            (placement.picture, placement.output, placement.plan) = (nil, nil, nil)
        } else {
            placeRows(picture, in: rect, of: output, plan: plan, part: 0, of: 1)
        }
    }

    /// Does part `part` of `parts` of a placement's rows, top first. Parts meet on even luma
    /// rows of the canvas, so they never share a chroma row.
    private func placeRows(_ picture: SourcePicture, in rect: Rect, of output: I420View, plan: ScalePlan, part: Int, of parts: Int) {
        let cd = plan.chromaDestination
        // Where part k begins, in the placement's luma and chroma rows.
        func lumaStart(_ k: Int) -> Int { k == 0 ? 0 : k == parts ? rect.height : ((rect.y + rect.height * k / parts) & ~1) - rect.y }
        func chromaStart(_ k: Int) -> Int { k == 0 ? 0 : k == parts ? cd.height : (rect.y + lumaStart(k)) / 2 - cd.y }
        let luma = lumaStart(part)..<lumaStart(part + 1)
        let chroma = chromaStart(part)..<chromaStart(part + 1)
        let scratch = simdScratch[part]
        if isIdentity(plan) {
            if picture.image.y.base != output.y.base {
                copy(picture.image.y, rows: luma, into: output.y.region(rect))
                copy(picture.image.u, rows: chroma, into: output.u.region(cd))
                copy(picture.image.v, rows: chroma, into: output.v.region(cd))
            }
        } else {
            // Three calls, not a loop over an array: an array literal here could allocate per frame.
            resample(picture.image.y, into: output.y.region(rect), x: plan.lumaX, y: plan.lumaY, rows: luma, scratch)
            resample(picture.image.u, into: output.u.region(cd), x: plan.chromaX, y: plan.chromaY, rows: chroma, scratch)
            resample(picture.image.v, into: output.v.region(cd), x: plan.chromaX, y: plan.chromaY, rows: chroma, scratch)
        }
        if let conversion = conversions[picture.matrix] {
            let rows = Rect(x: rect.x, y: rect.y + luma.lowerBound, width: rect.width, height: luma.count)
            switch kernels {
            case .simd: conversion.apply(to: output, lumaRect: rows)
            case .scalar: conversion.applyScalar(to: output, lumaRect: rows)
            }
        }
    }

    private func resample(_ source: PlaneView, into destination: PlaneView, x: FilterTable, y: FilterTable,
                          rows: Range<Int>, _ simdScratch: ResampleScratch) {
        switch kernels {
        case .simd: Resample.simd(source: source, into: destination, x: x, y: y, rows: rows, scratch: simdScratch)
        case .scalar: Resample.scalar(source: source, into: destination, x: x, y: y, scratch: scratch)
        }
    }

    private func copy(_ source: PlaneView, rows: Range<Int>, into destination: PlaneView) {
        for y in rows {
            switch kernels {
            case .simd: Kernels.copySIMD(source.row(y), destination.row(y), count: source.width)
            case .scalar: Kernels.copyScalar(source.row(y), destination.row(y), count: source.width)
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
