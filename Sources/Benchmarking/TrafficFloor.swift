import Compositor
import Foundation

/// The least a raw path's frame can cost on this machine: the bytes it must read, each read
/// once, and the bytes it writes, each written once, with nothing computed in between
/// (vector loads summed, `memset` for the writes), on as many threads as the path uses. A
/// path's time over this floor, measured in the same run, says how far its code is from the
/// memory; a millisecond figure on a shared machine says mostly how busy the machine was.
final class TrafficFloor: ForkJoinJob {
    /// Rows of bytes: `rows` rows of `rowBytes` bytes, `stride` apart.
    struct Region {
        var base: UnsafeMutablePointer<UInt8>
        var rowBytes: Int
        var rows: Int
        var stride: Int

        init(base: UnsafeMutablePointer<UInt8>, rowBytes: Int, rows: Int, stride: Int) {
            self.base = base
            self.rowBytes = rowBytes
            self.rows = rows
            self.stride = stride
        }

        /// A plane's rectangle, one byte a sample.
        init(_ plane: PlaneView, _ rect: Rect) {
            self.init(base: plane.base + rect.y * plane.stride + rect.x, rowBytes: rect.width, rows: rect.height,
                      stride: plane.stride)
        }

        var bytes: Int { rowBytes * rows }
    }

    private var reads: [Region] = []
    private var writes: [Region] = []
    private let fork: ForkJoin?
    /// What the reads summed to, one per half, kept so that the compiler cannot drop them.
    private(set) var checksums: (UInt64, UInt64) = (0, 0)

    init(threads: Int) { fork = threads > 1 ? ForkJoin(name: "dualcam-floor") : nil }

    /// One frame's traffic: `reads`, then `writes`.
    func run(reads: [Region], writes: [Region]) {
        self.reads = reads
        self.writes = writes
        if let fork { fork.run(self) } else { run(part: 0, of: 1) }
    }

    /// Part `part` of every region's rows (all of them as part 0 of 1).
    func run(part: Int, of parts: Int) {
        var sum = SIMD16<UInt16>()
        for r in reads {
            for y in ForkJoin.rows(part, of: r.rows, parts: parts) {
                let row = UnsafeRawPointer(r.base + y * r.stride)
                var x = 0
                while x + 16 <= r.rowBytes {
                    sum &+= SIMD16<UInt16>(truncatingIfNeeded: row.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self))
                    x += 16
                }
                while x < r.rowBytes {
                    sum[0] &+= UInt16(row.load(fromByteOffset: x, as: UInt8.self))
                    x += 1
                }
            }
        }
        let value = UInt8(truncatingIfNeeded: sum.wrappedSum())
        for w in writes {
            for y in ForkJoin.rows(part, of: w.rows, parts: parts) {
                memset(w.base + y * w.stride, Int32(value), w.rowBytes)
            }
        }
        if part == 1 { checksums.1 &+= UInt64(value) } else { checksums.0 &+= UInt64(value) }
    }
}
