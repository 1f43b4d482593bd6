import IOCore
import Redis
import Testing

struct GoodURL: Sendable, CustomTestStringConvertible {
    let url: String
    let endpoint: RedisEndpoint
    var testDescription: String { url }

    static let all: [GoodURL] = [
        GoodURL(url: "redis://127.0.0.1:6380", endpoint: RedisEndpoint(address: .init(host: "127.0.0.1", port: 6380))),
        GoodURL(url: "redis://localhost", endpoint: RedisEndpoint(address: .init(host: "127.0.0.1", port: 6379))),
        GoodURL(
            url: "REDIS://10.0.0.5/15",
            endpoint: RedisEndpoint(address: .init(host: "10.0.0.5", port: 6379), database: 15)),
        GoodURL(
            url: "redis://:s3cret@127.0.0.1:7000/2",
            endpoint: RedisEndpoint(address: .init(host: "127.0.0.1", port: 7000), password: "s3cret", database: 2)),
        GoodURL(
            url: "redis://app:p%40ss%3A@[::1]:7001/0",
            endpoint: RedisEndpoint(address: .init(host: "::1", port: 7001), username: "app", password: "p@ss:")),
        GoodURL(url: "redis://[::1]/", endpoint: RedisEndpoint(address: .init(host: "::1", port: 6379)))
    ]
}

@Test(arguments: GoodURL.all)
func goodURLsParse(_ sample: GoodURL) throws {
    #expect(try RedisEndpoint.parse(sample.url) == sample.endpoint)
}

@Test(arguments: [
    ("127.0.0.1:6379", RedisURLError.scheme("")),
    ("rediss://127.0.0.1", .scheme("rediss")),
    ("http://127.0.0.1", .scheme("http")),
    ("redis://", .missingHost),
    ("redis://:secret@:6379", .missingHost),
    ("redis://redis.internal:6379", .host("redis.internal")),
    ("redis://::1:6379", .host("::1")),
    ("redis://[::1", .host("[::1")),
    ("redis://127.0.0.1:0", .port("0")),
    ("redis://127.0.0.1:65536", .port("65536")),
    ("redis://127.0.0.1:abc", .port("abc")),
    ("redis://127.0.0.1:", .port("")),
    ("redis://[::1]x", .port("x")),
    ("redis://127.0.0.1/x", .database("x")),
    ("redis://127.0.0.1/-1", .database("-1")),
    ("redis://secret@127.0.0.1", .userInfo),
    ("redis://:bad%zzsecret@127.0.0.1", .userInfo),
    ("redis://:secret%@127.0.0.1", .userInfo)
])
func badURLsSayWhatIsWrongWithoutThePassword(_ url: String, _ expected: RedisURLError) {
    #expect(throws: expected) { try RedisEndpoint.parse(url) }
    #expect(!expected.description.contains("secret"))
}

@Test func anEndpointDescriptionHidesThePassword() throws {
    let endpoint = try RedisEndpoint.parse("redis://app:s3cret@127.0.0.1:7000/3")
    #expect(endpoint.description == "redis://app:***@127.0.0.1:7000/3")
}
