/// How far a picture may be shrunk while it is decoded (JPEG decoders give 1/2, 1/4 or 1/8
/// size for proportionally less work) and still cover a target at one source pixel or
/// more per output pixel once aspect-filled: the inset camera needs a fraction of its frame.
public enum DecodeScale {
    /// The size a decoder gives at 1/2^shift: each side rounded up.
    public static func reduced(_ size: Size, shift: Int) -> Size {
        Size(width: (size.width + (1 << shift) - 1) >> shift, height: (size.height + (1 << shift) - 1) >> shift)
    }

    /// The largest shift up to `maxShift` whose reduced picture's aspect-fill crop is still
    /// at least `target` in both directions.
    public static func largestShift(source: Size, covering target: Size, maxShift: Int = 3) -> Int {
        guard source.width > 0, source.height > 0, target.width > 0, target.height > 0 else { return 0 }
        var best = 0
        for shift in stride(from: 1, through: maxShift, by: 1) {
            let r = reduced(source, shift: shift)
            let crop = CropRect.aspectFill(source: r, target: target)
            guard crop.width >= Double(target.width), crop.height >= Double(target.height) else { break }
            best = shift
        }
        return best
    }
}
