import IOCore

/// Where a Redis server is and how to log in: `redis://[[user]:password@]host[:port][/db]`.
/// The host is an IP literal (`[::1]` for IPv6) or `localhost` (127.0.0.1); the port
/// defaults to 6379, the database to 0. A user (Redis 6 ACL) sends `AUTH user password`,
/// a password alone `AUTH password`. `description` hides the password.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var address: SocketAddress
    public var username: String?
    public var password: String?
    /// The database SELECTed after connecting; 0 sends no SELECT.
    public var database: Int

    public init(address: SocketAddress, username: String? = nil, password: String? = nil, database: Int = 0) {
        self.address = address
        self.username = username
        self.password = password
        self.database = database
    }

    /// The default port.
    public static let defaultPort = 6379

    /// Parses a `redis://` URL; the error names what is wrong.
    public static func parse(_ url: String) throws(RedisURLError) -> RedisEndpoint {
        guard let schemeEnd = url.range(of: "://") else { throw .scheme("") }
        let scheme = String(url[..<schemeEnd.lowerBound])
        guard scheme.lowercased() == "redis" else { throw .scheme(scheme) }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)

        var username: String?, password: String?
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            guard let colon = userInfo.firstIndex(of: ":"),
                let user = percentDecoded(userInfo[..<colon]),
                let secret = percentDecoded(userInfo[userInfo.index(after: colon)...])
            else { throw .userInfo }
            username = user.isEmpty ? nil : user
            password = secret
        }

        let address = try parseHostPort(hostPort)
        var database = 0
        if path.count > 1 {
            let text = path.dropFirst()
            guard let db = Int(text), db >= 0, text.allSatisfy(\.isASCII) else { throw .database(String(text)) }
            database = db
        }
        return RedisEndpoint(address: address, username: username, password: password, database: database)
    }

    private static func parseHostPort(_ text: Substring) throws(RedisURLError) -> SocketAddress {
        var host = text, portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .host(String(text)) }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .port(String(after)) }
                portText = after.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { throw .missingHost }
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number), portText.allSatisfy(\.isASCII) else {
                throw .port(String(portText))
            }
            port = number
        }
        if host.lowercased() == "localhost" { return SocketAddress(host: "127.0.0.1", port: port) }
        // An IPv6 literal needs its brackets, or its last group would be read as the port.
        guard SocketAddress.isNumericHost(String(host)), text.hasPrefix("[") || !host.contains(":") else {
            throw .host(String(host))
        }
        return SocketAddress(host: String(host), port: port)
    }

    /// RFC 3986 percent-decoding of userinfo; nil for a malformed escape or non-UTF-8.
    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    public var description: String {
        let login = password == nil ? "" : "\(username ?? ""):***@"
        return "redis://\(login)\(address)/\(database)"
    }
}
