// Swift has no prefetch API, but it can call an LLVM intrinsic by name. Source frames arrive
// cold from the camera or decoder, and the resampler reads short row segments (a crop) that
// the hardware prefetcher does not follow across rows: measured here, a cold 720p inset went
// from 190 us to about 90 us once the rows a band ahead were prefetched.
#if DUALCAM_SANITIZED
// Sanitizer instrumentation turns this call into an `invoke`, which LLVM refuses for an
// intrinsic; a prefetch is only a hint, so sanitizer builds go without it.
@inline(__always)
private func llvmPrefetch(_ address: UnsafeRawPointer, _ write: Int32, _ locality: Int32, _ dataCache: Int32) {}
#else
@_silgen_name("llvm.prefetch.p0")
private func llvmPrefetch(_ address: UnsafeRawPointer, _ write: Int32, _ locality: Int32, _ dataCache: Int32)
#endif

enum Prefetch {
    static let lineBytes = 64

    /// Asks for `count` bytes from `start` to be brought into cache, without waiting.
    @inline(__always)
    static func bytes(_ start: UnsafeRawPointer, count: Int) {
        var offset = 0
        while offset < count {
            llvmPrefetch(start + offset, 0, 3, 1)
            offset &+= lineBytes
        }
    }

    /// Asks for `columns` of each row in `rows` to be brought into cache, without waiting.
    @inline(__always)
    static func rows(_ plane: PlaneView, _ rows: Range<Int>, columns: Range<Int>) {
        guard !columns.isEmpty else { return }
        for r in rows {
            let base = UnsafeRawPointer(plane.row(r))
            var x = columns.lowerBound
            while x < columns.upperBound {
                llvmPrefetch(base + x, 0, 3, 1)
                x &+= lineBytes
            }
            llvmPrefetch(base + columns.upperBound - 1, 0, 3, 1)
        }
    }
}
