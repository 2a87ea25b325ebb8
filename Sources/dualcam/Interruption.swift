import Foundation
import Synchronization

/// Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a dropped SSH session) ask the running job
/// to stop at the next frame, so it can remove its temporary file or, when recording,
/// finish the file, instead of dying mid-write.
enum Interruption {
    private static let flag = Atomic<Bool>(false)
    private static let finishing = Atomic<Bool>(false)
    private static let swaps = Atomic<Int>(0)
    /// What a signal that comes while the file is being finished prints (from the handler:
    /// only write(2) is safe there, so the text is made beforehand).
    nonisolated(unsafe) private static var busyMessage: UnsafeMutableBufferPointer<CChar>?

    static var requested: Bool { flag.load(ordering: .relaxed) }
    static func request() { flag.store(true, ordering: .relaxed) }
    /// Swap requests so far (SIGUSR1, `s` on stdin).
    static var swapCount: Int { swaps.load(ordering: .relaxed) }
    static func requestSwap() { swaps.add(1, ordering: .relaxed) }

    /// From now on a further signal is answered with `message` instead of being taken as a
    /// new request: the file is being finished and stopping again would gain nothing.
    static func enterFinishing(message: String) {
        let text = Array("dualcam: \(message)\n".utf8CString.dropLast())
        let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: text.count)
        _ = buffer.initialize(from: text)
        busyMessage = buffer
        finishing.store(true, ordering: .releasing)
    }

    /// SIGUSR1 asks for a swap at the next frame.
    static func installSwapSignal() {
        _ = swaps.load(ordering: .relaxed)
        let handler: @convention(c) (Int32) -> Void = { _ in Interruption.swaps.add(1, ordering: .relaxed) }
        signal(SIGUSR1, handler)
        unblock([SIGUSR1])
    }

    static func install() {
        // Touch every static the handler uses: their lazy initialisation is not signal-safe.
        _ = flag.load(ordering: .relaxed)
        _ = finishing.load(ordering: .relaxed)
        let handler: @convention(c) (Int32) -> Void = { _ in
            let already = Interruption.flag.exchange(true, ordering: .relaxed)
            if already, Interruption.finishing.load(ordering: .acquiring), let m = Interruption.busyMessage {
                _ = write(2, m.baseAddress, m.count)
            }
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        signal(SIGHUP, handler)
        // With the terminal gone, writing to it must fail with an error, not kill us.
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these blocked (the mask is inherited across
        // exec); a handler never runs for a blocked signal.
        unblock([SIGINT, SIGTERM, SIGHUP])
    }

    private static func unblock(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
