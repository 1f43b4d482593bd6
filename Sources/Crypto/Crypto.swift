import COpenSSL

/// A small wrapper over OpenSSL's libcrypto: the hashes, MACs and randomness that SIP digest
/// authentication, room tokens, the API key, the WebSocket handshake and STUN (HMAC-SHA1,
/// RFC 8489 §14.5) need.
///
/// It is its own module so that a user of a hash needs neither TLS nor SIP; everything above
/// it works with `[UInt8]` and `String` (or caller-owned raw buffers, for the per-packet HMAC).
/// Hex and base64 are in this module too (Hex.swift, Base64.swift).
public enum Crypto {
    /// The MD5 digest (16 bytes) of `bytes`. MD5 is broken for collision resistance; it is here
    /// only because RFC 2617/3261 digest authentication still requires it.
    public static func md5(_ bytes: [UInt8]) -> [UInt8] {
        digest(bytes, EVP_md5())
    }

    /// The SHA-1 digest (20 bytes) of `bytes`. Only where a protocol fixes it as a check value
    /// (the WebSocket handshake's Sec-WebSocket-Accept, RFC 6455 §4.2.2), not for security.
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        digest(bytes, EVP_sha1())
    }

    /// The SHA-256 digest (32 bytes) of `bytes`.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        digest(bytes, EVP_sha256())
    }

    /// HMAC-SHA-256 (RFC 2104) of `data` under `key`; 32 bytes.
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        hmac(EVP_sha256(), key: key, data: data, name: "HMAC-SHA-256")
    }

    /// HMAC-SHA1 (RFC 2104) of `data` under `key`; 20 bytes. STUN's MESSAGE-INTEGRITY
    /// (RFC 8489 §14.5) and SRTP use it; SHA-1 is weak for signatures, not as an HMAC.
    public static func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        hmac(EVP_sha1(), key: key, data: data, name: "HMAC-SHA1")
    }

    /// The length of an HMAC-SHA1 output (20 octets).
    public static let hmacSHA1Length = 20

    /// HMAC-SHA1 of `data` under `key`, written into the first 20 octets of `output`, without
    /// allocating (the STUN path checks and signs every binding request with it).
    /// - Precondition: `output.count >= hmacSHA1Length`.
    public static func hmacSHA1(
        key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) {
        precondition(output.count >= hmacSHA1Length, "HMAC-SHA1 needs a 20-octet output buffer")
        var length: UInt32 = 0
        // OpenSSL treats a null key pointer as "reuse the previous key", and a null data
        // pointer as an error; give it a valid pointer with a zero count instead.
        var zero: UInt8 = 0
        let ok = withUnsafeMutablePointer(to: &zero) { placeholder in
            HMAC(
                EVP_sha1(),
                key.baseAddress ?? UnsafeRawPointer(placeholder), Int32(key.count),
                data.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(placeholder), data.count,
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) != nil
        }
        precondition(ok && length == UInt32(hmacSHA1Length), "OpenSSL HMAC-SHA1 failed")
    }

    private static func hmac(_ type: OpaquePointer?, key: [UInt8], data: [UInt8], name: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // OpenSSL treats a null key pointer as "reuse the previous key", so never pass one.
        let keyBytes = key.isEmpty ? [UInt8(0)] : key
        let ok = keyBytes.withUnsafeBufferPointer { keyBuffer in
            withNonNullBytes(data) { dataPointer, dataCount in
                out.withUnsafeMutableBufferPointer { outBuffer in
                    HMAC(
                        type, keyBuffer.baseAddress, Int32(key.count),
                        dataPointer, dataCount, outBuffer.baseAddress, &length) != nil
                }
            }
        }
        precondition(ok, "OpenSSL \(name) failed")
        return Array(out.prefix(Int(length)))
    }

    /// `count` bytes from OpenSSL's CSPRNG (falling back to the system CSPRNG should OpenSSL's
    /// fail, which it does not once seeded).
    public static func randomBytes(count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            RAND_bytes(buffer.baseAddress, Int32(buffer.count)) == 1
        }
        if !ok {
            var generator = SystemRandomNumberGenerator()
            for index in out.indices { out[index] = generator.next() }
        }
        return out
    }

    /// Compares two byte strings in time that depends only on their lengths, never on where they
    /// differ, so a secret (a digest response, a MAC) cannot be guessed byte by byte.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { aBuffer in
            b.withUnsafeBytes { bBuffer in
                CRYPTO_memcmp(aBuffer.baseAddress, bBuffer.baseAddress, aBuffer.count) == 0
            }
        }
    }

    private static func digest(_ bytes: [UInt8], _ type: OpaquePointer?) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = withNonNullBytes(bytes) { pointer, count in
            out.withUnsafeMutableBufferPointer { outBuffer in
                EVP_Digest(pointer, count, outBuffer.baseAddress, &length, type, nil) == 1
            }
        }
        precondition(ok, "OpenSSL EVP_Digest failed")
        return Array(out.prefix(Int(length)))
    }

    /// Calls `body` with a pointer that is never null, even for an empty array.
    private static func withNonNullBytes<R>(
        _ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R
    ) -> R {
        if bytes.isEmpty {
            let placeholder: [UInt8] = [0]
            return placeholder.withUnsafeBufferPointer { body($0.baseAddress!, 0) }
        }
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
