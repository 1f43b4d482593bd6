import CLinux
import Glibc

/// The CPUs this process may really use, which is what thread pools should be sized from:
/// the machine's core count overstates it under `taskset`/`cpuset` (the affinity mask) and
/// in a container or a systemd unit with `CPUQuota=` (the cgroup v2 `cpu.max` quota).
///
/// The parsing is plain functions of file text, so it is tested without a cgroup; `current()`
/// reads the running system.
public struct UsableCPUs: Sendable, Equatable, CustomStringConvertible {
    /// CPUs in the process's affinity mask (`sched_getaffinity`); nil when it could not be read.
    public var affinity: Int?
    /// `ceil(quota / period)` of the tightest `cpu.max` on the way from the process's cgroup
    /// to the root; nil when no cgroup on the way sets a quota ("max"), or no cgroup v2.
    public var quota: Int?
    /// CPUs online (`sysconf(_SC_NPROCESSORS_ONLN)`), the fallback when neither is known.
    public var online: Int

    public init(affinity: Int?, quota: Int?, online: Int) {
        self.affinity = affinity
        self.quota = quota
        self.online = online
    }

    /// The smaller of `affinity` and `quota`, at least 1; `online` when neither is known.
    public var count: Int {
        switch (affinity, quota) {
        case (nil, nil): return max(1, online)
        case (let a?, nil): return max(1, a)
        case (nil, let q?): return max(1, q)
        case (let a?, let q?): return max(1, min(a, q))
        }
    }

    /// `4 (affinity 4, cgroup quota none)`, for the start line.
    public var description: String {
        "\(count) (affinity \(affinity.map(String.init) ?? "unknown"), cgroup quota \(quota.map(String.init) ?? "none"))"
    }

    /// The CPUs a cgroup v2 `cpu.max` allows: `"QUOTA PERIOD"` gives `ceil(QUOTA / PERIOD)`
    /// (at least 1); `"max PERIOD"` (no limit) and text that is not either give nil.
    public static func cpuMaxLimit(_ text: String) -> Int? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0 else {
            return nil
        }
        return max(1, (quota + period - 1) / period)
    }

    /// The cgroup v2 path of `/proc/self/cgroup` text: the `0::PATH` line ("/" in a cgroup
    /// namespace's root); nil when there is none (cgroup v1 only).
    public static func cgroupV2Path(_ procSelfCgroup: String) -> String? {
        for line in procSelfCgroup.split(separator: "\n") where line.hasPrefix("0::") {
            let path = line.dropFirst(3).trimmingCharacters(in: " \t\r")
            return path.hasPrefix("/") ? path : nil
        }
        return nil
    }

    /// The tightest quota from the process's cgroup up to the root (a parent's `cpu.max`
    /// limits its children too). `readCPUMax` gets a cgroup path ("/a/b", "/") and returns
    /// that cgroup's `cpu.max` text, or nil when it has none (the root never has one).
    public static func quota(procSelfCgroup: String, readCPUMax: (String) -> String?) -> Int? {
        guard var path = cgroupV2Path(procSelfCgroup) else { return nil }
        var tightest: Int?
        while true {
            if let text = readCPUMax(path), let limit = cpuMaxLimit(text) {
                tightest = min(tightest ?? limit, limit)
            }
            if path == "/" { return tightest }
            let parent = path.split(separator: "/").dropLast().joined(separator: "/")
            path = "/" + parent
        }
    }

    /// Where the cgroup v2 hierarchy is mounted, from `/proc/self/mountinfo` text: the mount
    /// point of the `cgroup2` file system (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a
    /// hybrid v1/v2 system); nil when there is none.
    public static func cgroup2MountPoint(_ mountinfo: String) -> String? {
        for line in mountinfo.split(separator: "\n") {
            // "36 25 0:31 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw": fields after " - "
            // are the file system type, source and options; the 5th before it the mount point.
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash >= 5, dash + 1 < fields.count else { continue }
            if fields[dash + 1] == "cgroup2" { return String(fields[4]) }
        }
        return nil
    }

    /// What this process may use now. `cgroupRoot` is where cgroup v2 is mounted; nil reads
    /// it from `/proc/self/mountinfo`.
    public static func current(cgroupRoot: String? = nil) -> UsableCPUs {
        let affinity = CLinux_affinity_cpu_count()
        let cgroupRoot =
            cgroupRoot ?? readSmallFile("/proc/self/mountinfo").flatMap(cgroup2MountPoint) ?? "/sys/fs/cgroup"
        let cgroup = readSmallFile("/proc/self/cgroup") ?? ""
        let quota = quota(procSelfCgroup: cgroup) { path in
            readSmallFile(cgroupRoot + (path == "/" ? "" : path) + "/cpu.max")
        }
        return UsableCPUs(
            affinity: affinity > 0 ? Int(affinity) : nil, quota: quota,
            online: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// A file of a few lines (procfs, cgroupfs report a size of 0, so read until the end).
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while out.count < 1 << 20 {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
