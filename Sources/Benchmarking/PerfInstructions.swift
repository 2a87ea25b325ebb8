import CPerfEvent
import Foundation

/// Where the instructions of a measured region are counted: started at zero, resumed and
/// paused around each counted call, and recorded under a name at the end.
public protocol RegionCounter: AnyObject {
    func zero() throws
    func resume() throws
    func pause() throws
    func record(_ name: String) throws
}

/// The CPU's own count of this thread's user-space instructions (`perf_event_open`), where a
/// machine has one: no valgrind, so counting takes as long as running, and what other
/// processes run does not enter the count. It is not callgrind's count (the CPU counts a
/// `rep movsb` once, callgrind each byte), so a baseline is compared only with its own
/// counter. Virtual machines without a virtual PMU, these development machines among them,
/// have none: `init` throws, saying so.
public final class PerfInstructions: RegionCounter {
    public struct Unavailable: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String {
            let reason = String(cString: strerror(errno))
            switch errno {
            case EACCES, EPERM:
                return "perf_event_open may not count here (\(reason)): kernel.perf_event_paranoid is above 2 or the "
                    + "process is confined"
            default:
                return "perf_event_open cannot count instructions on this machine (\(reason)): it has no hardware "
                    + "counter, as virtual machines without a virtual PMU"
            }
        }
    }

    private let fd: Int32
    /// What `record` kept, by name.
    public private(set) var totals: [String: UInt64] = [:]

    public convenience init() throws(Unavailable) {
        try self.init(software: false, config: UInt64(PERF_COUNT_HW_INSTRUCTIONS.rawValue))
    }

    /// Any counter of this thread; tests use the CPU time (`PERF_COUNT_SW_TASK_CLOCK`, in
    /// nanoseconds) to check the counting where no machine has the instruction counter.
    init(software: Bool, config: UInt64) throws(Unavailable) {
        let fd = dc_perf_open(software ? 1 : 0, config)
        guard fd >= 0 else { throw Unavailable(errno: errno) }
        self.fd = fd
    }

    /// This thread's CPU time in nanoseconds: a counter every Linux machine has.
    static func cpuTime() throws(Unavailable) -> PerfInstructions {
        try PerfInstructions(software: true, config: UInt64(PERF_COUNT_SW_TASK_CLOCK.rawValue))
    }

    deinit { close(fd) }

    public func zero() throws { try check(dc_perf_reset(fd), "reset") }
    public func resume() throws { try check(dc_perf_enable(fd), "enable") }
    public func pause() throws { try check(dc_perf_disable(fd), "disable") }

    public func record(_ name: String) throws {
        var value: UInt64 = 0
        let got = withUnsafeMutableBytes(of: &value) { read(fd, $0.baseAddress, $0.count) }
        guard got == MemoryLayout<UInt64>.size else {
            throw InstructionCount.Failure.noCounts("reading the perf counter gave \(got) bytes (\(String(cString: strerror(errno))))")
        }
        totals[name] = value
    }

    private func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else {
            throw InstructionCount.Failure.noCounts("the perf counter's \(what) failed (\(String(cString: strerror(errno))))")
        }
    }
}
