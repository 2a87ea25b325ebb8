import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The encoder's threads yield to the picture's. On Linux a nice value belongs to one thread
/// and the threads it creates inherit it, so an encoder opened on a thread with a raised nice
/// value has every worker its library starts (x265's frame threads, its pool, its lookahead)
/// at that value, without any privilege. Raising it cannot be undone without one (RLIMIT_NICE
/// is 0 by default): what must run at full priority later is opened on another thread.
public enum ThreadPriority {
    /// How far below capture and composing the live encoder runs. Under two busy processes,
    /// x265 (wpp=0) makes 27 fps at nice 0, 8.6 at 5 and 3.6 at 10; at 10 the composing
    /// thread keeps its budget and what the encoder cannot take goes to the intermediate.
    public static let encoderNiceness: Int32 = 10

    /// Raises the calling thread's nice value by `steps` (never lowers it). False when the
    /// system refused, which only costs priority: the recording goes on.
    @discardableResult
    public static func lowerCurrentThread(by steps: Int32) -> Bool {
        let tid = id_t(dc_thread_id())
        errno = 0
        let now = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid)
        guard errno == 0 else { return false }
        return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, min(19, now + steps)) == 0
    }

    /// The calling thread's nice value.
    public static var currentNiceness: Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(dc_thread_id()))
    }

    /// Runs `body` on a thread of its own whose nice value is `steps` higher than the caller's,
    /// and returns what it made: threads `body` starts keep that value for life.
    public static func made<T>(lowerBy steps: Int32, _ body: @escaping @Sendable () throws(MediaError) -> T) throws(MediaError) -> T {
        let box = ResultBox<T>()
        let thread = OwnedThread(name: "dualcam-lowered") {
            lowerCurrentThread(by: steps)
            box.result = Result { () throws(MediaError) -> T in try body() }
        }
        thread.join()
        return try box.result!.get()
    }
}

/// A result handed from a thread that has ended (its join orders the accesses).
// Sendable: written by one thread before it ends, read by the one that joined it.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, MediaError>?
}
