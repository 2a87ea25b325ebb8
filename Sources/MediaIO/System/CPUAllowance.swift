import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The CPUs this process may use: those in its affinity mask (`taskset`, a container's
/// cpuset), and at most the share a cgroup's quota gives it (`cpu.max`, a container's
/// `--cpus`). `nproc` and `activeProcessorCount` see only the machine or only the mask; a
/// thread count taken from either oversubscribes a container with a quota, and x265, which
/// pins its pool to NUMA nodes itself, leaves a mask (under `taskset -c 0-1` it used 7 cores).
public struct CPUAllowance: Sendable, Equatable, Codable {
    /// CPUs the machine has online.
    public var online: Int
    /// The CPU numbers in this process's affinity mask, ascending.
    public var allowed: [Int]
    /// CPUs' worth of time a cgroup quota gives this process (1.5: 150 ms each 100 ms), when
    /// one applies; the smallest along the cgroup's ancestors.
    public var quota: Double?

    public init(online: Int, allowed: [Int], quota: Double? = nil) {
        self.online = max(1, online)
        self.allowed = allowed.isEmpty ? Array(0..<max(1, online)) : allowed
        self.quota = quota.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
    }

    /// A machine of `count` CPUs, all allowed, no quota (for plans made elsewhere: tests, doctor's figures).
    public static func machine(_ count: Int) -> CPUAllowance {
        CPUAllowance(online: count, allowed: Array(0..<max(1, count)))
    }

    /// CPUs' worth this process can keep busy.
    public var usable: Double { min(Double(allowed.count), quota ?? .infinity) }

    /// Threads that can run at once without waiting for each other: whole CPUs only. A quota
    /// of 1.5 is one thread's worth: two busy threads under it are both stopped for the rest
    /// of every period once they have used it, which a live picture cannot afford.
    public var wholeCPUs: Int { max(1, Int(usable.rounded(.down))) }

    /// "2 CPUs", "2 of 16 CPUs (3,7)", "16 CPUs, quota 1.5".
    public var description: String {
        var text = allowed.count == online ? "\(online) CPU\(online == 1 ? "" : "s")"
            : "\(allowed.count) of \(online) CPUs (\(Self.listText(allowed)))"
        if let quota, quota < Double(allowed.count) { text += String(format: ", quota %g", quota) }
        return text
    }

    /// This process's when it was first asked (before any encoder pinned a thread of it).
    public static let atStart = current()

    /// Puts every thread of this process back inside the CPUs it started with, when those
    /// are fewer than the machine's: x265 pins its pool to NUMA nodes itself, and under
    /// `taskset -c 0` two of its threads ran on CPU 1. Nothing when the process may use them all
    /// (x265's NUMA placement then stands). Returns how many threads were moved.
    @discardableResult
    public static func confineThreads() -> Int {
        let start = atStart
        guard start.allowed.count < start.online else { return 0 }
        return Int(start.allowed.map(Int32.init).withUnsafeBufferPointer { dc_confine_threads($0.baseAddress, Int32($0.count)) })
    }

    /// This process's, now.
    public static func current() -> CPUAllowance {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let allowed = status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
            .flatMap { parseList(String($0.dropFirst("Cpus_allowed_list:".count))) } ?? []
        return CPUAllowance(online: online, allowed: allowed, quota: cgroupQuota())
    }

    /// "0-3,8,10-11" (the kernel's list format) as CPU numbers; nil when it is not one.
    public static func parseList(_ text: String) -> [Int]? {
        var cpus: [Int] = []
        for part in text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",") {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard (1...2).contains(bounds.count), let low = bounds.first!, let high = bounds.last!, 0 <= low, low <= high,
                  high < 1 << 16 else { return nil }
            cpus.append(contentsOf: low...high)
        }
        return cpus.isEmpty ? nil : Array(Set(cpus)).sorted()
    }

    /// CPU numbers as the kernel lists them: runs joined with a dash.
    static func listText(_ cpus: [Int]) -> String {
        var runs: [String] = []
        var i = 0
        while i < cpus.count {
            var j = i
            while j + 1 < cpus.count && cpus[j + 1] == cpus[j] + 1 { j += 1 }
            runs.append(j > i ? "\(cpus[i])-\(cpus[j])" : "\(cpus[i])")
            i = j + 1
        }
        return runs.joined(separator: ",")
    }

    /// cgroup v2's `cpu.max` ("max 100000", "150000 100000") as CPUs; nil when unlimited or unreadable.
    public static func parseCPUMax(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 1, fields[0] != "max", let quota = Double(fields[0]), quota > 0 else { return nil }
        let period = fields.count > 1 ? Double(fields[1]) ?? 100_000 : 100_000
        return period > 0 ? quota / period : nil
    }

    /// The tightest CPU quota on the way from this process's cgroup to its hierarchy's root,
    /// v2 (`cpu.max`) and v1 (`cpu.cfs_quota_us` over `cpu.cfs_period_us`) alike, wherever
    /// their hierarchies are mounted (/proc/self/mountinfo: a host with both mounts v1's cpu
    /// controller at /sys/fs/cgroup/cpu and v2 at /sys/fs/cgroup/unified); nil when none limits.
    static func cgroupQuota() -> Double? {
        let membership = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return quota(membership: membership, mounts: mounts) { try? String(contentsOfFile: $0, encoding: .utf8) }
    }

    /// `cgroupQuota` over given texts of /proc/self/cgroup and /proc/self/mountinfo, reading
    /// files through `read` (a test gives its own).
    static func quota(membership: String, mounts: String, read: (String) -> String?) -> Double? {
        var tightest: Double?
        func take(_ q: Double?) { if let q { tightest = min(tightest ?? q, q) } }
        for (folder, path, v2) in cgroupFolders(membership: membership, mounts: mounts) {
            var relative = path
            while true {
                let dir = folder + (relative == "/" ? "" : relative)
                if v2 {
                    take(read(dir + "/cpu.max").flatMap(parseCPUMax))
                } else if let q = read(dir + "/cpu.cfs_quota_us").flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                          q > 0,
                          let period = read(dir + "/cpu.cfs_period_us").flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                          period > 0 {
                    take(q / period)
                }
                if relative == "/" || relative.isEmpty { break }
                relative = (relative as NSString).deletingLastPathComponent
            }
        }
        return tightest
    }

    /// Where this process's CPU cgroup folders are: (the hierarchy's mount point, the
    /// process's path in it, whether it is v2), for v2 and v1's cpu controller.
    static func cgroupFolders(membership: String, mounts: String) -> [(String, String, Bool)] {
        // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
        var v2Mount: (root: String, point: String)?
        var cpuMount: (root: String, point: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard let dash = fields.firstIndex(of: "-"), dash >= 5, fields.count > dash + 3 else { continue }
            let (root, point, type) = (fields[3], fields[4], fields[dash + 1])
            if type == "cgroup2", v2Mount == nil { v2Mount = (root, point) }
            if type == "cgroup", cpuMount == nil, fields[dash + 3].split(separator: ",").contains("cpu") { cpuMount = (root, point) }
        }
        var found: [(String, String, Bool)] = []
        for line in membership.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else { continue }
            let mount = parts[1].isEmpty ? v2Mount : (parts[1].split(separator: ",").contains("cpu") ? cpuMount : nil)
            guard let mount else { continue }
            // A mount of a subtree (a container's) shows paths below its root.
            var path = parts[2]
            if mount.root != "/", path.hasPrefix(mount.root) { path = String(path.dropFirst(mount.root.count)) }
            if path.isEmpty { path = "/" }
            found.append((mount.point, path, parts[1].isEmpty))
        }
        return found
    }
}
