import Testing

@testable import ICE

@Suite("CRC-32")
struct CRC32Tests {
    @Test(
        "check values",
        arguments: [
            ("", UInt32(0)),
            ("123456789", UInt32(0xCBF4_3926)),
            ("The quick brown fox jumps over the lazy dog", UInt32(0x414F_A339))
        ])
    func checkValues(input: String, expected: UInt32) {
        #expect(CRC32.checksum(Array(input.utf8)) == expected)
    }
}
