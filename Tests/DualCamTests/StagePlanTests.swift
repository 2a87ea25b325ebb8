import Compositor
import Foundation
@testable import MediaIO
@testable import Pipeline
import Testing

/// The one place threads are decided: what each stage gets from the CPUs this process may
/// use, for the machines users have (1 to 64 CPUs), a mask and a quota.
@Suite(.timeLimit(.minutes(1))) struct StagePlanTests {
    static let uhd = Size(width: 3840, height: 2160), hd = Size(width: 1920, height: 1080), hd720 = Size(width: 1280, height: 720)

    struct Expected {
        var cpus: Int
        var composeDecoders1080: [Int]
        var composeDecoders4K: [Int]
        var compositor: Int
        /// The compositor's threads for a 4K frame: a thread per started 1080p of pixels,
        /// within half the CPUs beyond two.
        var compositor4K: Int
        var intermediate: Int
        var liveCandidates: [EncoderThreading]
    }

    static func live(_ n: Int, wavefront: Bool, frames: Int = 0) -> EncoderThreading {
        EncoderThreading(threads: n, frameThreads: frames, wavefront: wavefront)
    }

    static let table: [Expected] = [
        Expected(cpus: 1, composeDecoders1080: [1, 1], composeDecoders4K: [1, 1], compositor: 1, compositor4K: 1, intermediate: 1,
                 liveCandidates: [live(1, wavefront: true), live(1, wavefront: false)]),
        Expected(cpus: 2, composeDecoders1080: [1, 1], composeDecoders4K: [1, 1], compositor: 2, compositor4K: 2, intermediate: 4,
                 liveCandidates: [live(2, wavefront: true), live(2, wavefront: true, frames: 2), live(2, wavefront: false, frames: 2)]),
        Expected(cpus: 4, composeDecoders1080: [4, 4], composeDecoders4K: [4, 4], compositor: 2, compositor4K: 2, intermediate: 8,
                 liveCandidates: [live(4, wavefront: true), live(4, wavefront: false, frames: 4)]),
        Expected(cpus: 8, composeDecoders1080: [8, 8], composeDecoders4K: [8, 8], compositor: 2, compositor4K: 4, intermediate: 16,
                 liveCandidates: [live(8, wavefront: true), live(8, wavefront: false, frames: 4)]),
        Expected(cpus: 16, composeDecoders1080: [16, 16], composeDecoders4K: [16, 16], compositor: 2, compositor4K: 4, intermediate: 16,
                 liveCandidates: [live(16, wavefront: true), live(16, wavefront: false, frames: 4)]),
        Expected(cpus: 64, composeDecoders1080: [16, 16], composeDecoders4K: [16, 16], compositor: 2, compositor4K: 4, intermediate: 16,
                 liveCandidates: [live(64, wavefront: true), live(64, wavefront: false, frames: 4)]),
    ]

    @Test(arguments: table.map(\.cpus))
    func eachStageFollowsTheCPUs(_ count: Int) throws {
        let e = try #require(Self.table.first { $0.cpus == count })
        let cpus = CPUAllowance.machine(count)
        #expect(cpus.wholeCPUs == count)
        let compose = StagePlan.compose(cpus: cpus, output: Self.hd, inputs: [Self.hd, Self.hd720])
        #expect(compose.decoderThreads == e.composeDecoders1080)
        #expect(compose.compositorThreads == e.compositor)
        // The composition's encoder: every CPU allowed, as x265's pool, wavefront on.
        #expect(compose.encoder == EncoderThreading(threads: count, wavefront: count > 1))
        let compose4K = StagePlan.compose(cpus: cpus, output: Self.uhd, inputs: [Self.uhd, Self.hd720])
        #expect(compose4K.decoderThreads == e.composeDecoders4K)
        #expect(compose4K.compositorThreads == e.compositor4K)
        #expect(StagePlan.record(cpus: cpus, output: Self.uhd).compositorThreads == e.compositor4K)
        let record = StagePlan.record(cpus: cpus, output: Self.hd)
        #expect(record.liveCandidates == e.liveCandidates)
        #expect(record.encoder == e.liveCandidates[0], "unmeasured, a recording takes the first candidate")
        #expect(record.intermediateThreads == e.intermediate)
        #expect(record.afterStop == EncoderThreading(threads: count, wavefront: e.liveCandidates[0].wavefront),
                "the after-stop encoding continues the take's track: the take's wavefront")
        // Encoded live on three CPUs or fewer: the configuration without the wavefront first.
        let steady = StagePlan.record(cpus: cpus, output: Self.hd, steady: true)
        #expect(Set(steady.liveCandidates) == Set(e.liveCandidates))
        #expect(steady.liveCandidates[0].wavefront == (count > 3), "\(steady.liveCandidates)")
        #expect(StagePlan.record(cpus: cpus, output: Self.uhd).intermediateThreads == e.intermediate)
        // x265 is never given more threads than the CPUs allowed.
        for threading in record.liveCandidates + [record.afterStop, compose.encoder] {
            #expect(threading.threads == count && threading.frameThreads <= count)
        }
    }

    /// A line about the take's encoder names the one that runs: `--video-encoder mpeg4` is
    /// not "the HEVC encoder".
    @Test func linesNameTheEncoderThatRuns() {
        var settings = VideoEncoderSettings()
        #expect(settings.encoderDisplayName == "HEVC")
        settings.encoder = "mpeg4"
        #expect(settings.encoderDisplayName == "mpeg4")
        settings.codec = .h264
        #expect(settings.encoderDisplayName == "H.264")
        settings.encoder = "h264_nvenc"
        #expect(settings.encoderDisplayName == "h264_nvenc")
    }

    /// `taskset -c 3,7` on a 16-CPU machine: two CPUs, planned as two.
    @Test func anAffinityMaskOfTwoOfSixteen() {
        let cpus = CPUAllowance(online: 16, allowed: [3, 7])
        #expect(cpus.wholeCPUs == 2 && cpus.description == "2 of 16 CPUs (3,7)")
        #expect(StagePlan.record(cpus: cpus, output: Self.hd) == StagePlan.record(cpus: .machine(2), output: Self.hd).with(cpus: cpus))
        let compose = StagePlan.compose(cpus: cpus, output: Self.uhd, inputs: [Self.uhd, Self.hd720])
        #expect(compose.decoderThreads == [1, 1] && compose.encoder.threads == 2)
        #expect(VideoEncoder.options(Self.hevc(compose.encoder))["x265-params"] == "log-level=none:pools=2")
    }

    /// A container's `--cpus 1.5`: one thread's worth of whole CPU, so one thread per stage.
    @Test func aQuotaOfOneAndAHalfCPUs() {
        let cpus = CPUAllowance(online: 16, allowed: Array(0..<16), quota: 1.5)
        #expect(cpus.usable == 1.5 && cpus.wholeCPUs == 1)
        #expect(cpus.description == "16 CPUs, quota 1.5")
        let record = StagePlan.record(cpus: cpus, output: Self.hd)
        #expect(record.liveCandidates == [Self.live(1, wavefront: true), Self.live(1, wavefront: false)])
        #expect(record.intermediateThreads == 1 && record.compositorThreads == 1 && record.afterStop.threads == 1)
        let compose = StagePlan.compose(cpus: cpus, output: Self.uhd, inputs: [Self.uhd, Self.hd720])
        #expect(compose.decoderThreads == [1, 1] && compose.encoder.threads == 1)
    }

    static func hevc(_ threading: EncoderThreading, inOrder: Bool = false) -> VideoEncoderSettings {
        var s = VideoEncoderSettings()
        s.threading = threading
        s.inOrder = inOrder
        return s
    }

    /// What reaches x265 and x264.
    @Test func theEncodersAreToldTheirThreads() {
        #expect(VideoEncoder.options(Self.hevc(Self.live(2, wavefront: false, frames: 2), inOrder: true))["x265-params"]
                == "log-level=none:bframes=0:rc-lookahead=2:pools=2:frame-threads=2:wpp=0")
        #expect(VideoEncoder.options(Self.hevc(EncoderThreading()))["x265-params"] == "log-level=none")
        let x264 = Intermediate.encoding(for: VideoEncoderSettings(), threads: 3)
        #expect(x264.encoder == "libx264" && x264.threading.threads == 3)
    }

    /// The configuration kept: the fastest, except for a take encoded live (`steady`), where
    /// one without the wavefront that holds the rate is kept before a faster one with it, and
    /// on a machine busy as the take starts, one without it whatever it made.
    @Test func theLiveConfigurationKept() throws {
        func trials(_ candidates: [EncoderThreading], _ fps: [Double]) -> [EncoderSpeed.Trial] {
            zip(candidates, fps).map { EncoderSpeed.Trial(threading: $0, fps: $1) }
        }
        let two = StagePlan.liveCandidates(cpus: 2), sixteen = StagePlan.liveCandidates(cpus: 16)
        // Two cores as measured here: 52 with the wavefront, 45 without; 36 needed.
        let measured = trials(two, [52, 47, 45])
        #expect(LiveEncoderChoice(trials: measured, measured: true, rate: 36, steady: false)?.threading == two[0])
        let steady = try #require(LiveEncoderChoice(trials: measured, measured: true, rate: 36, steady: true))
        #expect(!steady.threading.wavefront && steady.fps == 45)
        // Without the wavefront under the rate: the fastest, steady or not.
        #expect(LiveEncoderChoice(trials: trials(two, [40, 47, 30]), measured: true, rate: 36, steady: true)?.threading == two[1])
        // ...unless other programs keep the CPUs busy as it starts: then the one without it
        // (CI's figures, 45.8, 34.5 and 30: beside two busy loops the wavefront kept nothing).
        let busy = try #require(LiveEncoderChoice(trials: trials(two, [45.8, 34.5, 30]), measured: false, rate: 36, steady: true,
                                                  othersBusy: true))
        #expect(!busy.threading.wavefront && busy.keptForBusyMachine)
        #expect(LiveEncoderChoice(trials: trials(two, [45.8, 34.5, 30]), measured: false, rate: 36, steady: false,
                                  othersBusy: true)?.threading == two[0])
        // Sixteen: the fastest, with the wavefront (the 123 against 40).
        #expect(LiveEncoderChoice(trials: trials(sixteen, [123, 40]), measured: true, rate: 36,
                                  steady: LiveEncoderChoice.steadyMatters(cpus: 16))?.threading == sixteen[0])
        #expect(LiveEncoderChoice(trials: [], measured: true, rate: 36, steady: false) == nil)
    }

    /// The kernel's list format and cgroup v2's cpu.max, as /proc and /sys give them.
    @Test func theKernelsFiguresAreRead() {
        #expect(CPUAllowance.parseList("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11])
        #expect(CPUAllowance.parseList("5") == [5])
        #expect(CPUAllowance.parseList("") == nil && CPUAllowance.parseList("3-1") == nil && CPUAllowance.parseList("a") == nil)
        #expect(CPUAllowance.parseCPUMax("max 100000\n") == nil)
        #expect(CPUAllowance.parseCPUMax("150000 100000\n") == 1.5)
        #expect(CPUAllowance.parseCPUMax("50000 100000") == 0.5)
        #expect(CPUAllowance.parseCPUMax("junk") == nil)
        #expect(CPUAllowance.listText([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11")
        // This process: at least one CPU, no more than the machine has.
        let now = CPUAllowance.current()
        #expect(now.allowed.count >= 1 && now.allowed.count <= now.online && now.wholeCPUs >= 1)
    }

    /// Where the quota is, as /proc gives it: v1's cpu controller mounted on its own (a host
    /// with both hierarchies), v2 at /sys/fs/cgroup/unified or at /sys/fs/cgroup, a
    /// container's subtree; the tightest quota along the path to the root counts.
    @Test func aCgroupQuotaIsFoundWhereverItsHierarchyIsMounted() {
        let hybrid = """
            31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
            30 31 0:27 / /sys/fs/cgroup/unified rw,relatime shared:6 - cgroup2 cgroup2 rw
            32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
            33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
            """
        let files = ["/sys/fs/cgroup/cpu/jobs/dctest/cpu.cfs_quota_us": "50000\n", "/sys/fs/cgroup/cpu/jobs/dctest/cpu.cfs_period_us": "100000\n",
                     "/sys/fs/cgroup/cpu/jobs/cpu.cfs_quota_us": "150000\n", "/sys/fs/cgroup/cpu/jobs/cpu.cfs_period_us": "100000\n",
                     "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"]
        let v1 = CPUAllowance.quota(membership: "2:cpuacct:/\n1:cpu:/jobs/dctest\n0::/\n", mounts: hybrid) { files[$0] }
        #expect(v1 == 0.5)
        #expect(CPUAllowance.quota(membership: "1:cpu:/\n0::/\n", mounts: hybrid) { files[$0] } == nil)
        let pure = "25 20 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        let v2files = ["/sys/fs/cgroup/user.slice/app.scope/cpu.max": "max 100000\n", "/sys/fs/cgroup/user.slice/cpu.max": "250000 100000\n"]
        #expect(CPUAllowance.quota(membership: "0::/user.slice/app.scope\n", mounts: pure) { v2files[$0] } == 2.5)
        // A container sees its own subtree mounted at /sys/fs/cgroup, its path relative to it.
        let container = "40 30 0:23 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n"
        #expect(CPUAllowance.quota(membership: "0::/docker/abc\n", mounts: container) { ["/sys/fs/cgroup/cpu.max": "150000 100000"][$0] } == 1.5)
    }

    /// The after-stop encoder continues the take's track: its wavefront (in the parameter
    /// sets) comes from the intermediate's tag; one from before the tag said so had it off.
    @Test func theIntermediateCarriesTheLiveWavefront() throws {
        var take = VideoEncoderSettings()
        take.threading = EncoderThreading(threads: 2, wavefront: true)
        let info = Intermediate(fromFrame: 12, settings: take, takeID: "0123abcd")
        let read = try #require(Intermediate(tag: info.tag))
        #expect(read.settings.threading.wavefront && read.settings.threading.threads == CPUAllowance.current().wholeCPUs)
        let old = info.tag.replacingOccurrences(of: " wpp=1", with: "")
        #expect(try #require(Intermediate(tag: old)).settings.threading.wavefront == false)
    }

    /// A remembered choice is taken without measuring; one from other libraries, another set
    /// of candidates, another measuring clip, or older than a week is not.
    @Test func aRememberedChoiceIsUsedOnlyWhereItHolds() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stageplan-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = dir.appendingPathComponent("live-encoder.json")
        let cpus = CPUAllowance.machine(2)
        let settings = VideoEncoderSettings()
        let candidates = StagePlan.liveCandidates(cpus: 2)
        let now = 2_000_000_000.0
        func remember(_ fps: [Double], libraries: String = EncoderSpeed.libraryIdentity, age: Double = 60,
                      clip: Int? = EncoderSpeed.clipVersion) throws {
            let entry = EncoderSpeed.Entry(trials: zip(candidates, fps).map { EncoderSpeed.Trial(threading: $0, fps: $1) },
                                           measuredAt: now - age, libraries: libraries, clip: clip)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try JSONEncoder().encode([EncoderSpeed.key(settings, cpus: cpus): entry]).write(to: cache)
        }
        try remember([30, 55, 40])
        let kept = try #require(EncoderSpeed.choose(settings, candidates: candidates, cpus: cpus, rate: 36, cache: cache,
                                                    mayMeasure: false, now: now))
        #expect(kept.threading == candidates[1] && kept.fps == 55 && !kept.measured)
        // Another machine's CPUs: nothing remembered for them.
        #expect(EncoderSpeed.choose(settings, candidates: candidates, cpus: .machine(4), rate: 36, cache: cache,
                                    mayMeasure: false, now: now) == nil)
        try remember([40, 55, 30], libraries: "libavcodec 0 x265 0")
        #expect(EncoderSpeed.choose(settings, candidates: candidates, cpus: cpus, rate: 36, cache: cache, mayMeasure: false, now: now) == nil)
        // Measured on the clip whose grain repeated with its motion (no `clip`), which x265 found
        // 1.2-1.7x easier than a camera's picture.
        try remember([40, 55, 30], clip: nil)
        #expect(EncoderSpeed.choose(settings, candidates: candidates, cpus: cpus, rate: 36, cache: cache, mayMeasure: false, now: now) == nil)
        try remember([40, 55, 30], age: EncoderSpeed.maxAge + 1)
        #expect(EncoderSpeed.choose(settings, candidates: candidates, cpus: cpus, rate: 36, cache: cache, mayMeasure: false, now: now) == nil)
        // Under the rate, within the hour: kept (a start does not pay for it again).
        try remember([20, 25, 10], age: 60)
        let slow = EncoderSpeed.choose(settings, candidates: candidates, cpus: cpus, rate: 36, cache: cache, mayMeasure: true, now: now)
        #expect(slow?.fps == 25 && slow?.measured == false)
    }

    /// A lock on the table held by someone else (another program, a stopped dualcam) is not
    /// waited for without end: the figure is not remembered, and the call returns (a held lock
    /// kept `record` and `doctor` waiting, silent, until it was let go).
    @Test func aHeldLockOnTheTableIsNotWaitedForWithoutEnd() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stageplan-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let cache = dir.appendingPathComponent("live-encoder.json")
        let held = open(dir.appendingPathComponent(".live-encoder.lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        try #require(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)
        let entry = EncoderSpeed.Entry(trials: [EncoderSpeed.Trial(threading: EncoderThreading(threads: 2), fps: 50)],
                                       measuredAt: 2_000_000_000, libraries: EncoderSpeed.libraryIdentity, clip: EncoderSpeed.clipVersion)
        let start = monotonicNow()
        #expect(!EncoderSpeed.remember(entry, as: "held", in: cache), "said written")
        let waited = monotonicNow() - start
        #expect(waited >= EncoderSpeed.lockPatience * 0.9 && waited < EncoderSpeed.lockPatience + 2, "\(waited) s")
        #expect(EncoderSpeed.table(in: cache).isEmpty, "written without the lock")
        close(held)
        #expect(EncoderSpeed.remember(entry, as: "free", in: cache))
        #expect(EncoderSpeed.table(in: cache)["free"]?.trials.first?.fps == 50)
    }
}

extension StagePlan {
    func with(cpus: CPUAllowance) -> StagePlan {
        var plan = self
        plan.cpus = cpus
        return plan
    }
}
