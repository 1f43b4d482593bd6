import IOCore
import Testing

/// Thread pools are sized from the CPUs the process may use: the affinity mask and the
/// cgroup v2 `cpu.max` quota, the smaller, at least 1. The parsing, as tables of file text.
@Suite struct UsableCPUsTests {
    @Test(
        arguments: [
            ("max 100000\n", nil), ("100000 100000\n", 1), ("150000 100000", 2), ("50000 100000", 1),
            ("200000 100000\n", 2),
            ("400000 50000", 8), ("1 100000", 1), ("", nil), ("max", nil), ("garbage text", nil), ("0 100000", nil),
            ("-1 100000", nil)
        ] as [(String, Int?)])
    func cpuMax(text: String, limit: Int?) {
        #expect(UsableCPUs.cpuMaxLimit(text) == limit)
    }

    @Test(
        arguments: [
            ("0::/system.slice/irisgw.service\n", "/system.slice/irisgw.service"),
            ("0::/\n", "/"),
            ("12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n0::/docker/abc\n", "/docker/abc"),
            ("12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n", nil),
            ("", nil)
        ] as [(String, String?)])
    func cgroupPath(text: String, path: String?) {
        #expect(UsableCPUs.cgroupV2Path(text) == path)
    }

    /// A quota anywhere on the way to the root limits the process; the tightest wins.
    @Test(
        arguments: [
            (["/a/b": "max 100000", "/a": "200000 100000"], 2),
            (["/a/b": "300000 100000", "/a": "max 100000"], 3),
            (["/a/b": "300000 100000", "/a": "150000 100000"], 2),
            (["/a/b": "max 100000", "/a": "max 100000"], nil),
            ([:], nil)
        ] as [([String: String], Int?)])
    func quotaWalksUpTheHierarchy(files: [String: String], quota: Int?) {
        var asked: [String] = []
        let q = UsableCPUs.quota(procSelfCgroup: "0::/a/b\n") { path in
            asked.append(path)
            return files[path]
        }
        #expect(q == quota)
        #expect(asked == ["/a/b", "/a", "/"])
    }

    @Test(
        arguments: [
            (4, nil, 8, 4), (4, 2, 8, 2), (1, 3, 8, 1), (nil, 3, 8, 3), (nil, nil, 8, 8), (0, nil, 8, 1),
            (nil, nil, 0, 1)
        ] as [(Int?, Int?, Int, Int)])
    func theSmallerWinsAtLeastOne(affinity: Int?, quota: Int?, online: Int, count: Int) {
        #expect(UsableCPUs(affinity: affinity, quota: quota, online: online).count == count)
    }

    @Test func thisProcessHasAtLeastOne() {
        let now = UsableCPUs.current()
        #expect(now.count >= 1)
        #expect(now.affinity != nil, "sched_getaffinity answers on Linux")
    }
}

extension UsableCPUsTests {
    @Test(
        arguments: [
            (
                "25 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n",
                "/sys/fs/cgroup"
            ),
            (
                """
                22 21 0:20 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:5 - tmpfs tmpfs ro,mode=755
                23 22 0:21 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:6 - cgroup2 cgroup2 rw
                26 22 0:24 / /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu

                """, "/sys/fs/cgroup/unified"
            ),
            ("26 22 0:24 / /sys/fs/cgroup/cpu rw shared:9 - cgroup cgroup rw,cpu\n", nil),
            ("", nil)
        ] as [(String, String?)])
    func cgroup2Mount(mountinfo: String, mount: String?) {
        #expect(UsableCPUs.cgroup2MountPoint(mountinfo) == mount)
    }
}
