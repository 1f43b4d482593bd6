import COpenSSL

/// A small wrapper over OpenSSL's libcrypto: the hashes, MAC and randomness that digest
/// authentication needs.
///
/// This is the only file in the module that touches OpenSSL pointers; everything above it works
/// with `[UInt8]` and `String`.
public enum Crypto {
    /// The MD5 digest (16 bytes) of `bytes`. MD5 is broken for collision resistance; it is here
    /// only because RFC 2617/3261 digest authentication still requires it.
    public static func md5(_ bytes: [UInt8]) -> [UInt8] {
        digest(bytes, EVP_md5())
    }

    /// The SHA-256 digest (32 bytes) of `bytes`.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        digest(bytes, EVP_sha256())
    }

    /// HMAC-SHA-256 (RFC 2104) of `data` under `key`; 32 bytes.
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // OpenSSL treats a null key pointer as "reuse the previous key", so never pass one.
        let keyBytes = key.isEmpty ? [UInt8(0)] : key
        let ok = keyBytes.withUnsafeBufferPointer { keyBuffer in
            withNonNullBytes(data) { dataPointer, dataCount in
                out.withUnsafeMutableBufferPointer { outBuffer in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(key.count),
                         dataPointer, dataCount, outBuffer.baseAddress, &length) != nil
                }
            }
        }
        precondition(ok, "OpenSSL HMAC-SHA-256 failed")
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

    /// Lowercase hexadecimal form of `bytes` (two digits per byte).
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
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
