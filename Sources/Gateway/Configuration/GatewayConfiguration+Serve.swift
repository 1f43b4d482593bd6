import IOCore

extension GatewayConfiguration {
    /// The gateway's settings from a serve configuration file, defaults where it says
    /// nothing. Media threads follow the CPUs this process may use (`cpus`), not the
    /// machine's: `taskset -c 0` or a container's cpu.max quota of one CPU gives one.
    /// Listeners, DNS servers and the public URL come from `irisgw serve` after its flags.
    public init(serve file: ServeConfiguration, cpus: UsableCPUs) {
        self.init()
        if let v = file.rtpHost { rtpHost = v }
        sipAdvertise = file.sipAdvertise
        rtpAdvertise = file.rtpAdvertise
        platformRtpAdvertise = file.platformRtpAdvertise
        if let v = file.rtpPorts { rtpPorts = v }
        if let v = file.dataDir { dataDir = v }
        records = file.records
        if let v = file.callRecordRetentionDays { callRecordRetention.days = v }
        if let v = file.maxCallRecords { callRecordRetention.maxRecords = v }
        if let v = file.maxSessions { maxSessions = v }
        if let v = file.roomTokenLifetimeSec { roomTokenLifetime = Double(v) }
        if let v = file.webrtcSetupTimeoutSec { webrtcSetupTimeout = Double(v) }
        if let v = file.maxInboundSessions { maxInboundSessions = v }
        if let v = file.mediaRealtimePriority { mediaRealtimePriority = v }
        if let v = file.mediaIO { mediaIO = v }
        if let v = file.mediaLoadBudgetPercent { mediaLoadBudget = Double(v) / 100 }
        hep = file.hep
        if let v = file.capture { capture = v }
        if let v = file.recordings { recordings = v }
        if let v = file.mediaStreams { mediaStreams = v }
        mediaThreads = file.mediaThreads ?? cpus.count
        file.sip?.apply(to: &sip)
        cluster = file.cluster
        file.dns?.apply(to: &sip.dns)
        if let realm = file.sip?.authRealm { inboundAuthRealm = realm }
        if let proxies = file.sip?.trustedProxies { trustedProxies = proxies }
    }
}
