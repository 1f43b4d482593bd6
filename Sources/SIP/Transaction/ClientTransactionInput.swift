/// What a client transaction machine takes in (RFC 3261 §17.1): the same events for the
/// INVITE and the non-INVITE kind.
enum ClientTransactionInput: Equatable {
    /// The TU hands over the request.
    case start
    /// A response with this status matched the transaction.
    case response(status: Int)
    case timer(TransactionTimer)
    case transportError
}
