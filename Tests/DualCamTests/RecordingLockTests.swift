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

    /// A holder whose main thread has ended (a zombie) while another of its threads goes on
    /// for 3 s, as a record stopped during its encoding does while its last thread gives its
    /// memory back (1.9-6.2 s beside three busy loops): the lock is waited for, what it waits
    /// for said once, and taken when the holder is gone; a shorter patience gives up.
    @Test func aHolderThatTakesSecondsToDieIsWaitedFor() throws {
        let dir = try TempDir()
        let path = dir.path("take.mov"), source = dir.path("linger.c"), program = dir.path("linger")
        _ = FileManager.default.createFile(atPath: path, contents: Data("take".utf8))
        try """
            #include <fcntl.h>
            #include <pthread.h>
            #include <stdio.h>
            #include <sys/file.h>
            #include <unistd.h>
            /* The 3 s a dying holder lingers is the thing tested. */
            static void *linger(void *unused) { (void)unused; sleep(3); _exit(0); }
            int main(int argc, char **argv) {
                (void)argc;
                int fd = open(argv[1], O_RDONLY);
                if (fd < 0 || flock(fd, LOCK_EX) != 0) return 1;
                pthread_t thread;
                pthread_create(&thread, 0, linger, 0);
                puts("held");
                fflush(stdout);
                pthread_exit(0);
            }
            """.write(toFile: source, atomically: false, encoding: .utf8)
        let compiled = try run(Env.tool("cc") ?? "/usr/bin/cc", ["-pthread", "-o", program, source])
        try #require(compiled.status == 0, "\(compiled.stderr)")
        func startHolder() throws -> Process {
            let p = Process(), out = Pipe()
            p.executableURL = URL(fileURLWithPath: program)
            p.arguments = [path]
            p.standardOutput = out
            try p.run()
            _ = ChildWatchdog(p)
            #expect(String(decoding: out.fileHandleForReading.readData(ofLength: 5), as: UTF8.self) == "held\n")
            // Its main thread ends just after saying so: until then it is a live holder (a loaded
            // CI machine asked in between, and was refused at once).
            waitUntil("the holder's main thread to end", timeout: 10) { RecordingLock.isDying(p.processIdentifier) }
            try #require(RecordingLock.isDying(p.processIdentifier), "its main thread did not end")
            return p
        }
        let impatient = try startHolder()
        let triedAt = Date()
        #expect(throws: MediaError.self) { _ = try RecordingLock.hold(path, waitingForTheDying: 1.5) }
        #expect(Date().timeIntervalSince(triedAt) < 2.5)
        impatient.waitUntilExit()

        let holder = try startHolder()
        let started = Date()
        let said = Locked<[Int32]>([])
        let fd = try RecordingLock.hold(path, waitingForTheDying: 30) { pid in said.withLock { $0.append(pid) } }
        let waited = Date().timeIntervalSince(started)
        if let fd { close(fd) }
        #expect(fd != nil && (2...10).contains(waited), "held after \(waited) s")
        #expect(said.withLock { $0 } == [holder.processIdentifier], "said \(said.withLock { $0 })")
        holder.waitUntilExit()
    }
}
