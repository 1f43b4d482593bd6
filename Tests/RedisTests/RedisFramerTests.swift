import IOCore
import Redis
import Testing

/// RESP as a server sends it, cut into `RedisValue`s by hiredis's reader behind `RedisFramer`.
struct RESPCase: Sendable, CustomTestStringConvertible {
    let name: String
    let wire: [UInt8]
    let replies: [RedisValue]
    var testDescription: String { name }

    init(_ name: String, _ wire: String, _ replies: [RedisValue]) {
        self.name = name
        self.wire = Array(wire.utf8)
        self.replies = replies
    }

    init(_ name: String, bytes: [UInt8], _ replies: [RedisValue]) {
        self.name = name
        self.wire = bytes
        self.replies = replies
    }

    static let all: [RESPCase] = [
        RESPCase("status", "+OK\r\n", [.simpleString("OK")]),
        RESPCase("error", "-ERR unknown command 'FOO'\r\n", [.error("ERR unknown command 'FOO'")]),
        RESPCase("integer", ":-42\r\n", [.integer(-42)]),
        RESPCase("bulk", "$5\r\nhello\r\n", [.bulk("hello")]),
        RESPCase("empty bulk", "$0\r\n\r\n", [.bulk([])]),
        RESPCase("null bulk", "$-1\r\n", [.null]),
        RESPCase("null array", "*-1\r\n", [.null]),
        RESPCase("empty array", "*0\r\n", [.array([])]),
        RESPCase(
            "binary bulk", bytes: Array("$6\r\n".utf8) + [13, 10, 0, 255, 36, 42] + [13, 10],
            [.bulk([13, 10, 0, 255, 36, 42])]),
        RESPCase(
            "LRANGE", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", [.array([.bulk("a"), .bulk("b"), .bulk("c")])]),
        // XRANGE s - + as redis-server 7 sends it: entries of [id, [field, value ...]].
        RESPCase(
            "XRANGE",
            "*2\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n$1\r\nw\r\n"
                + "*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nh\r\n$1\r\nx\r\n",
            [
                .array([
                    .array([.bulk("1-1"), .array([.bulk("f"), .bulk("v"), .bulk("g"), .bulk("w")])]),
                    .array([.bulk("2-1"), .array([.bulk("h"), .bulk("x")])])
                ])
            ]),
        // EXEC of a transaction whose second command failed: the error stays in the array.
        RESPCase(
            "EXEC with an error inside", "*2\r\n+OK\r\n-ERR value is not an integer or out of range\r\n",
            [.array([.simpleString("OK"), .error("ERR value is not an integer or out of range")])]),
        RESPCase(
            "pipeline", "+OK\r\n:1\r\n$1\r\nx\r\n$-1\r\n*1\r\n:7\r\n",
            [.simpleString("OK"), .integer(1), .bulk("x"), .null, .array([.integer(7)])])
    ]
}

@Test(arguments: RESPCase.all)
func framerCutsTheSameRepliesWhereverTheBytesAreSplit(_ sample: RESPCase) throws {
    for split in 0...sample.wire.count {
        var framer = RedisFramer()
        var replies = try sample.wire[..<split].withUnsafeBytes { try framer.append($0) }
        replies += try sample.wire[split...].withUnsafeBytes { try framer.append($0) }
        #expect(replies == sample.replies, "split at \(split)")
        #expect(framer.pending == 0)
    }
}

@Test(arguments: RESPCase.all)
func framerCutsTheSameRepliesFedOneByteAtATime(_ sample: RESPCase) throws {
    var framer = RedisFramer()
    var replies: [RedisValue] = []
    for byte in sample.wire {
        replies += try [byte].withUnsafeBytes { try framer.append($0) }
    }
    #expect(replies == sample.replies)
    #expect(framer.pending == 0)
}

@Test(arguments: ["?what\r\n", "$abc\r\nxyz\r\n", "*2\r\n!x\r\n"])
func framerRefusesBytesThatAreNotRESP(_ wire: String) {
    var framer = RedisFramer()
    #expect {
        _ = try Array(wire.utf8).withUnsafeBytes { try framer.append($0) }
    } throws: { error in
        guard case .protocolError(let why) = error as? RedisError else { return false }
        return !why.isEmpty
    }
}

@Test func commandsAreWrittenAsArraysOfBulkStrings() {
    let wire = RedisArgument.encode(["SET", "k", RedisArgument([0, 13, 10]), 42])
    #expect(wire == Array("*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n".utf8) + [0, 13, 10] + Array("\r\n$2\r\n42\r\n".utf8))
}
