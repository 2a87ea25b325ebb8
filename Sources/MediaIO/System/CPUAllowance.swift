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

    /// The tightest quota on the way from this process's cgroup to the root (v2), or the
    /// v1 CFS quota; nil when none limits it.
    static func cgroupQuota(root: String = "/sys/fs/cgroup") -> Double? {
        let membership = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        var tightest: Double?
        func take(_ q: Double?) { if let q { tightest = min(tightest ?? q, q) } }
        if let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) {
            var path = String(line.dropFirst(3))
            while true {
                take((try? String(contentsOfFile: root + path + "/cpu.max", encoding: .utf8)).flatMap(parseCPUMax))
                if path == "/" || path.isEmpty { break }
                path = (path as NSString).deletingLastPathComponent
            }
        }
        if let q = (try? String(contentsOfFile: root + "/cpu,cpuacct/cpu.cfs_quota_us", encoding: .utf8)).flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
           q > 0, let p = (try? String(contentsOfFile: root + "/cpu,cpuacct/cpu.cfs_period_us", encoding: .utf8)).flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }), p > 0 {
            take(q / p)
        }
        return tightest
    }
}
