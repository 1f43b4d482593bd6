/// A capture time split the way pcap and HEP carry it: whole seconds and a sub-second count.
struct SplitTime {
    var seconds: UInt32
    var fraction: UInt32

    /// `time` (seconds since 1970) as seconds and `unitsPerSecond` units (1e6 for µs),
    /// rounded to the nearest unit; clamped to the 32-bit range.
    init(_ time: Double, unitsPerSecond: Double) {
        guard time.isFinite, time > 0 else {
            self.seconds = 0
            self.fraction = 0
            return
        }
        var whole = time.rounded(.down)
        var units = ((time - whole) * unitsPerSecond).rounded()
        if units >= unitsPerSecond {
            whole += 1
            units -= unitsPerSecond
        }
        guard whole <= Double(UInt32.max) else {
            self.seconds = UInt32.max
            self.fraction = 0
            return
        }
        self.seconds = UInt32(whole)
        self.fraction = UInt32(units)
    }
}
