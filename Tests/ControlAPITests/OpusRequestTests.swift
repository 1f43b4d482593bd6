import Foundation
import Gateway
import IrisAPI
import Testing

@testable import ControlAPI

// A create request's `opus` read as `POST /v1/sessions` reads it: the body decoded (keys and
// types), then the values checked (`Gateway.opusOverrides`). Every refusal is 400 (-103)
// naming `opus.<key>`. Tables at file scope (as static members the compiler reports a
// circular reference).

private func body(opus: String) -> [UInt8] {
    Array(#"{"targetTN":"+15551230001","sourceTN":"+15557654321","media":{"sdp":"v=0"},"opus":\#(opus)}"#.utf8)
}

/// The request's `opus` as read, or the refusal.
private func read(_ opus: String) -> Result<OpusOptions?, GatewayError> {
    do throws(GatewayError) {
        let request = try ControlAPIServer.decodeBody(CreateSessionRequest.self, from: body(opus: opus))
        _ = try Gateway.opusOverrides(request.opus)
        return .success(request.opus)
    } catch {
        return .failure(error)
    }
}

private let goodOpus: [(String, OpusOptions?)] = [
    ("null", nil),
    ("{}", OpusOptions()),
    (#"{"complexity":1}"#, OpusOptions(complexity: 1)),
    (#"{"bitrate":"auto"}"#, OpusOptions(bitrate: .auto)),
    (#"{"bitrate":32000}"#, OpusOptions(bitrate: .bitsPerSecond(32_000))),
    (#"{"fec":false,"expectedLoss":0,"dtx":true}"#, OpusOptions(fec: false, expectedLoss: 0, dtx: true)),
    (
        #"{"application":"audio","maxBandwidth":"fullband"}"#,
        OpusOptions(application: "audio", maxBandwidth: "fullband")
    ),
    (
        #"{"application":"restricted-lowdelay","maxBandwidth":"auto"}"#,
        OpusOptions(application: "restricted-lowdelay", maxBandwidth: "auto")
    ),
    (#"{"sampleRate":48000}"#, OpusOptions(sampleRate: .hertz(48_000))),
    (#"{"sampleRate":"auto"}"#, OpusOptions(sampleRate: .auto)),
    (
        #"{"complexity":10,"bitrate":510000,"fec":true,"expectedLoss":100,"dtx":false,"application":"voip","maxBandwidth":"narrowband"}"#,
        OpusOptions(
            complexity: 10, bitrate: .bitsPerSecond(510_000), fec: true, expectedLoss: 100, dtx: false,
            application: "voip",
            maxBandwidth: "narrowband")
    )
]

@Test(arguments: goodOpus)
func goodRequestOpusIsRead(json: String, expected: OpusOptions?) throws {
    #expect(try read(json).get() == expected)
}

private let badOpus: [(String, String)] = [
    (#"{"complexity":11}"#, "opus.complexity: must be from 0 to 10, found 11"),
    (#"{"complexity":"high"}"#, #"wrong type at "opus.complexity""#),
    (#"{"complexity":1.5}"#, "opus.complexity: must be an integer, found 1.5"),
    (#"{"expectedLoss":2.25}"#, "opus.expectedLoss: must be an integer, found 2.25"),
    (#"{"bitrate":6000.5}"#, #"opus.bitrate: must be a whole number of bits per second or "auto", found 6000.5"#),
    (#"{"bitrate":1000}"#, #"opus.bitrate: must be from 6000 to 510000 or "auto", found 1000"#),
    (#"{"bitrate":"max"}"#, #"opus.bitrate: must be a number of bits per second or "auto", found "max""#),
    (#"{"bitrate":true}"#, #"wrong type at "opus.bitrate""#),
    (#"{"fec":"yes"}"#, #"wrong type at "opus.fec""#),
    (#"{"expectedLoss":-1}"#, "opus.expectedLoss: must be from 0 to 100, found -1"),
    (#"{"dtx":1}"#, #"wrong type at "opus.dtx""#),
    (
        #"{"application":"music"}"#,
        #"opus.application: must be one of "voip", "audio", "restricted-lowdelay", found "music""#
    ),
    (#"{"application":7}"#, #"wrong type at "opus.application""#),
    (
        #"{"maxBandwidth":"hd"}"#,
        #"opus.maxBandwidth: must be one of "auto", "narrowband", "mediumband", "wideband", "superwideband", "fullband", found "hd""#
    ),
    (
        #"{"complexty":1}"#,
        "opus.complexty: unknown key (allowed: complexity, bitrate, fec, expectedLoss, dtx, application, maxBandwidth, sampleRate)"
    ),
    (#"{"sampleRate":44100}"#, #"opus.sampleRate: must be one of 8000, 16000, 24000, 48000 or "auto", found 44100"#),
    (#"{"sampleRate":"48k"}"#, #"opus.sampleRate: must be a number of hertz or "auto", found "48k""#),
    (#"{"sampleRate":8000.5}"#, #"opus.sampleRate: must be a whole number of hertz or "auto", found 8000.5"#),
    (#"{"sampleRate":[]}"#, #"wrong type at "opus.sampleRate""#),
    ("5", #"wrong type at "opus""#)
]

@Test(arguments: badOpus)
func badRequestOpusIs400NamingTheKey(json: String, message: String) {
    guard case .failure(let error) = read(json) else {
        Issue.record("\(json) was accepted")
        return
    }
    #expect(error.refusal.httpStatus == 400 && error.irisCode == -103)
    #expect(error.message == message)
}

@Test func theClientsRequestEncodesOpusAsTheServerReadsIt() throws {
    let options = OpusOptions(complexity: 3, bitrate: .auto, maxBandwidth: "wideband")
    let request = CreateSessionRequest(
        targetTN: "+15551230001", sourceTN: "+15557654321", media: MediaBody(sdp: "v=0"), opus: options)
    let data = try JSONEncoder().encode(request)
    let text = String(decoding: data, as: UTF8.self)
    #expect(text.contains(#""opus":{"#) && text.contains(#""bitrate":"auto""#) && !text.contains("fec"))
    #expect(try ControlAPIServer.decodeBody(CreateSessionRequest.self, from: Array(data)) == request)
    // Without `opus` the key is left out altogether.
    let plain = try JSONEncoder().encode(
        CreateSessionRequest(targetTN: "+1", sourceTN: "+1", media: MediaBody(sdp: "v=0")))
    #expect(!String(decoding: plain, as: UTF8.self).contains("opus"))
}
