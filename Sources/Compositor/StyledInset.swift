/// Draws a styled inset: the shadow darkens the main picture, the inset picture (scaled into
/// a scratch buffer first, as it covers the main picture only partly at its corners) is laid
/// over it through its rounded mask, and the border colour through the ring between the
/// outer and inner shapes. Masks and scratch are made once per layout: nothing per frame.
final class StyledInset {
    let style: InsetStyle
    let rect: Rect
    /// Where the inset is scaled to: a buffer with the inset at the same position parity as on
    /// the canvas, so its chroma samples line up with the canvas's.
    let scratch: I420Buffer
    let scratchRect: Rect

    struct Mask {
        let area: Rect
        let luma: [UInt8]
        let chromaArea: Rect
        let chroma: [UInt8]
        init(area: Rect, luma: [UInt8]) {
            self.area = area
            self.luma = luma
            (chroma, chromaArea) = RoundedRectMask.chroma(of: luma, area: area)
        }
    }
    /// The inset picture's own shape (inside the border, if any).
    let picture: Mask
    /// The whole inset's shape, border included; nil without a border.
    let border: Mask?
    let shadow: Mask?
    /// Per shadow row (luma, then chroma): the columns (of the shadow's area) the inset then
    /// covers wholly. The shadow there is never seen, so the product path leaves them out:
    /// they are most of its work. The scalar reference shades them all, and tests require
    /// the same frame.
    private var hiddenLuma: [Range<Int>] = [], hiddenChroma: [Range<Int>] = []
    /// Per row of the picture's mask (luma, then chroma): the columns it covers wholly, where
    /// laying the picture over is a copy (a mask byte of 255 weighs exactly all). Outside the
    /// rounded corners' rows that is the whole row.
    private let opaqueLuma: [Range<Int>], opaqueChroma: [Range<Int>]

    init(layout: PiPLayout) {
        style = layout.style
        rect = layout.insetRect
        scratchRect = Rect(x: rect.x & 1, y: rect.y & 1, width: rect.width, height: rect.height)
        scratch = I420Buffer(size: Size(width: scratchRect.maxX, height: scratchRect.maxY))
        let radius = style.cornerRadius, b = style.border
        let inner = Rect(x: rect.x + b, y: rect.y + b, width: rect.width - 2 * b, height: rect.height - 2 * b)
        picture = Mask(area: rect, luma: RoundedRectMask.coverage(of: inner, radius: max(radius - b, 0), over: rect))
        opaqueLuma = Self.opaqueRuns(of: picture.luma, at: picture.area, in: picture.area)
        opaqueChroma = Self.opaqueRuns(of: picture.chroma, at: picture.chromaArea, in: picture.chromaArea)
        border = b > 0 ? Mask(area: rect, luma: RoundedRectMask.coverage(of: rect, radius: radius, over: rect)) : nil
        if style.shadow {
            let area = style.affectedRect(inset: rect, canvas: layout.canvas)
            let shadow = Mask(area: area, luma: RoundedRectMask.shadow(of: InsetStyle.shadowShape(of: rect),
                                                                       radius: radius, over: area))
            self.shadow = shadow
            let cover = border ?? picture
            hiddenLuma = Self.opaqueRuns(of: cover.luma, at: cover.area, in: shadow.area)
            hiddenChroma = Self.opaqueRuns(of: cover.chroma, at: cover.chromaArea, in: shadow.chromaArea)
        } else {
            shadow = nil
        }
    }

    /// For each row of `area`, the longest run of columns where `mask` (over `maskArea`, inside
    /// `area`) is wholly opaque, in `area`'s columns; empty where there is none.
    private static func opaqueRuns(of mask: [UInt8], at maskArea: Rect, in area: Rect) -> [Range<Int>] {
        (0..<area.height).map { y in
            let my = area.y + y - maskArea.y
            guard my >= 0, my < maskArea.height else { return 0..<0 }
            var best = 0..<0, start: Int?
            for x in 0...maskArea.width {
                if x < maskArea.width && mask[my * maskArea.width + x] == 255 {
                    if start == nil { start = x }
                } else if let s = start {
                    if x - s > best.count { best = s..<x }
                    start = nil
                }
            }
            let offset = maskArea.x - area.x
            return (best.lowerBound + offset)..<(best.upperBound + offset)
        }
    }

    /// Asks for the part of `output` the style reads (and writes) to be brought into cache,
    /// before the inset is scaled: a camera's or decoder's frame arrives cold, and its short
    /// row segments here would otherwise miss one after another (measured: +0.17 ms of a
    /// 1080p frame's composition without this).
    func prefetch(_ output: I420View) {
        let area = shadow?.area ?? rect, chroma = area.chroma420
        Prefetch.rows(output.y, area.y..<area.maxY, columns: area.x..<area.maxX)
        Prefetch.rows(output.u, chroma.y..<chroma.maxY, columns: chroma.x..<chroma.maxX)
        Prefetch.rows(output.v, chroma.y..<chroma.maxY, columns: chroma.x..<chroma.maxX)
    }

    /// The shadow on the main picture (before the inset is laid over it).
    func drawShadow(on output: I420View, kernels: KernelVariant) {
        guard let shadow else { return }
        blend(constant: InsetStyle.shadowLuma, chroma: InsetStyle.neutralChroma, through: shadow, on: output, kernels,
              skipping: (hiddenLuma, hiddenChroma))
    }

    /// After the inset has been scaled into `scratch`: the border, then the picture.
    func drawInset(on output: I420View, kernels: KernelVariant) {
        if let border {
            blend(constant: InsetStyle.borderLuma, chroma: InsetStyle.neutralChroma, through: border, on: output, kernels)
        }
        let source = scratch.view
        let chromaSource = scratchRect.chroma420
        blend(source.y.region(scratchRect), through: picture.luma, into: output.y.region(picture.area), kernels,
              opaque: opaqueLuma)
        blend(source.u.region(chromaSource), through: picture.chroma, into: output.u.region(picture.chromaArea), kernels,
              opaque: opaqueChroma)
        blend(source.v.region(chromaSource), through: picture.chroma, into: output.v.region(picture.chromaArea), kernels,
              opaque: opaqueChroma)
    }

    /// `opaque`: per row, columns the product path copies (the scalar reference blends every
    /// column, to the same bytes).
    private func blend(_ top: PlaneView, through mask: [UInt8], into plane: PlaneView, _ kernels: KernelVariant,
                       opaque: [Range<Int>]) {
        mask.withUnsafeBufferPointer { m in
            for y in 0..<plane.height {
                let maskRow = m.baseAddress! + y * plane.width, from = top.row(y), row = plane.row(y)
                guard kernels == .simd else {
                    Kernels.blendScalar(from, mask: maskRow, count: plane.width, into: row)
                    continue
                }
                let copied = opaque[y]
                Kernels.blendSIMD(from, mask: maskRow, count: copied.lowerBound, into: row)
                (row + copied.lowerBound).update(from: from + copied.lowerBound, count: copied.count)
                Kernels.blendSIMD(from + copied.upperBound, mask: maskRow + copied.upperBound,
                                  count: plane.width - copied.upperBound, into: row + copied.upperBound)
            }
        }
    }

    /// `skipping`: per row, columns left as they are on the product path (the scalar
    /// reference blends every column).
    private func blend(constant luma: UInt8, chroma: UInt8, through mask: Mask, on output: I420View,
                       _ kernels: KernelVariant, skipping: ([Range<Int>], [Range<Int>])? = nil) {
        blend(constant: luma, through: mask.luma, into: output.y.region(mask.area), kernels, skipping: skipping?.0)
        blend(constant: chroma, through: mask.chroma, into: output.u.region(mask.chromaArea), kernels, skipping: skipping?.1)
        blend(constant: chroma, through: mask.chroma, into: output.v.region(mask.chromaArea), kernels, skipping: skipping?.1)
    }

    private func blend(constant value: UInt8, through mask: [UInt8], into plane: PlaneView,
                       _ kernels: KernelVariant, skipping hidden: [Range<Int>]?) {
        mask.withUnsafeBufferPointer { m in
            for y in 0..<plane.height {
                let maskRow = m.baseAddress! + y * plane.width, row = plane.row(y)
                guard kernels == .simd else {
                    Kernels.blendConstantScalar(value, mask: maskRow, count: plane.width, into: row)
                    continue
                }
                let skip = hidden?[y] ?? 0..<0
                if skip.isEmpty {
                    Kernels.blendConstantSIMD(value, mask: maskRow, count: plane.width, into: row)
                } else {
                    Kernels.blendConstantSIMD(value, mask: maskRow, count: skip.lowerBound, into: row)
                    Kernels.blendConstantSIMD(value, mask: maskRow + skip.upperBound, count: plane.width - skip.upperBound,
                                              into: row + skip.upperBound)
                }
            }
        }
    }
}
