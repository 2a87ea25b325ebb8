import Foundation
@testable import MediaIO
import Testing

/// Who holds a take's lock, and whether it is dying: finish waits a moment for a recording
/// killed an instant ago, never for a live one.
@Suite(.timeLimit(.minutes(1))) struct RecordingLockTests {
    @Test func aHolderIsFoundAndALiveOneIsNotDying() throws {
        let dir = try TempDir()
        let path = dir.path("take.mov")
        _ = FileManager.default.createFile(atPath: path, contents: Data("take".utf8))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        var st = stat()
        try #require(fstat(fd, &st) == 0)
        #expect(RecordingLock.holders(inode: UInt64(st.st_ino)).contains(getpid()))
        #expect(!RecordingLock.isDying(getpid()))
        #expect(RecordingLock.isDying(Int32.max), "a process that is gone holds nothing")
        // Held by this live process: refused at once, patience or not.
        let started = Date()
        #expect(throws: MediaError.self) { _ = try RecordingLock.hold(path, waitingForTheDying: 5) }
        #expect(Date().timeIntervalSince(started) < 1)
    }
}
