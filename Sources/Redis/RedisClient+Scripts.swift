// Lua scripts by SHA-1: the source crosses the wire only when the server does not know it.
extension RedisClient {
    /// Runs `script` with `keys` and `args`: EVALSHA, and on a NOSCRIPT error reply EVAL
    /// once (which also loads it for next time). On the loop; see `send` for `timeout`.
    public func eval(
        _ script: RedisScript, keys: [RedisArgument] = [], args: [RedisArgument] = [], timeout: Double? = nil,
        then completion: @escaping Completion
    ) {
        let tail = [RedisArgument(keys.count)] + keys + args
        send(["EVALSHA", RedisArgument(script.sha1)] + tail, timeout: timeout) { [weak self] result in
            guard let self, case .failure(.server(let message)) = result, message.hasPrefix("NOSCRIPT") else {
                return completion(result)
            }
            send(["EVAL", RedisArgument(script.source)] + tail, timeout: timeout, then: completion)
        }
    }
}
