import Foundation
import Synchronization

/// Ctrl-C and SIGTERM ask the running job to stop at the next frame, so it can remove its
/// temporary file (or, when recording, finalise) instead of dying mid-write.
enum Interruption {
    private static let flag = Atomic<Bool>(false)
    private static let swaps = Atomic<Int>(0)

    static var requested: Bool { flag.load(ordering: .relaxed) }
    static func request() { flag.store(true, ordering: .relaxed) }
    /// Swap requests so far (SIGUSR1, `s` on stdin).
    static var swapCount: Int { swaps.load(ordering: .relaxed) }
    static func requestSwap() { swaps.add(1, ordering: .relaxed) }

    /// SIGUSR1 asks for a swap at the next frame.
    static func installSwapSignal() {
        let handler: @convention(c) (Int32) -> Void = { _ in Interruption.swaps.add(1, ordering: .relaxed) }
        signal(SIGUSR1, handler)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGUSR1)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in Interruption.flag.store(true, ordering: .relaxed) }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        // A parent may have started us with these blocked (the mask is inherited across
        // exec); a handler never runs for a blocked signal.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
