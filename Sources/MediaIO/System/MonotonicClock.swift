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
