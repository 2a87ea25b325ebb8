import Foundation
@testable import Compositor
import Testing

@Suite struct ForkJoinTests {
    /// The halves run at the same time: each writes only its own counters (one array for
    /// both was a data race, which ThreadSanitizer reported).
    final class Counting: ForkJoinJob {
        let caller = pthread_self()
        var topRuns = 0, bottomRuns = 0, bottomOnTheWorker = 0
        func run(half: Int) {
            if half == 0 { topRuns += 1; return }
            bottomRuns += 1
            if pthread_equal(pthread_self(), caller) == 0 { bottomOnTheWorker += 1 }
        }
    }

    /// Each call runs both halves, the second on another thread, and returns after both.
    @Test func bothHalvesRunAndFinishBeforeTheCallReturns() {
        let fork = ForkJoin(name: "dualcam-test")
        let job = Counting()
        for i in 1...1000 {
            fork.run(job)
            // Both halves are done when `run` returns.
            if job.topRuns != i || job.bottomRuns != i { break }
        }
        #expect(job.topRuns == 1000 && job.bottomRuns == 1000)
        #expect(job.bottomOnTheWorker == 1000)
        #expect(ForkJoin.rows(0, of: 135) == 0..<67 && ForkJoin.rows(1, of: 135) == 67..<135)
    }
}
