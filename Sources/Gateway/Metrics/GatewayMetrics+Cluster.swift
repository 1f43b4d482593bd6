import Cluster
import Formats

extension ClusterStatus {
    /// The cluster's lines of `/metrics`.
    public func render(into out: inout PrometheusText) {
        out.metric(
            "irisgw_cluster_members", "gauge", "Live members of the cluster as this node last saw them.", liveNodes)
        out.metric(
            "irisgw_cluster_member", "gauge", "1 while this node is a member of its cluster (0: joining, Redis away).",
            phase == .member ? 1 : 0)
        out.metric("irisgw_cluster_draining", "gauge", "1 while this node is draining.", draining ? 1 : 0)
        let s = statistics
        for (name, help, value) in [
            ("irisgw_cluster_takeovers_total", "Dead members this node took over.", s.takeovers),
            ("irisgw_cluster_lost_memberships_total", "Times the cluster counted this node dead.", s.lostMemberships),
            ("irisgw_cluster_heartbeat_failures_total", "Heartbeats Redis did not answer.", s.heartbeatFailures),
            (
                "irisgw_cluster_republished_total", "Write-backs of this node's state after a Redis outage.",
                s.republished
            ),
            (
                "irisgw_cluster_events_published_total", "Events this node appended to the cluster's stream.",
                s.eventsPublished
            ),
            ("irisgw_cluster_events_lost_total", "Events this node could not append.", s.eventsLost),
            ("irisgw_cluster_events_read_total", "Other nodes' events read from the stream.", s.eventsRead),
            (
                "irisgw_cluster_limit_checks_unanswered_total",
                "Trunk limit checks Redis did not answer (the node's share decided).", s.limitChecksUnanswered
            )
        ] {
            out.metric(name, "counter", help, value)
        }
    }
}
