/// A borrowed 8-bit image plane: the compositor never owns the memory it is pointed at,
/// so the same kernels run on decoder frames, encoder frames and our own buffers.
// Sendable: a borrowed pointer: whoever hands it to another thread keeps the memory alive and unwritten meanwhile.
public struct PlaneView: @unchecked Sendable {
    public var base: UnsafeMutablePointer<UInt8>
    public var width: Int
    public var height: Int
    /// Bytes from one row to the next; at least `width`.
    public var stride: Int

    public init(base: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int) {
        precondition(width >= 0 && height >= 0 && stride >= width, "invalid plane geometry")
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
    }

    @inline(__always)
    public func row(_ y: Int) -> UnsafeMutablePointer<UInt8> { base + y * stride }

    @inline(__always)
    public subscript(x: Int, y: Int) -> UInt8 {
        get { base[y * stride + x] }
        nonmutating set { base[y * stride + x] = newValue }
    }

    /// The part of this plane covered by `rect`, sharing its memory.
    public func region(_ rect: Rect) -> PlaneView {
        precondition(rect.x >= 0 && rect.y >= 0 && rect.maxX <= width && rect.maxY <= height,
                     "region \(rect) outside \(width)x\(height) plane")
        return PlaneView(base: base + rect.y * stride + rect.x, width: rect.width,
                         height: rect.height, stride: stride)
    }

    public func fill(_ value: UInt8) {
        for y in 0..<height { row(y).update(repeating: value, count: width) }
    }

    public func copy(from source: PlaneView) {
        precondition(source.width == width && source.height == height, "plane size mismatch")
        for y in 0..<height { row(y).update(from: source.row(y), count: width) }
    }
}

/// Planar 4:2:0 YUV (I420): full-size luma, chroma planes of ceil(w/2) x ceil(h/2).
// Sendable: three borrowed planes, as PlaneView.
public struct I420View: @unchecked Sendable {
    public var y: PlaneView
    public var u: PlaneView
    public var v: PlaneView

    public init(y: PlaneView, u: PlaneView, v: PlaneView) {
        precondition(u.width == (y.width + 1) / 2 && u.height == (y.height + 1) / 2
                     && v.width == u.width && v.height == u.height, "not 4:2:0 plane sizes")
        self.y = y
        self.u = u
        self.v = v
    }

    public var size: Size { Size(width: y.width, height: y.height) }
    public var planes: [PlaneView] { [y, u, v] }

    public func fill(y luma: UInt8, u cb: UInt8, v cr: UInt8) {
        y.fill(luma)
        u.fill(cb)
        v.fill(cr)
    }

    public func copy(from source: I420View) {
        y.copy(from: source.y)
        u.copy(from: source.u)
        v.copy(from: source.v)
    }

    /// Luma columns `columns` (from an even one, an even count) and the chroma columns they
    /// cover, sharing this picture's memory.
    public func columns(_ columns: Range<Int>) -> I420View {
        precondition(columns.lowerBound % 2 == 0 && columns.count % 2 == 0, "columns \(columns) split a chroma sample")
        let chroma = columns.lowerBound / 2..<columns.upperBound / 2
        return I420View(y: y.region(Rect(x: columns.lowerBound, y: 0, width: columns.count, height: y.height)),
                        u: u.region(Rect(x: chroma.lowerBound, y: 0, width: chroma.count, height: u.height)),
                        v: v.region(Rect(x: chroma.lowerBound, y: 0, width: chroma.count, height: v.height)))
    }

    /// Chroma rows `rows` and the luma rows they cover, sharing this picture's memory.
    public func chromaRows(_ rows: Range<Int>) -> I420View {
        let top = 2 * rows.lowerBound, lumaRows = min(2 * rows.upperBound, y.height) - top
        return I420View(y: y.region(Rect(x: 0, y: top, width: y.width, height: lumaRows)),
                        u: u.region(Rect(x: 0, y: rows.lowerBound, width: u.width, height: rows.count)),
                        v: v.region(Rect(x: 0, y: rows.lowerBound, width: v.width, height: rows.count)))
    }
}

/// An I420 image that owns its memory. Rows are 64-byte aligned so SIMD loads of a row
/// start never straddle a cache line.
// Sendable: owns its memory; written by one thread at a time, handed over through a lock.
public final class I420Buffer: @unchecked Sendable {
    public let size: Size
    public let view: I420View
    /// Our allocation, or nil when the memory is `owner`'s.
    private let storage: UnsafeMutableRawPointer?
    /// What owns the memory of a wrapping buffer (an encoder frame), kept alive with it.
    private let owner: AnyObject?

    /// A buffer over memory `owner` keeps alive: a frame another library allocated, so that
    /// what is written here can be handed on without a copy.
    public init(wrapping view: I420View, owner: AnyObject) {
        size = view.size
        self.view = view
        self.owner = owner
        storage = nil
    }

    public static let rowAlignment = 64

    public init(size: Size) {
        precondition(size.width > 0 && size.height > 0, "empty image")
        self.size = size
        let a = Self.rowAlignment
        let lumaStride = (size.width + a - 1) / a * a
        let chromaWidth = (size.width + 1) / 2, chromaHeight = (size.height + 1) / 2
        let chromaStride = (chromaWidth + a - 1) / a * a
        let lumaBytes = lumaStride * size.height
        let chromaBytes = chromaStride * chromaHeight
        let storage = UnsafeMutableRawPointer.allocate(byteCount: lumaBytes + 2 * chromaBytes, alignment: a)
        self.storage = storage
        owner = nil
        let base = storage.bindMemory(to: UInt8.self, capacity: lumaBytes + 2 * chromaBytes)
        view = I420View(
            y: PlaneView(base: base, width: size.width, height: size.height, stride: lumaStride),
            u: PlaneView(base: base + lumaBytes, width: chromaWidth, height: chromaHeight, stride: chromaStride),
            v: PlaneView(base: base + lumaBytes + chromaBytes, width: chromaWidth, height: chromaHeight,
                         stride: chromaStride))
    }

    deinit { storage?.deallocate() }
}
