#if canImport(Glibc)
import Glibc
#endif

/// Seconds on CLOCK_MONOTONIC, the clock V4L2 stamps buffers with and ALSA is asked to.
public func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return timespecSeconds(ts)
}

/// A timespec as seconds.
public func timespecSeconds(_ ts: timespec) -> Double {
    Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// CPU time this thread has used: what a piece of work costs, whatever else the machine is doing.
public func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return timespecSeconds(ts)
}

/// Seconds since this process was started (its exec, so the loader's and the runtime's start
/// are in it): the kernel's start time (/proc/self/stat, clock ticks since boot) against
/// CLOCK_BOOTTIME, the clock it counts on. nil where /proc cannot be read.
public func secondsSinceProcessStart() -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // After the name, field 3 (state) comes first: start time, field 22, is the 20th.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
    guard fields.count > 19, let ticks = Double(fields[19]), ticksPerSecond > 0 else { return nil }
    var ts = timespec()
    clock_gettime(CLOCK_BOOTTIME, &ts)
    return timespecSeconds(ts) - ticks / Double(ticksPerSecond)
}
