/// What a client transaction machine asks its driver to do. The non-INVITE kind never
/// sends an ACK nor passes a retransmission.
enum ClientTransactionAction: Equatable {
    case sendRequest
    /// ACK for the last non-2xx final response (§17.1.1.3), built by the driver.
    case sendACK
    /// The response goes to the TU; `retransmission` for a 2xx repeated in Accepted.
    case passResponse(retransmission: Bool)
    case timeout
    case transportError
    case schedule(TransactionTimer, after: Double)
    case cancel(TransactionTimer)
    case terminated
}
