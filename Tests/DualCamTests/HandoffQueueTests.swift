import Foundation
import MediaIO
import Testing

/// The queue the live outputs' producers hand items to (`HandoffQueue`): the producer never
/// waits, the bounds hold, each overflow does what it says, and a close reaches the consumer.
@Suite(.timeLimit(.minutes(1))) struct HandoffQueueTests {
    /// How long a test waits for something that takes microseconds when it works.
    static let patience = 10.0

    /// Runs `body` on a thread of its own; the returned semaphore is signalled once it returned.
    static func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done
    }

    static func returned(_ done: DispatchSemaphore) -> Bool {
        done.wait(timeout: .now() + patience) == .success
    }

    /// Until a consumer waits in `next()` (within the patience), and whether one does.
    static func consumerWaits<Item>(on queue: HandoffQueue<Item>) -> Bool {
        queue.withLock(when: { $0.consumersWaiting > 0 }, deadline: Date(timeIntervalSinceNow: patience)) {
            $0.consumersWaiting > 0
        }
    }

    @Test func anOfferReturnsAtOnceWhileTheConsumerIsStuckWithWhatItTook() {
        let queue = HandoffQueue<Int>(countLimit: 4, overflow: .refuseNew)
        let tookOne = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let consumer = Self.onThread {
            // Stuck in the sink's work (a device write, a network send), the lock let go.
            guard queue.next() != nil else { return }
            tookOne.signal()
            release.wait()
        }
        queue.offer(0)
        #expect(tookOne.wait(timeout: .now() + Self.patience) == .success)
        let results = Locked<[HandoffQueue<Int>.Offered]>([])
        let producer = Self.onThread {
            for i in 1...100 {
                let offered = queue.offer(i)
                results.withLock { $0.append(offered) }
            }
        }
        #expect(Self.returned(producer), "the producer waited for a consumer that was stuck")
        release.signal()
        #expect(Self.returned(consumer))
        let offered = results.withLock { $0 }
        #expect(offered.prefix(4).allSatisfy { $0 == .queued })
        #expect(offered.dropFirst(4).allSatisfy { $0 == .overflowed(count: 4, cost: 0) })
        #expect(offered.count == 100)
    }

    @Test func theCountIsBounded() {
        let queue = HandoffQueue<Int>(countLimit: 3, overflow: .refuseNew)
        for i in 1...3 { #expect(queue.offer(i) == .queued) }
        #expect(queue.offer(4) == .overflowed(count: 3, cost: 0))
        #expect(queue.count == 3)
        #expect(queue.next() == 1)
        #expect(queue.offer(5) == .queued)
        #expect(queue.close(.now) == [2, 3, 5])
    }

    /// An item that brings the cost to the bound fits; one past it does not.
    @Test func theCostIsBounded() {
        let queue = HandoffQueue<Int>(costLimit: 10, cost: { $0 }, overflow: .refuseNew)
        #expect(queue.offer(4) == .queued)
        #expect(queue.offer(5) == .queued)
        #expect(queue.offer(2) == .overflowed(count: 2, cost: 9))
        #expect(queue.offer(1) == .queued)
        #expect(queue.queuedCost == 10)
        #expect(queue.next() == 4)
        #expect(queue.queuedCost == 6)
        #expect(queue.offer(4) == .queued)
        #expect(queue.offer(1) == .overflowed(count: 3, cost: 10))
    }

    @Test func refusingKeepsWhatIsQueuedAndHandsNothingToLetGo() {
        let queue = HandoffQueue<Int>(countLimit: 2, overflow: .refuseNew)
        var letGo: [Int] = []
        for i in 1...5 { queue.offer(i) { letGo += $0 } }
        #expect(letGo.isEmpty)
        #expect(queue.close(.now) == [1, 2])
    }

    /// What was queued and the new item go together, in order, and the next offer starts afresh.
    @Test func droppingLetsGoOfWhatIsQueuedWithTheNewItem() {
        let queue = HandoffQueue<Int>(costLimit: 10, cost: { $0 }, overflow: .dropQueued)
        var letGo: [[Int]] = []
        #expect(queue.offer(4) { letGo.append($0) } == .queued)
        #expect(queue.offer(5) { letGo.append($0) } == .queued)
        #expect(queue.offer(3) { letGo.append($0) } == .overflowed(count: 2, cost: 9))
        #expect(letGo == [[4, 5, 3]])
        #expect(queue.count == 0 && queue.queuedCost == 0)
        #expect(queue.offer(6) { letGo.append($0) } == .queued)
        #expect(letGo.count == 1)
        #expect(queue.next() == 6)
    }

    @Test func replacingKeepsTheNewest() {
        let queue = HandoffQueue<Int>(countLimit: 1, overflow: .replaceNewest)
        var letGo: [Int] = []
        for i in 1...3 { #expect(queue.offer(i) { letGo += $0 } == .queued) }
        #expect(letGo == [1, 2])
        #expect(queue.next() == 3)

        // Deeper: the oldest stay, the newest is replaced; by cost, as many newest as it takes.
        let deeper = HandoffQueue<Int>(countLimit: 3, costLimit: 10, cost: { $0 }, overflow: .replaceNewest)
        var replaced: [Int] = []
        for i in [1, 2, 3, 4] { deeper.offer(i) { replaced += $0 } }
        #expect(replaced == [3])
        #expect(deeper.offer(8) { replaced += $0 } == .queued)
        #expect(replaced == [3, 2, 4])
        #expect(deeper.close(.now) == [1, 8])
    }

    @Test func orderIsKeptAndAClosedQueueIsEmptiedBeforeTheEnd() {
        let queue = HandoffQueue<Int>(overflow: .refuseNew)
        for i in 0..<3000 { queue.offer(i) }
        var taken: [Int] = []
        for _ in 0..<1500 { taken.append(queue.next()!) }
        for i in 3000..<4000 { queue.offer(i) }
        queue.close(.afterQueued)
        #expect(queue.offer(-1) == .closed)
        while let i = queue.next() { taken.append(i) }
        #expect(taken == Array(0..<4000))
        #expect(queue.next() == nil)
    }

    @Test func closingNowWakesAWaitingConsumerWithNothing() {
        let queue = HandoffQueue<Int>(overflow: .refuseNew)
        let got = Locked<[Int?]>([])
        let consumer = Self.onThread {
            let item = queue.next()
            got.withLock { $0.append(item) }
        }
        #expect(Self.consumerWaits(on: queue))
        queue.close(.now)
        #expect(Self.returned(consumer))
        #expect(got.withLock { $0 } == [nil])
        #expect(queue.offer(1) == .closed)
    }

    @Test func closingAfterQueuedWakesAWaitingConsumerWithNothing() {
        let queue = HandoffQueue<Int>(overflow: .refuseNew)
        let consumer = Self.onThread { _ = queue.next() }
        #expect(Self.consumerWaits(on: queue))
        queue.close(.afterQueued)
        #expect(Self.returned(consumer))
    }

    /// What is queued when a close `now` comes (after one `afterQueued`) goes back to the
    /// closer, not to the consumer.
    @Test func closingNowHandsBackWhatWasQueued() {
        let queue = HandoffQueue<Int>(overflow: .refuseNew)
        for i in 1...3 { queue.offer(i) }
        #expect(queue.close(.afterQueued) == [])
        #expect(queue.close(.now) == [1, 2, 3])
        #expect(queue.closing == .now)
        #expect(queue.next() == nil)
    }

    /// `withLock(when:)` waits for the owner's state another `withLock` changes.
    @Test func aWaitOnTheOwnersStateEndsWhenItChanges() {
        let queue = HandoffQueue<Int>(overflow: .refuseNew)
        final class Flag: @unchecked Sendable { var raised = false }
        let flag = Flag()
        let waiter = Self.onThread { queue.withLock(when: { _ in flag.raised }) { _ in } }
        queue.withLock { _ in flag.raised = true }
        #expect(Self.returned(waiter))
        let start = Date()
        let timedOut = queue.withLock(when: { _ in false }, deadline: Date(timeIntervalSinceNow: 0.05)) { _ in true }
        #expect(timedOut && Date().timeIntervalSince(start) >= 0.05)
    }

    /// A consumer on a thread of its own taking every item until the queue is closed; what
    /// it took, once it has returned.
    static func draining(_ queue: HandoffQueue<Int>) -> (consumer: DispatchSemaphore, received: Locked<[Int]>) {
        let received = Locked<[Int]>([])
        let consumer = onThread {
            var mine: [Int] = []
            while let i = queue.next() { mine.append(i) }
            received.withLock { $0 = mine }
        }
        return (consumer, received)
    }

    /// A producer and a consumer at full speed: the consumer gets exactly what was queued, in
    /// order, and every offer is either queued or refused.
    @Test func twoThreadsAtFullSpeedLoseNothingAndKeepTheOrder() {
        let queue = HandoffQueue<Int>(countLimit: 64, costLimit: 1000, cost: { $0 % 50 }, overflow: .refuseNew)
        let (consumer, received) = Self.draining(queue)
        var queued: [Int] = []
        var refused = 0
        for i in 0..<200_000 {
            switch queue.offer(i) {
            case .queued: queued.append(i)
            case let .overflowed(count, cost):
                refused += 1
                #expect(count <= 64 && cost <= 1000)
            case .closed: Issue.record("closed by no one")
            }
        }
        queue.close(.afterQueued)
        #expect(Self.returned(consumer))
        #expect(received.withLock { $0 } == queued)
        #expect(queued.count + refused == 200_000)
        #expect(queue.count == 0 && queue.queuedCost == 0)
    }

    /// The same with `dropQueued`: what is received and what is let go are, together, every
    /// offer once, each in order.
    @Test func twoThreadsDroppingAtFullSpeedAccountForEveryItem() {
        let queue = HandoffQueue<Int>(countLimit: 32, overflow: .dropQueued)
        let (consumer, received) = Self.draining(queue)
        var letGo: [Int] = []
        for i in 0..<200_000 { queue.offer(i) { letGo += $0 } }
        queue.close(.afterQueued)
        #expect(Self.returned(consumer))
        let got = received.withLock { $0 }
        #expect(got == got.sorted() && letGo == letGo.sorted())
        #expect((got + letGo).sorted() == Array(0..<200_000))
    }
}
