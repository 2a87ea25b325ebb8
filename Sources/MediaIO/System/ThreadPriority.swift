import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The picture's threads run above the process's other work and the encoders below it, each
/// at a level set from the nice value the process started with (a `nice -n 5 dualcam` keeps
/// its place among the user's programs). On Linux a nice value belongs to one thread and the
/// threads it creates inherit it, so an encoder opened on a thread at the encoder's level has
/// every worker its library starts (x265's frame threads, its pool, its lookahead) there,
/// without any privilege. Going up again needs one (root, CAP_SYS_NICE or an RLIMIT_NICE
/// that allows it, as a desktop's audio group often has): without it the picture's threads
/// stay at the process's own level, and beside programs that keep every CPU busy they get
/// the CPU no sooner than those do.
public enum ThreadPriority {
    /// How far below the process's level the encoders run. Under two busy processes,
    /// x265 (wpp=0) makes 27 fps at nice 0, 8.6 at 5 and 3.6 at 10; at 10 the composing
    /// thread keeps its budget and what the encoder cannot take goes to the intermediate.
    public static let encoderNiceness: Int32 = 10
    /// How far above the process's level the picture's threads (capture, composing, the
    /// microphone) run where that is permitted. Beside two busy loops on two CPUs, at the
    /// loops' level a 1080p file played as a camera was published up to 14 ms after its time
    /// and its copy preempted for 10 ms: composing p99 14.7-16.3 ms here, 31 ms in CI; 5 above
    /// them, 10.1-12.5; 10 above, 7.3-10.9, but there the picture's work, where it is heavy
    /// (ThreadSanitizer's build), starved the intermediate's encoder at the process's level
    /// until frames were skipped (a 2 s take kept 51 frames for 1.98 s of sound, 3 runs of 3).
    public static let pictureRaise: Int32 = 5

    /// The nice value the process started with: its main thread's, read before any thread
    /// of it was moved (every change here reads this first).
    public static let processNiceness: Int32 = {
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        return errno == 0 ? value : 0
    }()

    /// The nice value of an encoder an intermediate stands behind (what it cannot take waits
    /// there, so it may yield to every other program).
    static var encoderLevel: Int32 { min(19, processNiceness + encoderNiceness) }
    /// The nice value of the encoder of a take with no intermediate (`--encode live`): what it
    /// cannot take is skipped, so it competes with other programs at the process's level
    /// wherever the picture's threads can still be put above it. Killed at 8 s beside two busy
    /// loops, a live take with its encoder at the encoders' level kept 4.4-4.8 s of picture;
    /// at the process's level (its pool too) it kept up (7.0 s), and beside six kept 6.1-6.6 s.
    static var liveEncoderLevel: Int32 { picturesMayBeRaised ? processNiceness : encoderLevel }

    /// How far below the process's level the encoders of files kept beside the take run
    /// (--iso's cameras' own): one step below the take's encoder and its intermediate's, so
    /// that where the CPUs cannot serve them all those files fall behind (their pictures held)
    /// and the take keeps every frame. Measured on two CPUs, 1080p and 720p files as cameras:
    /// three --iso takes at once lost 30-69 of 120 frames each with the cameras' encoders at the
    /// take's level (their handover thread at the picture's), none at 11, 13 or 19; beside two
    /// `yes`, one 8 s take kept 240 frames at every level, its camera files 235 and 206-209 of
    /// 240 at 10 and 11, 129 at 13, 44 at 19.
    public static let companionNiceness: Int32 = 11
    static var companionLevel: Int32 { min(19, processNiceness + companionNiceness) }

    /// Puts the calling thread at the level of the encoders beside the take (`companionNiceness`).
    public static func lowerCurrentThreadToCompanions() {
        if currentNiceness < companionLevel { set(companionLevel) }
    }

    /// `live`: the take's own encoder, with no intermediate behind it.
    static func encoderLevel(live: Bool) -> Int32 { live ? liveEncoderLevel : encoderLevel }
    /// The picture's nice value where it may be raised all the way.
    static var pictureLevel: Int32 { max(-20, processNiceness - pictureRaise) }

    /// Puts the calling thread at the encoders' level (only ever down in priority, which
    /// needs no privilege). False when the system refused, which only costs priority.
    @discardableResult
    public static func lowerCurrentThreadToEncoders(live: Bool = false) -> Bool {
        let level = encoderLevel(live: live)
        return currentNiceness >= level || set(level)
    }

    /// Puts the calling thread at the picture's level, or as near it as it is permitted;
    /// true when it is above the process's level.
    @discardableResult
    public static func raiseCurrentThreadForPictures() -> Bool {
        if currentNiceness <= pictureLevel || set(pictureLevel) { return true }
        // Part of the way is better than none.
        guard let floor = rlimitFloor else { return false }
        return floor < processNiceness && floor > pictureLevel && set(floor)
    }

    /// Puts the calling thread back at the process's level (always permitted from above it).
    public static func returnCurrentThreadToProcessLevel() {
        if currentNiceness < processNiceness { set(processNiceness) }
    }

    /// Whether this process may run the picture's threads above its own level: what
    /// `raiseCurrentThreadForPictures` would reach, told without moving any thread.
    public static var picturesMayBeRaised: Bool {
        if mayRaiseAnyThread { return true }
        return rlimitFloor.map { $0 < processNiceness } ?? false
    }

    /// The lowest nice value RLIMIT_NICE lets an unprivileged thread take (20 - its value).
    private static var rlimitFloor: Int32? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(__RLIMIT_NICE.rawValue), &limit) == 0 else { return nil }
        return 20 - Int32(clamping: min(limit.rlim_cur, 40))
    }

    /// CAP_SYS_NICE in effect (root has it, but not in a container that drops it: Docker's
    /// default set does).
    static var mayRaiseAnyThread: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let effective = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return geteuid() == 0 }
        let capSysNice: UInt64 = 23
        return effective & (1 << capSysNice) != 0
    }

    /// The levels a recording's threads run at, in a line.
    public static var summary: String {
        picturesMayBeRaised
            ? "capture and composing at nice \(pictureLevel), the encoders at \(encoderLevel) (\(liveEncoderLevel) with no "
              + "intermediate behind them)"
            : "capture and composing at nice \(processNiceness) (the process's: above it needs root, CAP_SYS_NICE or an "
              + "RLIMIT_NICE that allows it), the encoders at \(encoderLevel)"
    }

    /// The calling thread's nice value.
    public static var currentNiceness: Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(dc_thread_id()))
    }

    @discardableResult
    private static func set(_ value: Int32) -> Bool {
        _ = processNiceness
        return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(dc_thread_id()), value) == 0
    }

    /// Runs `body` (an encoder's opening) on a thread of its own, and returns what it made,
    /// with every thread it started at the encoders' level for life (`live`: at
    /// `liveEncoderLevel`). Opened at the process's level, then each thread it started put
    /// there. x265 lowers each of its pool's `poolThreads` threads 10 below its creator as it
    /// starts (`nice(10)`): opened at the encoders' level its pool ran at 19, weight 15 against
    /// a busy program's 1024, and a live take beside two busy loops killed at 8 s kept 0-0.9 s
    /// of picture; left 10 below a live encoder, its lookahead held the take's picture 2-3 s
    /// behind the file beside six (it decides each frame's type). So the pool is waited for
    /// (under load a thread starts late), or it would lower itself after it was put in place.
    public static func madeAtEncoderLevel<T>(live: Bool = false, poolThreads: Int = 0,
                                            _ body: @escaping @Sendable () throws(MediaError) -> T) throws(MediaError) -> T {
        try made(at: encoderLevel(live: live), poolThreads: poolThreads, body)
    }

    /// The same for an encoder of a file beside the take (`companionNiceness`).
    public static func madeAtCompanionLevel<T>(_ body: @escaping @Sendable () throws(MediaError) -> T) throws(MediaError) -> T {
        try made(at: companionLevel, poolThreads: 0, body)
    }

    /// The same for an encoder no picture of this process must run above: a composition's,
    /// the encoding after a take's stop, `finish`'s. Every thread it starts runs at the
    /// process's level, x265's pool raised back from 10 below it where that is permitted (it
    /// stays there where it is not, as under the ffmpeg CLI). Beside two busy loops on two
    /// CPUs, with the pool 10 below them (weight 110 against each loop's 1024), compose of the
    /// bundled clips took 25 s against 3 s idle, on 3 s of CPU.
    public static func madeAtProcessLevel<T>(poolThreads: Int,
                                            _ body: @escaping @Sendable () throws(MediaError) -> T) throws(MediaError) -> T {
        try made(at: processNiceness, poolThreads: poolThreads, body)
    }

    private static func made<T>(at level: Int32, poolThreads: Int,
                                _ body: @escaping @Sendable () throws(MediaError) -> T) throws(MediaError) -> T {
        let name = "dualcam-encopen"
        let box = ResultBox<T>()
        let thread = OwnedThread(name: name) {
            returnCurrentThreadToProcessLevel()
            box.result = Result { () throws(MediaError) -> T in try body() }
            let poolLevel = min(19, processNiceness + 10)
            // Up to 3 s: it ends as soon as the whole pool is there (idle, within milliseconds).
            // With 0.5 s, beside two busy loops, pool threads that started later lowered
            // themselves after the move and stayed 10 below: the encoding after a take's stop
            // took 72-86 s instead of 14-17 s in 3 runs of 9 (0 of 4 with 3 s).
            let waitingUntil = monotonicNow() + 3, opened = (try? box.result?.get()) != nil
            while opened, poolThreads > 0, dc_count_threads_named_at(name, poolLevel) < poolThreads, monotonicNow() < waitingUntil {
                usleep(2_000)
            }
            if level < poolLevel { dc_move_threads_named(name, poolLevel, level) }
            dc_lower_threads_named(name, level)
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
