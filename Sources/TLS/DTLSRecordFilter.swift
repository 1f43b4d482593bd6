/// The records of one received datagram that may go to OpenSSL (RFC 6347 §4.1: type,
/// version, epoch, sequence number, 2-byte length, then the fragment).
///
/// OpenSSL's DTLS record layer drops most garbage by itself, but OpenSSL 3.0 fails the
/// whole association, with a fatal "internal error", on an AEAD-protected record too short
/// for its explicit nonce and tag: anyone who can put a 17-byte datagram on the call's port
/// could end the call. So protected records (epoch above 0) pass only once a cipher is
/// negotiated (before that none can be genuine) and only when at least as long as it needs;
/// whole records only, a truncated tail is dropped as OpenSSL would.
enum DTLSRecordFilter {
    static let headerLength = 13

    /// The admissible records of `datagram`, in order; nil when none is. `minimumProtected`:
    /// the shortest acceptable protected record (`DTLSSession.minimumProtectedRecord`).
    static func admissible(_ datagram: UnsafeRawBufferPointer, minimumProtected: Int?) -> [UInt8]? {
        var kept: [UInt8] = []
        var offset = 0
        while datagram.count - offset >= headerLength {
            let epoch = Int(datagram[offset + 3]) << 8 | Int(datagram[offset + 4])
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            let end = offset + headerLength + length
            guard end <= datagram.count else { break }
            if epoch == 0 || (minimumProtected.map { length >= $0 } ?? false) {
                kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: datagram[offset..<end]))
            }
            offset = end
        }
        return kept.isEmpty ? nil : kept
    }
}
