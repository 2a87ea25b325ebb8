import Foundation

/// Items a producer hands to a consumer thread of its own, in order, the producer never
/// waiting: a live recording's composing or encoding thread must not be held up by an
/// output that is behind (a camera device, a network, an encoder below its priority). It is
/// bounded in count and in cost (bytes, say); what happens to an item over the bound is the
/// owner's choice (`Overflow`). The consumer waits in `next()` until there is an item or the
/// queue is closed.
///
/// State of the owner's that must change together with the queue (what the consumer is doing
/// with what it took, counts of what was let go) can live under the queue's own lock:
/// `withLock`, `next(_:)` and `offer(_:lettingGo:)` run the owner's code under it, and every
/// `withLock` wakes whoever waits on such state (`withLock(when:)`).
// Sendable: everything under `condition`.
package final class HandoffQueue<Item>: @unchecked Sendable {
    /// What an offer over the bound does.
    package enum Overflow: Sendable {
        /// The new item is not queued (the owner has it back).
        case refuseNew
        /// What is queued and the new item are let go: the consumer starts again from what
        /// comes next (a stream resuming at a keyframe).
        case dropQueued
        /// The newest queued item is let go and the new one takes its place: the consumer
        /// gets the newest there is (a picture for a camera device).
        case replaceNewest
    }

    /// How a queue is closed: offers are refused either way.
    package enum Closing: Sendable, Equatable {
        /// The consumer gets what is queued first.
        case afterQueued
        /// The consumer gets nothing more; what was queued is handed back to the closer.
        case now
    }

    package enum Offered: Sendable, Equatable {
        /// Queued, maybe in the place of items handed to `lettingGo`.
        case queued
        /// Over the bound: not queued. `count` and `cost`: what was queued then (before a
        /// `dropQueued` let it go).
        case overflowed(count: Int, cost: Int)
        /// Closed: not queued, nothing let go.
        case closed
    }

    private let condition = NSCondition()
    private var contents: Contents
    private let overflow: Overflow

    /// `countLimit`, `costLimit`: what may be queued at once; an item that would take the
    /// queue past either overflows. `cost`: an item's share of `costLimit`, read once, when it
    /// is offered (the consumer may change what it measures).
    package init(countLimit: Int = .max, costLimit: Int = .max, cost: @escaping (Item) -> Int = { _ in 0 },
                 overflow: Overflow) {
        precondition(countLimit > 0, "a queue that can hold nothing hands nothing over")
        contents = Contents(countLimit: countLimit, costLimit: costLimit, cost: cost)
        self.overflow = overflow
    }

    /// Queues `item` unless the queue is closed or the item overflows it, and returns at once.
    /// `lettingGo`: runs under the lock with the items the overflow let go (the replaced
    /// newest, or what was queued and `item`), so that the owner's state kept under it changes
    /// with the queue. It must not call the queue.
    @discardableResult
    package func offer(_ item: Item, lettingGo: ([Item]) -> Void = { _ in }) -> Offered {
        condition.lock()
        defer { condition.unlock() }
        if contents.closing != nil { return .closed }
        let added = contents.cost(item)
        if !contents.fits(cost: added) {
            let before = Offered.overflowed(count: contents.count, cost: contents.queuedCost)
            switch overflow {
            case .refuseNew:
                return before
            case .dropQueued:
                lettingGo(contents.removeAll() + [item])
                return before
            case .replaceNewest:
                // Newest first until it fits; alone over the cost bound it is queued all the
                // same: the newest is what the consumer is to get.
                var replaced: [Item] = []
                while !contents.fits(cost: added), let newest = contents.removeLast() { replaced.insert(newest, at: 0) }
                if !replaced.isEmpty { lettingGo(replaced) }
            }
        }
        contents.append(item, cost: added)
        condition.broadcast()
        return .queued
    }

    /// The oldest item, once there is one; nil once the queue is closed (`now`, or
    /// `afterQueued` with nothing left).
    package func next() -> Item? { next { $0 } }

    /// `next()`, and `taking` run with the item before the lock is let go: the owner's state
    /// kept under the lock changes as the item leaves (what the consumer has in hand), with no
    /// moment between the two for an offer or a close to see.
    package func next<Result>(_ taking: (Item) -> Result) -> Result? {
        condition.lock()
        defer { condition.unlock() }
        if contents.isEmpty && contents.closing == nil {
            // Those waiting for an idle consumer are woken once per wait, not at each wake-up
            // of it: two consumers would wake each other for ever.
            contents.consumersWaiting += 1
            condition.broadcast()
            while contents.isEmpty && contents.closing == nil { condition.wait() }
            contents.consumersWaiting -= 1
        }
        guard contents.closing != .now, let item = contents.removeFirst() else { return nil }
        return taking(item)
    }

    /// Closes the queue (a later `now` overrides an earlier `afterQueued`) and wakes the
    /// consumer; with `now`, what was queued, for the closer to let go or keep.
    @discardableResult
    package func close(_ closing: Closing) -> [Item] {
        withLock { $0.close(closing) }
    }

    /// Runs `body` under the queue's lock, once `ready` holds (checked under the lock, again
    /// after each change the queue or a `withLock` makes) or `deadline` has passed; whoever
    /// waits is woken afterwards. `body` must not call the queue: it has its contents.
    package func withLock<Result, E: Error>(when ready: (Contents) -> Bool = { _ in true }, deadline: Date? = nil,
                                            _ body: (inout Contents) throws(E) -> Result) throws(E) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(contents) {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return try body(&contents)
    }

    /// How many items are queued, and their cost.
    package var count: Int { read { $0.count } }
    package var queuedCost: Int { read { $0.queuedCost } }
    /// Nil while it takes offers.
    package var closing: Closing? { read { $0.closing } }

    /// Looking changes nothing, so wakes no one.
    private func read<Result>(_ body: (Contents) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body(contents)
    }

    /// The queued items in order, their count and cost, and whether the queue is closed: the
    /// queue's own state, seen and changed under its lock.
    package struct Contents {
        /// Those from `head` on are queued: the ones before it were taken (emptied, so that
        /// what they hold goes when the consumer is done with it), their places reclaimed now
        /// and then rather than the array moved for each. Each with its cost as offered.
        private var entries: [(item: Item?, cost: Int)] = []
        private var head = 0
        package private(set) var queuedCost = 0
        package private(set) var closing: Closing?
        /// Consumers in `next` with nothing to take (`withLock(when:)` sees one start to wait):
        /// the consumer is idle, or a close has one to wake.
        package fileprivate(set) var consumersWaiting = 0
        fileprivate let countLimit: Int
        fileprivate let costLimit: Int
        fileprivate let cost: (Item) -> Int

        fileprivate init(countLimit: Int, costLimit: Int, cost: @escaping (Item) -> Int) {
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.cost = cost
        }

        package var count: Int { entries.count - head }
        package var isEmpty: Bool { head == entries.count }

        fileprivate func fits(cost added: Int) -> Bool {
            count < countLimit && queuedCost <= costLimit - added
        }

        /// Takes every queued item out, oldest first.
        package mutating func removeAll() -> [Item] {
            let all = entries[head...].map { $0.item! }
            entries.removeAll()
            head = 0
            queuedCost = 0
            return all
        }

        /// See `HandoffQueue.close`.
        @discardableResult
        package mutating func close(_ how: Closing) -> [Item] {
            if closing != .now { closing = how }
            return how == .now ? removeAll() : []
        }

        fileprivate mutating func append(_ item: Item, cost added: Int) {
            entries.append((item, added))
            queuedCost += added
        }

        fileprivate mutating func removeFirst() -> Item? {
            guard head < entries.count else { return nil }
            let (item, taken) = entries[head]
            entries[head].item = nil
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
            queuedCost -= taken
            return item
        }

        fileprivate mutating func removeLast() -> Item? {
            guard head < entries.count else { return nil }
            let (item, taken) = entries.removeLast()
            queuedCost -= taken
            return item
        }
    }
}
