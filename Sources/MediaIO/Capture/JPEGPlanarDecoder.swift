import CJPEG
import Compositor

/// libjpeg-turbo decoding a webcam's JPEG to its own full-range planes, not upsampled (4:2:2
/// or 4:2:0 as sent), at 1/2^shift by IDCT scaling. Owns the decompressor and the planes,
/// both kept from frame to frame. Measured on this project's 1080p camera JPEGs, it decodes
/// in ~70 % of libavcodec's time (Benchmarks/floors.sh prints both).
package final class JPEGPlanarDecoder {
    /// A picture being decoded: where its planes are, and how they fill.
    package struct Picture {
        let source: JPEGRange.Source
        let size: Size
        /// Calls to `readBand`, each adding `lumaRowsPerBand` rows (the last may add fewer).
        let bands: Int
        let lumaRowsPerBand: Int
    }

    private let decompressor: OpaquePointer
    private var planes: [UnsafeMutableRawBufferPointer] = []
    private var strides: [Int32] = []
    private var layout = dc_jpeg_layout()
    private var bases: [UnsafeMutablePointer<UInt8>?] = []
    let name: String

    package init(name: String) throws(MediaError) {
        guard let d = dc_jpeg_create() else { throw .undecodable(path: name, reason: "cannot create a JPEG decoder") }
        decompressor = OpaquePointer(d)
        self.name = name
    }

    deinit {
        dc_jpeg_destroy(UnsafeMutablePointer(decompressor))
        for p in planes { p.deallocate() }
    }

    private var state: UnsafeMutablePointer<dc_jpeg> { UnsafeMutablePointer(decompressor) }

    private func failure() -> MediaError {
        let message = withUnsafeBytes(of: state.pointee.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return .undecodable(path: name, reason: message.isEmpty ? "damaged JPEG data" : message)
    }

    /// Reads `jpeg`'s header and starts decoding it at 1/2^shift; nil for a JPEG this path
    /// does not take (not 3-component Y'CbCr 4:2:2 or 4:2:0 as written): libavcodec's turn.
    /// The JPEG's bytes must stay until `finish` or `abort`.
    package func start(_ jpeg: UnsafeRawBufferPointer, shift: Int) throws(MediaError) -> Picture? {
        guard dc_jpeg_start(state, jpeg.baseAddress!.assumingMemoryBound(to: UInt8.self), jpeg.count, Int32(shift),
                            &layout) == 0 else { throw failure() }
        guard Self.takes(layout) else {
            abort()
            return nil
        }
        ensurePlanes(layout)
        let source = JPEGRange.Source(y: UnsafePointer(bases[0]!), yStride: Int(strides[0]), u: UnsafePointer(bases[1]!),
                                      v: UnsafePointer(bases[2]!), chromaStride: Int(strides[1]),
                                      chromaFullHeight: layout.band_rows.0 == layout.band_rows.1)
        return Picture(source: source, size: Size(width: Int(layout.width), height: Int(layout.height)),
                       bands: Int(dc_jpeg_bands(state)), lumaRowsPerBand: Int(layout.band_rows.0))
    }

    /// Decodes the next band of rows (bands go in order). On a throw the decode is over.
    func readBand(_ band: Int) throws(MediaError) {
        guard dc_jpeg_read_band(state, &bases, strides, &layout, Int32(band)) == 0 else { throw failure() }
    }

    /// Ends a decode whose every band was read. Throws on a damaged JPEG, including one
    /// libjpeg would patch and show (lost entropy-coded data): a camera frame like that is
    /// skipped.
    func finish() throws(MediaError) {
        guard dc_jpeg_finish(state) == 0, state.pointee.damaged == 0 else { throw failure() }
    }

    func abort() { dc_jpeg_abort(state) }

    /// Decodes every band of `picture` and finishes: for a caller with nothing to do
    /// between bands.
    package func readAll(_ picture: Picture) throws(MediaError) {
        for band in 0..<picture.bands { try readBand(band) }
        try finish()
    }

    /// Luma at twice the chroma's width, and at the chroma's height (4:2:2) or twice it
    /// (4:2:0), in the planes as written: judged by the planes, not the sampling factors,
    /// which say 4:2:2 more than one way (libavcodec writes 2x2,1x2,1x2) and which IDCT
    /// scaling can overrule (enlarging chroma).
    static func takes(_ l: dc_jpeg_layout) -> Bool {
        guard l.components == 3, l.ycbcr != 0, l.width >= 2, l.height >= 2,
              l.plane_width.1 == l.plane_width.2, l.plane_width.0 == 2 * l.plane_width.1,
              l.band_rows.1 == l.band_rows.2 else { return false }
        return l.band_rows.0 == l.band_rows.1 || l.band_rows.0 == 2 * l.band_rows.1
    }

    /// The planes' size, from the layout: reallocated only when it changes (a camera that
    /// changed its size or role), so a frame allocates nothing here.
    private func ensurePlanes(_ l: dc_jpeg_layout) {
        let a = I420Buffer.rowAlignment
        func stride(_ width: Int32) -> Int32 { Int32((Int(width) + a - 1) / a * a) }
        let wanted = (stride(l.plane_width.0), stride(l.plane_width.1), stride(l.plane_width.2))
        let bytes = (Int(wanted.0) * Int(l.plane_rows.0), Int(wanted.1) * Int(l.plane_rows.1), Int(wanted.2) * Int(l.plane_rows.2))
        if strides.count == 3, wanted == (strides[0], strides[1], strides[2]),
           planes[0].count >= bytes.0, planes[1].count >= bytes.1, planes[2].count >= bytes.2 { return }
        for p in planes { p.deallocate() }
        strides = [wanted.0, wanted.1, wanted.2]
        planes = [bytes.0, bytes.1, bytes.2].map { .allocate(byteCount: $0, alignment: a) }
        bases = planes.map { $0.baseAddress!.assumingMemoryBound(to: UInt8.self) }
    }
}
