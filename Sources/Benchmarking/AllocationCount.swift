import CFFmpeg
import Foundation

/// Allocations counted per region by libDualCamAllocationCount.so (Sources/CAllocationCount),
/// which a process preloads (LD_PRELOAD) to have its malloc and kin counted on every thread:
/// the regression gate on allocations in a frame's work, with `InstructionCount.count`
/// deciding what a region is. Nothing links the library; a process without it has no counter.
public final class AllocationCount: RegionCounter {
    public struct Counts: Sendable, Equatable {
        public var total: UInt64
        /// Above 16 KiB: frame-sized.
        public var large: UInt64
        public init(total: UInt64, large: UInt64) {
            self.total = total
            self.large = large
        }
    }

    /// The library's file name, as SwiftPM builds it beside the executables.
    public static let library = "libDualCamAllocationCount.so"

    private typealias Zero = @convention(c) () -> Void
    private typealias Count = @convention(c) (Int32) -> Void
    private typealias Read = @convention(c) (UnsafeMutablePointer<UInt64>?, UnsafeMutablePointer<UInt64>?) -> Void
    private let zeroCounts: Zero, turn: Count, read: Read
    /// What each region allocated, by the name it was recorded under.
    public private(set) var recorded: [String: Counts] = [:]

    /// Nil unless the counter is preloaded into this process.
    public init?() {
        guard let process = dlopen(nil, RTLD_NOW),
              let zero = dlsym(process, "dualcam_allocations_zero"),
              let count = dlsym(process, "dualcam_allocations_count"),
              let read = dlsym(process, "dualcam_allocations_read") else { return nil }
        zeroCounts = unsafeBitCast(zero, to: Zero.self)
        turn = unsafeBitCast(count, to: Count.self)
        self.read = unsafeBitCast(read, to: Read.self)
    }

    public func zero() { zeroCounts() }
    public func resume() { turn(1) }
    public func pause() { turn(0) }
    public func record(_ name: String) { recorded[name] = counts }

    public var counts: Counts {
        var total: UInt64 = 0, large: UInt64 = 0
        read(&total, &large)
        return Counts(total: total, large: large)
    }

    /// Whether the counter sees this process's allocations, small and large, from Swift and
    /// from a C library (libavutil's posix_memalign): a gate that counted nothing would pass
    /// every case.
    public func seesAllocations() -> Bool {
        zero()
        resume()
        let small = av_malloc(64), big = av_malloc(1 << 20)
        let swift = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 64)
        pause()
        av_free(small)
        av_free(big)
        swift.deallocate()
        let c = counts
        return c.total >= 3 && c.large >= 2
    }
}
