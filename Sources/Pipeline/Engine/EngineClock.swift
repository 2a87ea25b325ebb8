import Foundation
import MediaIO

/// Where the engine reads the time and waits for its next picture. Recording runs on the
/// machine's monotonic clock; a test gives it a virtual one (as swift-nio's
/// `EmbeddedEventLoop`), which moves only inside `wait` and delivers the pictures, controls
/// and encoder progress it was given at their exact instants, so a take of minutes runs in
/// milliseconds and every slot, repeat and skip comes out the same each time.
package protocol EngineClock: AnyObject, Sendable {
    /// Seconds on this clock (monotonic: never goes back).
    func now() -> Double
    /// Waits until `signal` is signalled or `timeout` seconds pass on this clock; true when
    /// it was signalled.
    @discardableResult
    func wait(for signal: DispatchSemaphore, timeout: Double) -> Bool
}

/// The machine's monotonic clock (`CLOCK_MONOTONIC`, the clock V4L2 stamps buffers with).
package final class MonotonicClock: EngineClock {
    package static let shared = MonotonicClock()
    package func now() -> Double { monotonicNow() }
    package func wait(for signal: DispatchSemaphore, timeout: Double) -> Bool {
        signal.wait(timeout: .now() + timeout) == .success
    }
}
