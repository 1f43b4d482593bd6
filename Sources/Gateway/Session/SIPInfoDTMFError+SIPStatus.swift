import Media

extension SIPInfoDTMFError {
    /// The SIP status that refuses an INFO with this body (RFC 6086 §4.2.2): 415 for a content
    /// type we do not take, 400 for a body we cannot read. Media classifies, this edge names
    /// the status; the dialog machine answers in-dialog INFO 200 before the session reads the
    /// body, so today this is the status a rejecting edge would use, not one that is sent.
    public var sipStatus: Int {
        switch kind {
        case .unsupportedContentType: 415
        case .malformedBody: 400
        }
    }
}
