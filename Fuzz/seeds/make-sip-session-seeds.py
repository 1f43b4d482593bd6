#!/usr/bin/env python3
"""Writes the seed corpus of fuzz-sip-session (Fuzz/seeds/sip-session/) from

  * the SIPp scenarios of the shared conformance corpus (../shared/conformance/sipp/*/*.xml:
    pjproject, Asterisk, drachtio, FreeSWITCH, SIPp's own), as `sipp-ORIGIN-NAME.txt`;
  * the SIPp scenarios the end-to-end tests build (Tests/EndToEndTests/Scenarios.swift,
    CarrierScenarios.swift, CallerScenarios.swift: compiled and printed by a small Swift
    program), as `test-NAME.txt`;
  * the RFC 4475 and RFC 5118 messages, each sent, retransmitted and left to time out, as
    `torture-NAME.txt`;
  * sequences composed below (SEQUENCES) for what those do not reach: retransmissions,
    timeouts, races, glare, forks, session timers, digest retries, untrusted sources, TCP,
    as `seq-NAME.txt`.

Files named otherwise (`hand-*.txt`, written by hand) are left alone. The output is
committed, so `make fuzz-smoke` needs neither this script nor the shared corpus; run it again
when the scenarios change:

    python3 Fuzz/seeds/make-sip-session-seeds.py

A SIPp scenario plays the peer; the agent is the device under test. Each <send> becomes an
`@@ recv` chunk (SIPp keywords are kept: the harness fills them), each <pause> an `@@ wait`,
each <ereg> an `@@ capture`. What SIPp waits for from the device becomes the agent action
that makes it: `@@ call` when the scenario starts by receiving an INVITE, `@@ hangup` for a
BYE or CANCEL it expects, `@@ reinvite` or a wait for the session timer for a re-INVITE or
UPDATE. The format is described at the top of Fuzz/FuzzSIPSession.swift.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "Fuzz", "seeds", "sip-session")
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "conformance"))
GENERATED_PREFIXES = ("sipp-", "test-", "torture-", "seq-")

# Statuses the agent answers by itself (validation, offer/answer, session timers): the
# delegate need not be told to reject with them.
AUTOMATIC = {400, 403, 405, 406, 415, 416, 420, 422, 481, 482, 487, 488, 491, 500, 501, 503}

# Attribute values may hold ">" (regexp="sip:(.*)>"): a tag ends at the first one outside quotes.
TAG = re.compile(r'<(/?)([A-Za-z]+)\b((?:[^>"]|"[^"]*")*?)(/?)>', re.S)
ATTR = re.compile(r'([A-Za-z_]+)\s*=\s*"([^"]*)"')
CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.S)


def elements(xml):
    """The scenario's steps in order: (name, attributes, inner text), tolerant of the
    not-quite-XML SIPp accepts."""
    xml = re.sub(r"<!--.*?-->", "", xml, flags=re.S)
    steps = []
    pos = 0
    while True:
        m = TAG.search(xml, pos)
        if not m:
            return steps
        closing, name, attrs, selfclosing = m.group(1), m.group(2), m.group(3), m.group(4)
        pos = m.end()
        if closing or name in ("scenario", "xml"):
            continue
        inner = ""
        if not selfclosing and name in ("send", "recv", "nop"):
            end = xml.find("</%s>" % name, pos)
            if end < 0:
                end = len(xml)
            inner = xml[pos:end]
            pos = end + len(name) + 3
        steps.append((name, dict(ATTR.findall(attrs)), inner))


def eregs(inner):
    out = []
    for m in re.finditer(r'<ereg\b((?:[^>"]|"[^"]*")*)>', inner):
        out.append(dict(ATTR.findall(m.group(1))))
    return out


def capture_specs(ereg):
    """The harness' capture specs for a SIPp <ereg>, one per variable it assigns (the whole
    match first, then the groups), or [] for a check that assigns nothing we use."""
    variables = [v for v in ereg.get("assign_to", "").split(",") if v]
    regexp = ereg.get("regexp", ".*")
    search = ereg.get("search_in", "msg")
    if search == "msg":
        hit = re.match(r"([A-Za-z-]+):", regexp)
        return [(v, hit.group(1) + ":") for v in variables[:1]] if hit else []
    if search != "hdr" or not ereg.get("header"):
        return []
    # SIPp reads a header named without its colon from the colon on.
    plain = "" if ereg["header"].strip().endswith(":") else "^"
    header = ereg["header"].strip().rstrip(":").strip()
    if regexp.startswith("sip:(") and variables:
        return list(zip(variables, [header + "@uri", header + "@host"]))
    if regexp.startswith("sip:"):
        return [(v, header + "@uri") for v in variables[:1]]
    hit = re.match(r"([a-z]+)=\(", regexp)
    if hit:
        return list(zip(variables, [header + "~" + hit.group(1) + "=", header + ";" + hit.group(1)]))
    if regexp.startswith("tag="):
        return [(v, header + "~tag=") for v in variables]
    if "([0-9]" in regexp and not regexp.startswith(".*"):
        return [(v, header + "#") for v in variables]
    return [(v, header + plain) for v in variables]


def assignstrs(inner):
    """SIPp <assignstr assign_to="v" value="[last_X:]"/>: (variable, header) pairs."""
    out = []
    for m in re.finditer(r'<assignstr\b((?:[^>"]|"[^"]*")*)>', inner):
        a = dict(ATTR.findall(m.group(1)))
        hit = re.fullmatch(r"\[last_([A-Za-z-]+):?\]", a.get("value", "").strip())
        if hit and a.get("assign_to"):
            out.append((a["assign_to"], hit.group(1)))
    return out


def message_text(cdata):
    return "\n".join(line.strip() for line in cdata.strip("\n").splitlines()).strip("\n")


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def convert(xml, origin):
    """One SIPp scenario as a fuzz-sip-session script."""
    steps = elements(xml)
    sends = [CDATA.search(inner).group(1) if CDATA.search(inner) else inner for (n, a, inner) in steps if n == "send"]
    texts = [message_text(t) for t in sends]
    messages = [(n, a, inner) for (n, a, inner) in steps if n in ("send", "recv")]
    if not messages:
        return None
    lines = ["@@ # " + origin]
    agent_calls = messages[0][0] == "recv"
    joined = "\n".join(texts)
    uses_timer = "Session-Expires" in joined
    if agent_calls:
        method = messages[0][1].get("request", "INVITE").upper()
        if method == "INVITE":
            flags = []
            if re.search(r"^SIP/2\.0 40[17]\b", joined, re.M):
                flags.append("auth")
            lines.append("@@ call " + " ".join(flags) if flags else "@@ call")
        else:
            lines.append("@@ request " + method)
    else:
        expected = [int(a["response"]) for (n, a, _) in messages if n == "recv" and a.get("response", "").isdigit()]
        sends_cancel = any(first_line(t).startswith("CANCEL ") for t in texts)
        finals = [c for c in expected if c >= 300]
        reliable = " reliable" if any(first_line(t).startswith("PRACK ") for t in texts) else ""
        if sends_cancel:
            lines.append("@@ mode ring" + reliable)
        elif 183 in expected and (200 not in expected or expected.index(183) < expected.index(200)):
            lines.append("@@ mode early" + reliable)
        elif finals and finals[0] not in AUTOMATIC and 200 not in expected:
            lines.append("@@ mode reject %d%s" % (finals[0], reliable))
        elif reliable:
            lines.append("@@ mode auto" + reliable)
    send_index = 0          # recv chunks so far (the harness numbers [branch] by them)
    send_vars = {}          # [$var] captured from one of our own sends: (text, send index)
    calls = 1 if agent_calls else 0
    reinvites = 0
    last_kind = ""          # what SIPp received last (a method or a status code)
    captured = set()        # variables the script captures
    first = True
    for name, attrs, inner in steps:
        if name == "pause":
            lines.append("@@ wait %s" % attrs.get("milliseconds", "1000"))
        elif name == "send":
            m = CDATA.search(inner)
            text = message_text(m.group(1) if m else inner)
            if attrs.get("lost") == "100":
                continue
            send_index += 1
            for var, (value, index) in send_vars.items():
                text = text.replace("[$%s]" % var, value.replace("[branch]", "[branch-%d]" % (send_index - index)))
            text = text.replace("[field0]", "service").replace("[field1]", "service")
            lines.append("@@ recv")
            lines.append(text)
            for var, header in assignstrs(inner):
                captured.add(var)
                lines.append("@@ capture %s %s:%s" % (var, header, " from=" + last_kind if last_kind else ""))
            for e in eregs(inner):
                header = e.get("header", "").strip().rstrip(":")
                for var in e.get("assign_to", "").split(","):
                    hit = re.search(r"^%s\s*:(.*)$" % re.escape(header), text, re.M | re.I)
                    if var and hit:
                        send_vars[var] = (hit.group(1).strip(), send_index)
        elif name == "recv":
            request = attrs.get("request", "").upper()
            response = attrs.get("response", "")
            last_kind = request or response
            if first and agent_calls:
                pass
            elif request in ("BYE", "CANCEL"):
                lines.append("@@ hangup")
            elif request in ("INVITE", "UPDATE"):
                if uses_timer:
                    lines.append("@@ wait 60000")
                elif request == "INVITE":
                    reinvites += 1
                    lines.append("@@ reinvite " + ("sendonly" if reinvites % 2 else "sendrecv"))
            elif request == "OPTIONS":
                lines.append("@@ request OPTIONS")
            for e in eregs(inner):
                kind = request or response
                for var, spec in capture_specs(e):
                    captured.add(var)
                    lines.append("@@ capture %s %s%s" % (var, spec, " from=" + kind if kind else ""))
            for var, header in assignstrs(inner):
                captured.add(var)
                lines.append("@@ capture %s %s:%s" % (var, header, " from=" + last_kind if last_kind else ""))
        if name in ("send", "recv"):
            first = False
    script = "\n".join(lines) + "\n"
    for var in sorted(set(re.findall(r"\[\$([^\]]+)\]", script)) - captured):
        print("  %s: [$%s] is never captured (it stays empty)" % (origin, var), file=sys.stderr)
    return script


DUMPER = r"""
import Foundation
@main struct Dump {
    static func main() {
        let all: [(String, String)] = [
            ("busy", Scenarios.busy), ("challenge401", Scenarios.challenge401),
            ("early-media", Scenarios.earlyMedia), ("cancel-while-ringing", Scenarios.cancelWhileRinging),
            ("lost-responses", Scenarios.lostResponses), ("hold-reinvite", Scenarios.holdReinvite),
            ("lost-ack", Scenarios.lostACK),
            ("carrier-reject-486", CarrierScenarios.reject("486 Busy Here")),
            ("carrier-reject-503-q850", CarrierScenarios.reject("503 Service Unavailable", q850: 34)),
            ("carrier-reject-404-no-ring", CarrierScenarios.reject("404 Not Found", ring: false)),
            ("carrier-answer", CarrierScenarios.answer()),
            ("carrier-answer-early-media", CarrierScenarios.answer(earlyMedia: true)),
            ("carrier-answer-bye", CarrierScenarios.answer(byeAfterMs: 1000)),
            ("carrier-answer-hold-resume", CarrierScenarios.answer(acceptHoldAndResume: true)),
            ("carrier-answer-info-bye", CarrierScenarios.answer(byeAfterMs: 500, infoDigit: "5")),
            ("carrier-ring-until-cancel", CarrierScenarios.ringUntilCancel),
            ("caller-rejected", CallerScenarios.rejected(486)),
            ("caller-cancels", CallerScenarios.cancels(afterMs: 500)),
            ("caller-late-offer", CallerScenarios.lateOffer()),
            ("caller-answered", CallerScenarios.answered()),
            ("caller-answered-hold", CallerScenarios.answered(hold: true)),
        ]
        for (name, xml) in all { print("=====SCENARIO " + name); print(xml) }
    }
}
"""


def test_scenarios():
    tests = os.path.join(ROOT, "Tests", "EndToEndTests")
    with tempfile.TemporaryDirectory() as tmp:
        main = os.path.join(tmp, "dump.swift")
        with open(main, "w") as f:
            f.write(DUMPER)
        exe = os.path.join(tmp, "dump")
        sources = [os.path.join(tests, n) for n in ("Scenarios.swift", "CarrierScenarios.swift", "CallerScenarios.swift")]
        subprocess.run(["swiftc", "-parse-as-library", "-suppress-warnings", main, *sources, "-o", exe], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    parts = out.split("=====SCENARIO ")[1:]
    return [(p.split("\n", 1)[0].strip(), p.split("\n", 1)[1]) for p in parts]


# Sequences composed here, for what the scenarios above do not reach: retransmissions,
# timeouts, races, glare, forks, session timers, digest retries, untrusted sources, TCP.
SDP = """v=0
o=peer 1 1 IN IP4 [media_ip]
s=-
c=IN IP4 [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0 8 101
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:101 telephone-event/8000
a=fmtp:101 0-16
a=%s"""
FROM = "From: peer <sip:peer@[local_ip]:[local_port]>;tag=[pid]peer[call_number]"
TO = "To: <sip:[service]@[remote_ip]:[remote_port]>"


def request(method, cseq, to_tag=True, sdp=None, branch="[branch]", extra=(), uri="sip:[service]@[remote_ip]:[remote_port]"):
    lines = ["@@ recv", "%s %s SIP/2.0" % (method, uri), "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=%s" % branch,
             FROM, TO + ("[peer_tag_param]" if to_tag else ""), "Call-ID: [call_id]", "CSeq: %s %s" % (cseq, method),
             "Contact: <sip:peer@[local_ip]:[local_port]>", "Max-Forwards: 70", *extra]
    if sdp:
        lines += ["Content-Type: application/sdp", "Content-Length: [len]", "", SDP % sdp]
    else:
        lines += ["Content-Length: 0"]
    return "\n".join(lines)


def response(status, tag="[pid]callee[call_number]", sdp=None, extra=()):
    lines = ["@@ recv", "SIP/2.0 " + status, "[last_Via:]", "[last_From:]", "[last_To:]" + (";tag=" + tag if tag else ""),
             "[last_Call-ID:]", "[last_CSeq:]", "Contact: <sip:callee@[local_ip]:[local_port]>", *extra]
    if sdp:
        lines += ["Content-Type: application/sdp", "Content-Length: [len]", "", SDP % sdp]
    else:
        lines += ["Content-Length: 0"]
    return "\n".join(lines)


def invite(**kw):
    kw.setdefault("to_tag", False)
    kw.setdefault("sdp", "sendrecv")
    return request("INVITE", 1, **kw)


SEQUENCES = {
    "invite-ack-bye-retransmitted": [invite(), "@@ again", "@@ wait 600", request("ACK", 1), "@@ again",
                                     request("BYE", 2), "@@ again", "@@ wait 5000", "@@ again"],
    "invite-no-ack-times-out": [invite(), "@@ wait 2000", "@@ wait 40000", response("200 OK", tag=None)],
    "invite-bye-before-ack": [invite(), request("BYE", 2), request("ACK", 1)],
    "late-offer-answer-in-ack": [invite(sdp=None), request("ACK", 1, sdp="sendrecv"), request("BYE", 2)],
    "cancel-while-ringing-retransmitted": ["@@ mode ring", invite(), "@@ wait 300",
                                           request("CANCEL", 1, to_tag=False, branch="[branch-1]"), "@@ again",
                                           request("ACK", 1, branch="[branch-2]"), "@@ again", "@@ wait 40000"],
    "cancel-after-answer": [invite(), request("CANCEL", 1, to_tag=False, branch="[branch-1]"), request("ACK", 1),
                            request("BYE", 2)],
    "cancel-unknown": [request("CANCEL", 1, to_tag=False), request("BYE", 1, to_tag=False)],
    "reject-then-ack-late": ["@@ mode reject 486", invite(), "@@ wait 3000", request("ACK", 1, branch="[branch-1]")],
    "ring-then-hangup": ["@@ mode ring", invite(), "@@ wait 1000", "@@ hangup 603", "@@ wait 1000",
                         request("ACK", 1, branch="[branch-1]")],
    "ring-answer-later": ["@@ mode none", invite(), "@@ ring", "@@ wait 2000", "@@ ring sdp", "@@ answer", request("ACK", 1),
                          "@@ hangup", response("200 OK", tag=None)],
    "reinvite-hold-unhold-no-sdp": [invite(), request("ACK", 1), request("INVITE", 2, sdp="sendonly"), request("ACK", 2),
                                    request("INVITE", 3), request("ACK", 3, sdp="sendrecv"), request("BYE", 4)],
    "reinvite-glare": [invite(), request("ACK", 1), "@@ reinvite sendonly", request("INVITE", 2, sdp="sendonly"),
                       response("491 Request Pending", tag=None), "@@ wait 5000", response("200 OK", tag=None, sdp="recvonly"),
                       request("ACK", 2, branch="[branch-3]"), request("BYE", 3)],
    "reinvite-refused-then-bye": [invite(), request("ACK", 1), "@@ offers refuse", request("INVITE", 2, sdp="sendonly"),
                                  request("ACK", 2, branch="[branch-1]"), "@@ reinvite inactive",
                                  response("488 Not Acceptable Here", tag=None), "@@ hangup", response("200 OK", tag=None)],
    "reinvite-out-of-order-cseq": [invite(), request("ACK", 1), request("INVITE", 5, sdp="sendonly"), request("ACK", 5),
                                   request("INFO", 3), request("UPDATE", 6, sdp="sendrecv"), request("BYE", 7)],
    "prack-early-media": ["@@ mode early", invite(extra=("Require: 100rel",)), request("PRACK", 2, extra=("RAck: [rack]",)),
                          "@@ again", request("PRACK", 3, extra=("RAck: 999 1 INVITE",)), request("ACK", 1), request("BYE", 4)],
    "prack-never-comes": ["@@ mode early", invite(extra=("Require: 100rel",)), "@@ wait 4000", "@@ wait 40000",
                          request("ACK", 1, branch="[branch-1]")],
    "prack-with-offer-and-update": ["@@ mode ring reliable", invite(sdp=None, extra=("Supported: 100rel",)),
                                    request("PRACK", 2, sdp="sendrecv", extra=("RAck: [rack]",)),
                                    request("UPDATE", 3, sdp="sendonly"), "@@ answer", request("ACK", 1), request("BYE", 4)],
    "session-timer-expires": [invite(extra=("Supported: timer", "Session-Expires: 90;refresher=uac", "Min-SE: 90")),
                              request("ACK", 1), "@@ wait 100000", response("200 OK", tag=None)],
    "session-timer-we-refresh": [invite(extra=("Supported: timer", "Session-Expires: 90;refresher=uas")), request("ACK", 1),
                                 "@@ wait 50000", response("200 OK", tag=None, sdp="sendrecv",
                                                           extra=("Session-Expires: 90;refresher=uac", "Require: timer")),
                                 "@@ wait 100000", request("BYE", 2)],
    "session-interval-too-small": [invite(extra=("Supported: timer", "Session-Expires: 30")), request("ACK", 1, branch="[branch-1]")],
    "in-dialog-info-options": [invite(), request("ACK", 1), request("INFO", 2, extra=("Content-Type: application/dtmf-relay",)),
                               request("OPTIONS", 3), request("MESSAGE", 4), request("BYE", 5)],
    "out-of-dialog-requests": [request("OPTIONS", 1, to_tag=False), request("REGISTER", 1, to_tag=False),
                               request("SUBSCRIBE", 1, to_tag=False), request("FOO", 1, to_tag=False),
                               request("BYE", 1, to_tag=False), request("PRACK", 1, to_tag=False),
                               invite(extra=("Require: foo",)), invite(uri="mailto:x@y"), invite(extra=("Accept: text/plain",))],
    "merged-request": [invite(), invite(branch="z9hG4bK-other"), request("ACK", 1, branch="[branch-2]"), request("BYE", 2)],
    "untrusted-source": [invite(), request("ACK", 1), "@@ recv peer=3\n" + request("BYE", 2).split("\n", 1)[1],
                         "@@ recv peer=3\n" + invite(branch="z9hG4bK-x").split("\n", 1)[1]],
    "scanner-banned": ["@@ recv\n" + request("OPTIONS", 1, to_tag=False, extra=("User-Agent: friendly-scanner",)).split("\n", 1)[1],
                       invite()],
    "tcp-call": ["@@ recv tcp\n" + invite().split("\n", 1)[1], "@@ recv tcp\n" + request("ACK", 1).split("\n", 1)[1],
                 "@@ recv tcp\n" + request("BYE", 2).split("\n", 1)[1]],
    # The agent calls.
    "uac-answered-2xx-retransmitted": ["@@ call", response("100 Trying", tag=None), response("180 Ringing"),
                                       response("200 OK", sdp="sendrecv"), "@@ again", "@@ wait 1000", "@@ again",
                                       "@@ hangup", response("200 OK", tag=None)],
    "uac-forked": ["@@ call", "@@ capture invite_via Via: from=INVITE", response("180 Ringing", tag="A"),
                   response("180 Ringing", tag="B"), response("200 OK", tag="A", sdp="sendrecv"),
                   "@@ recv\nSIP/2.0 200 OK\n[$invite_via]\n[last_From:]\nTo: <sip:[service]@[local_ip]:[local_port]>;tag=B\n"
                   "[last_Call-ID:]\nCSeq: 1 INVITE\nContact: <sip:b@[local_ip]:[local_port]>\nContent-Length: 0",
                   "@@ wait 1000", "@@ hangup"],
    "uac-reliable-provisionals": ["@@ call", response("180 Ringing", tag="A", extra=("Require: 100rel", "RSeq: 1")),
                                  "@@ capture invite_via Via: from=INVITE", response("200 OK", tag="A"),
                                  "@@ recv\nSIP/2.0 183 Session Progress\n[$invite_via]\n[last_From:]\n[last_To:]\n[last_Call-ID:]\n"
                                  "CSeq: 1 INVITE\nRequire: 100rel\nRSeq: 3\nContent-Length: 0",
                                  "@@ recv\nSIP/2.0 183 Session Progress\n[$invite_via]\n[last_From:]\n[last_To:]\n[last_Call-ID:]\n"
                                  "CSeq: 1 INVITE\nRequire: 100rel\nRSeq: 2\nContent-Length: 0",
                                  "@@ recv\nSIP/2.0 200 OK\n[$invite_via]\n[last_From:]\n[last_To:]\n[last_Call-ID:]\n"
                                  "CSeq: 1 INVITE\nContact: <sip:a@[local_ip]:[local_port]>\nContent-Length: 0",
                                  "@@ hangup", response("200 OK", tag=None)],
    "uac-challenged": ["@@ call auth", response("401 Unauthorized",
                                                extra=('WWW-Authenticate: Digest realm="r", nonce="abc", algorithm=MD5, qop="auth"',)),
                       response("407 Proxy Authentication Required",
                                extra=('Proxy-Authenticate: Digest realm="r", nonce="def", algorithm=SHA-256',)),
                       "@@ wait 1000"],
    "uac-422-then-refresh": ["@@ call", response("422 Session Interval Too Small", extra=("Min-SE: 1900",)),
                             response("200 OK", sdp="sendrecv", extra=("Session-Expires: 1900;refresher=uac", "Require: timer")),
                             "@@ wait 1000000", response("200 OK", tag=None, extra=("Session-Expires: 1900;refresher=uac",)),
                             "@@ hangup", response("200 OK", tag=None)],
    "uac-cancel-before-provisional": ["@@ call nosdp", "@@ hangup", response("180 Ringing"), response("200 OK", tag=None),
                                      "@@ capture invite_via Via: from=INVITE",
                                      "@@ recv\nSIP/2.0 487 Request Terminated\n[$invite_via]\n[last_From:]\n[last_To:];tag=x\n"
                                      "[last_Call-ID:]\nCSeq: 1 INVITE\nContent-Length: 0", "@@ wait 40000"],
    "uac-cancel-races-200": ["@@ call", response("180 Ringing"), "@@ hangup", "@@ capture invite_via Via: from=INVITE",
                             "@@ recv\nSIP/2.0 200 OK\n[$invite_via]\n[last_From:]\n[last_To:];tag=[pid]callee[call_number]\n"
                             "[last_Call-ID:]\nCSeq: 1 INVITE\nContact: <sip:callee@[local_ip]:[local_port]>\nContent-Length: 0",
                             response("200 OK", tag=None), "@@ wait 1000"],
    "uac-no-answer-timeout": ["@@ call 100rel notimer", "@@ wait 40000", "@@ options", "@@ wait 40000"],
    "uac-reinvite-and-bye-from-callee": ["@@ call", response("200 OK", sdp="sendrecv"), "@@ reinvite sendonly",
                                         response("100 Trying", tag=None), "@@ wait 40000",
                                         "@@ capture us From^ from=ACK", "@@ capture them To^ from=ACK",
                                         "@@ recv\nBYE [next_url] SIP/2.0\nVia: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]\n"
                                         "From[$them]\nTo[$us]\n[last_Call-ID:]\nCSeq: 1 BYE\nContent-Length: 0"],
    "uac-options-answered-and-lost": ["@@ options", response("200 OK"), "@@ options", "@@ wait 40000",
                                      "@@ request REGISTER", response("401 Unauthorized")],
}


def sequences():
    for name, chunks in SEQUENCES.items():
        yield "seq-%s.txt" % name, "@@ # composed: %s\n" % name + "\n".join(chunks) + "\n"


def torture(path):
    data = open(path, "rb").read()
    if b"\n@@" in data or data.startswith(b"@@"):
        return None
    name = os.path.relpath(path, SHARED)
    return b"@@ # " + name.encode() + b"\n@@ recv raw\n" + data + b"\n@@ again\n@@ wait 40000\n"


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if old.startswith(GENERATED_PREFIXES):
            os.remove(os.path.join(OUT, old))
    written = 0
    for path in sorted(glob.glob(os.path.join(SHARED, "sipp", "*", "*.xml"))):
        origin = os.path.relpath(path, SHARED)
        script = convert(open(path, encoding="latin-1").read(), origin)
        if script:
            base = os.path.splitext(os.path.basename(path))[0]
            name = "sipp-%s-%s.txt" % (os.path.basename(os.path.dirname(path)), base)
            with open(os.path.join(OUT, name), "w") as f:
                f.write(script)
            written += 1
    for name, xml in test_scenarios():
        script = convert(xml, "Tests/EndToEndTests: " + name)
        if script:
            with open(os.path.join(OUT, "test-%s.txt" % name), "w") as f:
                f.write(script)
            written += 1
    for name, script in sequences():
        with open(os.path.join(OUT, name), "w") as f:
            f.write(script)
        written += 1
    for path in sorted(glob.glob(os.path.join(SHARED, "rfc4475", "*.sip")) + glob.glob(os.path.join(SHARED, "rfc5118", "wire", "*.sip"))):
        data = torture(path)
        if data:
            stem = os.path.splitext(os.path.basename(path))[0]
            prefix = "rfc4475" if "rfc4475" in path else "rfc5118"
            with open(os.path.join(OUT, "torture-%s-%s.txt" % (prefix, stem)), "wb") as f:
                f.write(data)
            written += 1
    print("wrote %d seeds to %s" % (written, os.path.relpath(OUT, ROOT)))


if __name__ == "__main__":
    sys.exit(main())
