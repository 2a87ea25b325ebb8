import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

@Suite(.timeLimit(.minutes(10))) struct SourceRoleTests {
    @Test func aCameraThatComesBackTakesItsRoleBack() {
        let back = FakeSource(name: "back"), front = FakeSource(name: "front")
        back.arrive(); front.arrive()
        let set = SourceSet([back, front])
        var events: [String] = []
        #expect(set.update(at: 1, event: { events.append($0) }))
        #expect(set.driver === back && set.other === front)
        // The back camera is unplugged: the front goes full frame.
        back.go(.away("No such device"))
        #expect(set.update(at: 3, event: { events.append($0) }))
        #expect(set.driver === front && set.other == nil)
        // Plugged back in: its first frame puts it back full frame, the front in the inset.
        back.arrive()
        #expect(set.update(at: 5, event: { events.append($0) }))
        #expect(set.driver === back && set.other === front)
        #expect(events == ["at 3.00 s back lost (No such device): front goes on alone, full frame",
                           "at 5.00 s back is back: full frame again"], "\(events)")
    }

    @Test func aSourceGoneForGoodIsStoppedAndTheLastOneEndsTheRecording() {
        let back = FakeSource(name: "back"), front = FakeSource(name: "front")
        back.arrive(); front.arrive()
        let set = SourceSet([back, front])
        var events: [String] = []
        front.go(.lost("the file ended"))
        #expect(set.update(at: 2, event: { events.append($0) }))
        #expect(set.driver === back && set.other == nil && front.stopping)
        // The only camera left is away: the recording waits for it.
        back.go(.away("No such device"))
        #expect(set.update(at: 3, event: { events.append($0) }))
        #expect(events.last == "at 3.00 s back lost (No such device): waiting for a camera to come back")
        // A camera that cannot come back ends it.
        let only = FakeSource(name: "only")
        only.arrive()
        let alone = SourceSet([only])
        only.go(.lost("Input/output error"))
        #expect(!alone.update(at: 4, event: { events.append($0) }))
        #expect(events.last == "at 4.00 s only lost (Input/output error): no camera left, finishing the file")
    }

    /// Both sources ending together: each is said to be lost, what follows once.
    @Test func sourcesLeavingTogetherAreToldOfOnce() {
        let back = FakeSource(name: "back"), front = FakeSource(name: "front")
        back.arrive(); front.arrive()
        let set = SourceSet([back, front])
        var events: [String] = []
        back.go(.lost("the file ended"))
        front.go(.lost("the file ended"))
        #expect(!set.update(at: 3, event: { events.append($0) }))
        #expect(events == ["at 3.00 s back lost (the file ended)",
                           "at 3.00 s front lost (the file ended): no camera left, finishing the file"], "\(events)")
    }

    /// The file waits for the other camera's first picture, a second at most after the
    /// driving camera's first; with one camera, or both delivering, it never waits.
    @Test func theFileWaitsBrieflyForTheOtherCamerasFirstPicture() {
        var wait = StartWait()
        let held = [10, 10.9, 11.0].map { wait.holds(otherHasPicture: false, now: $0) }
        #expect(held == [true, true, false], "\(held)")
        var arrives = StartWait()
        let arriving = [(false, 10.0), (true, 10.2)].map { arrives.holds(otherHasPicture: $0.0, now: $0.1) }
        #expect(arriving == [true, false], "\(arriving)")
        var single = StartWait()
        let alone = single.holds(otherHasPicture: nil, now: 10)
        #expect(!alone)
        // The other camera's first picture, through the exchange a live source publishes to.
        let front = FakeSource(name: "front")
        #expect(!front.exchange.hasFrame)
        front.arrive()
        #expect(front.exchange.hasFrame)
    }
}
