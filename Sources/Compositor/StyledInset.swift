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

    init(layout: PiPLayout) {
        style = layout.style
        rect = layout.insetRect
        scratchRect = Rect(x: rect.x & 1, y: rect.y & 1, width: rect.width, height: rect.height)
        scratch = I420Buffer(size: Size(width: scratchRect.maxX, height: scratchRect.maxY))
        let radius = style.cornerRadius, b = style.border
        let inner = Rect(x: rect.x + b, y: rect.y + b, width: rect.width - 2 * b, height: rect.height - 2 * b)
        picture = Mask(area: rect, luma: RoundedRectMask.coverage(of: inner, radius: max(radius - b, 0), over: rect))
        border = b > 0 ? Mask(area: rect, luma: RoundedRectMask.coverage(of: rect, radius: radius, over: rect)) : nil
        if style.shadow {
            let area = style.affectedRect(inset: rect, canvas: layout.canvas)
            shadow = Mask(area: area, luma: RoundedRectMask.shadow(of: InsetStyle.shadowShape(of: rect),
                                                                   radius: radius, over: area))
        } else {
            shadow = nil
        }
    }

    /// Before the inset: the shadow on the main picture.
    func drawShadow(on output: I420View, kernels: PiPCompositor.Kernels) {
        guard let shadow else { return }
        blend(constant: InsetStyle.shadowLuma, chroma: InsetStyle.neutralChroma, through: shadow, on: output, kernels)
    }

    /// After the inset has been scaled into `scratch`: the border, then the picture.
    func drawInset(on output: I420View, kernels: PiPCompositor.Kernels) {
        if let border {
            blend(constant: InsetStyle.borderLuma, chroma: InsetStyle.neutralChroma, through: border, on: output, kernels)
        }
        let source = scratch.view
        let chromaSource = scratchRect.chroma420
        blend(source.y.region(scratchRect), through: picture.luma, into: output.y.region(picture.area), kernels)
        blend(source.u.region(chromaSource), through: picture.chroma, into: output.u.region(picture.chromaArea), kernels)
        blend(source.v.region(chromaSource), through: picture.chroma, into: output.v.region(picture.chromaArea), kernels)
    }

    private func blend(_ top: PlaneView, through mask: [UInt8], into plane: PlaneView, _ kernels: PiPCompositor.Kernels) {
        mask.withUnsafeBufferPointer { m in
            for y in 0..<plane.height {
                let maskRow = m.baseAddress! + y * plane.width
                switch kernels {
                case .simd: Kernels.blendSIMD(top.row(y), mask: maskRow, count: plane.width, into: plane.row(y))
                case .scalar: Kernels.blendScalar(top.row(y), mask: maskRow, count: plane.width, into: plane.row(y))
                }
            }
        }
    }

    private func blend(constant luma: UInt8, chroma: UInt8, through mask: Mask, on output: I420View,
                       _ kernels: PiPCompositor.Kernels) {
        blend(constant: luma, through: mask.luma, into: output.y.region(mask.area), kernels)
        blend(constant: chroma, through: mask.chroma, into: output.u.region(mask.chromaArea), kernels)
        blend(constant: chroma, through: mask.chroma, into: output.v.region(mask.chromaArea), kernels)
    }

    private func blend(constant value: UInt8, through mask: [UInt8], into plane: PlaneView,
                       _ kernels: PiPCompositor.Kernels) {
        mask.withUnsafeBufferPointer { m in
            for y in 0..<plane.height {
                let maskRow = m.baseAddress! + y * plane.width
                switch kernels {
                case .simd: Kernels.blendConstantSIMD(value, mask: maskRow, count: plane.width, into: plane.row(y))
                case .scalar: Kernels.blendConstantScalar(value, mask: maskRow, count: plane.width, into: plane.row(y))
                }
            }
        }
    }
}
