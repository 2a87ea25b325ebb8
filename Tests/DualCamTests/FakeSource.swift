import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// A source whose state and arrivals the test sets.
final class FakeSource: FrameSource, @unchecked Sendable {
    let feed: SourceFeed
    init(name: String) { feed = SourceFeed(name: name) }
    func open() {}
    func captureLoop() {}
    func arrive() { published(exchange.frameToFill(size: Size(width: 32, height: 32)), timestamp: monotonicNow(), matrix: .bt601) }
    func go(_ s: SourceState) { setState(s) }
}
