/// Bounds on what an inbound INVITE puts into call records, events, snapshots and webhook
/// posts (docs/events.md, "Inbound limits"). A UDP INVITE can carry about 64 KB; without
/// these, all of it would be stored and sent on for every call.
///
/// The numbers are refused when too long (a number cut short is another number); the
/// carrier's headers are kept up to their limits and the rest left out whole (never cut in
/// the middle), with `CarrierCallInfo.truncated` naming the fields that lost something.
enum InboundLimits {
    /// The calling number (the From user part without its parameters), in bytes; over it the
    /// INVITE gets 400. E.164 is at most 15 digits; the rest is room for a SIP user name.
    static let maxCallingNumberBytes = 64
    /// The called number (the Request-URI user part), in bytes; over it the INVITE gets 414.
    static let maxCalledNumberBytes = 64
    /// `X-` headers kept, by distinct name.
    static let maxExtensionHeaders = 16
    /// An `X-` header name's length, in bytes.
    static let maxHeaderNameBytes = 64
    /// A kept value of an `X-` header (a repeated name's values joined), P-Asserted-Identity,
    /// Diversion or History-Info entry, in bytes.
    static let maxValueBytes = 512
    /// Entries kept per list field (P-Asserted-Identity, Diversion, History-Info).
    static let maxListValues = 10
    /// An Identity header (a PASSporT with its parameters), in bytes.
    static let maxIdentityBytes = 8192
    /// Identity headers kept.
    static let maxIdentityValues = 4
    /// The `verstat` parameter's value, in bytes.
    static let maxVerstatBytes = 64
    /// Everything kept of the carrier's headers together (names and values), in bytes.
    static let maxTotalBytes = 16 * 1024

    /// Why an inbound INVITE's numbers are refused, as the status and reason phrase of the
    /// answer; nil when they are within the limits.
    static func numberRefusal(calling: String, called: String) -> (status: Int, reason: String)? {
        if called.utf8.count > maxCalledNumberBytes {
            return (414, "Request-URI Too Long (called number over \(maxCalledNumberBytes) bytes)")
        }
        if calling.utf8.count > maxCallingNumberBytes {
            return (400, "Bad Request (calling number over \(maxCallingNumberBytes) bytes)")
        }
        return nil
    }
}

/// Keeps carrier header values within `InboundLimits`: per value, per field and in total;
/// remembers which fields lost something.
struct CarrierFieldBudget {
    private var left = InboundLimits.maxTotalBytes
    /// Fields from which a value was left out, in the order first seen.
    private(set) var truncated: [String] = []

    /// True (and counted) when `bytes` more fit within `limit` and the total; otherwise
    /// `field` is noted as truncated.
    mutating func admit(_ bytes: Int, limit: Int, field: String) -> Bool {
        guard bytes <= limit, bytes <= left else {
            note(field)
            return false
        }
        left -= bytes
        return true
    }

    /// The first `maxCount` of `values` that fit, in order; nil when none is left.
    mutating func list(
        _ values: [String], field: String, maxCount: Int = InboundLimits.maxListValues,
        maxBytes: Int = InboundLimits.maxValueBytes
    ) -> [String]? {
        var kept: [String] = []
        for v in values {
            guard kept.count < maxCount else {
                note(field)
                break
            }
            if admit(v.utf8.count, limit: maxBytes, field: field) { kept.append(v) }
        }
        return kept.isEmpty ? nil : kept
    }

    mutating func note(_ field: String) {
        if !truncated.contains(field) { truncated.append(field) }
    }
}
