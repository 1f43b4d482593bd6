/// Why the stream layer turned a connection away before it carried anything.
public enum StreamRefusal: Sendable, Hashable {
    /// The total cap (`StreamConnectionCaps.maxConnections`) was reached.
    case tooManyConnections
    /// The peer's address has `StreamConnectionCaps.maxPerSource` connections open.
    case tooManyFromSource
    /// The process was out of descriptors (or kernel memory): the listener shed the pending
    /// connection through its reserved descriptor and paused.
    case outOfDescriptors
}
