#!/usr/bin/env python3
"""A PJSIP (pjsua2) user agent as an outside peer for the irisgw tests (PJSUAPeer.swift).

It binds SIP over UDP on 127.0.0.1 with a port the OS picks, prints it, takes commands on
stdin (one a line) and prints what happens on stdout as JSON lines, one object a line with
an "event" key. Everything runs on the main thread (pjsua's threadCnt 0): the loop polls
pjsua's events and stdin in turn, so no callback races a command. No sound card: the null
audio device; what a call sends is a tone (--tone), what it receives can go to a WAV
(--record).

Commands (a call is named by the index its events carry, counted from 0 in this process):
  call <uri>                   places a call (directly, not through --target; a REFER in
                               it is, like one in a call this peer answered)
  answer <call>                answers a ringing call (without --auto-answer)
  hangup <call> | hangup all   ends calls
  refer <call> <uri> [keep]    REFER in that call (blind transfer); the NOTIFYs come back as
                               "transfer-status"; on a final 2xx the call is hung up unless
                               "keep"
  refer-replaces <call> <other>  REFER whose Refer-To names <other>'s remote party with
                               ?Replaces= for <other>'s dialog (attended transfer)
  replace <call> <uri>         a new call to <uri> whose INVITE carries Replaces: naming that
                               call's dialog (RFC 3891)
  tone <call> <hz>             how much of the last second received in that call is <hz>
                               (Goertzel energy share 0...1): a "tone" event
  quit                         ends every call and exits

Events: ready {port}, dialing {call, uri, replacing?}, incoming {call, from, callId,
replaces?}, state {call, state, status, reason}, media {call, active}, refer-received {call,
referTo, referredBy} (the REFER as it came), transfer-request {call, uri} (pjsua takes it:
202), transfer-call {call, referCall, uri} (the call it places for it), transfer-status
{call, status, reason, final} (a NOTIFY's sipfrag, or the REFER's own response),
replace-request {call, status}, replaced {call, newCall}, dialog {call, callId, localTag,
remoteTag}, recording {call, path}, tone {call, hz, ratio, seconds}, error {message}, quit.
"""

import argparse
import json
import math
import os
import re
import select
import struct
import sys

import pjsua2 as pj


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def header(message, name):
    """The first value of header `name` (or its compact form) in a raw SIP message."""
    compact = {"call-id": "i", "from": "f", "to": "t", "refer-to": "r", "referred-by": "b"}
    names = {name.lower(), compact.get(name.lower(), name.lower())}
    for line in message.replace("\r\n", "\n").split("\n"):
        if not line:
            break
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in names:
            return value.strip()
    return None


def tag_of(value):
    match = re.search(r";\s*tag=([^;>\s]+)", value or "")
    return match.group(1) if match else None


class PeerCall(pj.Call):
    def __init__(self, peer, account, call_id=pj.PJSUA_INVALID_ID):
        pj.Call.__init__(self, account, call_id)
        self.peer = peer
        self.owner = account
        self.index = peer.register(self)
        self.keep_after_refer = False
        self.recorder = None
        self.recording = None
        self.outgoing = call_id == pj.PJSUA_INVALID_ID
        self.call_id = None
        self.local_tag = None
        self.remote_tag = None
        self.last_refer = None

    def learn(self, message, received):
        """Takes the Call-ID and tags from a SIP message of this dialog."""
        self.call_id = self.call_id or header(message, "call-id")
        from_tag, to_tag = tag_of(header(message, "from")), tag_of(header(message, "to"))
        is_request = not message.startswith("SIP/2.0")
        # The From of a request we receive, and the To of a response we receive, is theirs.
        ours_in_from = (is_request and not received) or (not is_request and received)
        local, remote = (from_tag, to_tag) if ours_in_from else (to_tag, from_tag)
        self.local_tag = self.local_tag or local
        self.remote_tag = self.remote_tag or remote

    def onCallState(self, prm):
        guard(self._state)

    def _state(self):
        info = self.getInfo()
        emit("state", call=self.index, state=info.stateText, status=info.lastStatusCode, reason=info.lastReason)
        if info.state == pj.PJSIP_INV_STATE_DISCONNECTED:
            self.stop_recording()
            self.peer.forget(self)

    def onCallTsxState(self, prm):
        def learn():
            event = prm.e
            if event.type == pj.PJSIP_EVENT_TSX_STATE:
                src = event.body.tsxState.src
                if event.body.tsxState.type == pj.PJSIP_EVENT_TX_MSG and src.tdata.wholeMsg:
                    # Our own 2xx to an incoming INVITE is where an answered call's tag shows.
                    self.learn(src.tdata.wholeMsg, received=False)
                if event.body.tsxState.type == pj.PJSIP_EVENT_RX_MSG and src.rdata.wholeMsg:
                    message = src.rdata.wholeMsg
                    self.learn(message, received=True)
                    if message.startswith("REFER ") and message != self.last_refer:
                        self.last_refer = message
                        emit("refer-received", call=self.index, referTo=header(message, "refer-to"),
                             referredBy=header(message, "referred-by"))

        guard(learn)

    def onCallMediaState(self, prm):
        guard(self._media)

    def _media(self):
        info = self.getInfo()
        active = any(
            m.type == pj.PJMEDIA_TYPE_AUDIO and m.status == pj.PJSUA_CALL_MEDIA_ACTIVE for m in info.media)
        emit("media", call=self.index, active=active)
        if not active:
            return
        audio = self.getAudioMedia(-1)
        if self.peer.tone is not None:
            self.peer.tone.startTransmit(audio)
        if self.peer.record_dir and self.recorder is None:
            self.recording = os.path.join(self.peer.record_dir, "call-%d.wav" % self.index)
            self.recorder = pj.AudioMediaRecorder()
            self.recorder.createRecorder(self.recording)
            audio.startTransmit(self.recorder)
            emit("recording", call=self.index, path=self.recording)

    def stop_recording(self):
        # Destroying the recorder writes the WAV header's sizes.
        self.recorder = None

    def onCallTransferRequest(self, prm):
        def accept():
            emit("transfer-request", call=self.index, uri=prm.dstUri)
            prm.statusCode = 202
            self.peer.route_transfer(self.owner)
            new = PeerCall(self.peer, self.owner)
            prm.newCall = new
            emit("transfer-call", call=new.index, referCall=self.index, uri=prm.dstUri)

        guard(accept)

    def onCallTransferStatus(self, prm):
        def status():
            emit("transfer-status", call=self.index, status=prm.statusCode, reason=prm.reason, final=prm.finalNotify)
            if prm.finalNotify and 200 <= prm.statusCode < 300 and not self.keep_after_refer:
                self.hangup(pj.CallOpParam(True))

        guard(status)

    def onCallReplaceRequest(self, prm):
        def request():
            emit("replace-request", call=self.index, status=prm.statusCode)

        guard(request)

    def onCallReplaced(self, prm):
        def replaced():
            new = PeerCall(self.peer, self.peer.main, prm.newCallId)
            prm.newCall = new
            emit("replaced", call=self.index, newCall=new.index)

        guard(replaced)


def guard(work):
    """A callback's exception would be lost inside pjsua: print it as an event instead."""
    try:
        work()
    except Exception as error:  # noqa: BLE001 - every failure is reported the same way
        emit("error", message="%s: %s" % (type(error).__name__, error))


class PeerAccount(pj.Account):
    def __init__(self, peer):
        pj.Account.__init__(self)
        self.peer = peer

    def onIncomingCall(self, prm):
        def incoming():
            call = PeerCall(self.peer, self, prm.callId)
            message = prm.rdata.wholeMsg
            call.learn(message, received=True)
            emit("incoming", call=call.index, **{"from": header(message, "from"), "callId": call.call_id,
                                                 "replaces": header(message, "replaces")})
            if self.peer.auto_answer:
                answer(call)
            else:
                ring = pj.CallOpParam()
                ring.statusCode = 180
                call.answer(ring)

        guard(incoming)


def answer(call):
    op = pj.CallOpParam()
    op.statusCode = 200
    call.answer(op)


class Peer:
    def __init__(self, args):
        self.calls = {}
        self.live = {}
        self.next_index = 0
        self.auto_answer = args.auto_answer
        self.record_dir = args.record
        self.ep = pj.Endpoint()
        self.ep.libCreate()
        config = pj.EpConfig()
        config.uaConfig.threadCnt = 0
        config.uaConfig.mainThreadOnly = True
        config.uaConfig.userAgent = "irisgw-tests pjsua2"
        config.logConfig.consoleLevel = 0
        config.logConfig.level = 5 if args.log else 0
        config.logConfig.msgLogging = bool(args.log)
        if args.log:
            config.logConfig.filename = args.log
        config.medConfig.clockRate = 8000
        config.medConfig.sndClockRate = 8000
        config.medConfig.noVad = True
        config.medConfig.ecTailLen = 0
        self.ep.libInit(config)

        transport = pj.TransportConfig()
        transport.boundAddress = "127.0.0.1"
        transport.port = 0
        self.transport = self.ep.transportCreate(pj.PJSIP_TRANSPORT_UDP, transport)
        local = self.ep.transportGetInfo(self.transport).localName
        self.port = int(local.rsplit(":", 1)[1])
        self.ep.libStart()
        self.ep.audDevManager().setNullDev()
        for codec in self.ep.codecEnum2():
            keep = codec.codecId.split("/")[0] in ("PCMU", "PCMA")
            self.ep.codecSetPriority(codec.codecId, 255 if codec.codecId.startswith("PCMU") else 254 if keep else 0)

        # pjsua calls a Refer-To as it is, and a test's Refer-To names this peer: with --target,
        # `main` (which answers) has it as a loose route (outbound proxy), and so do the calls
        # it places for a REFER. `plain` places the calls of `call`, directly; for a REFER in
        # one of those it gets the route for that one call (`route_transfer`).
        self.target_route = "<sip:%s;lr>" % args.target if args.target else None
        self.main = self.account(args.user, [self.target_route] if args.target else [], default=True)
        self.plain = self.account(args.user, [], default=False) if args.target else self.main
        self.unroute_plain = False

        self.tone = None
        if args.tone:
            self.tone = pj.ToneGenerator()
            self.tone.createToneGenerator(8000, 1)
            desc = pj.ToneDesc()
            desc.freq1 = args.tone
            desc.freq2 = 0
            desc.on_msec = 10000
            desc.off_msec = 0
            desc.volume = 0
            tones = pj.ToneDescVector()
            tones.append(desc)
            self.tone.play(tones, True)

    def route_transfer(self, account):
        """pjsua places a REFER's call with the account of the call the REFER came in, right
        after `onCallTransferRequest`: `plain` routes to the target until then."""
        if self.target_route and account is self.plain:
            self.plain.modify(self.account_config(self.plain_user, [self.target_route]))
            self.unroute_plain = True

    def account(self, user, proxies, default):
        self.plain_user = user
        account = PeerAccount(self)
        account.create(self.account_config(user, proxies), default)
        return account

    def account_config(self, user, proxies):
        config = pj.AccountConfig()
        config.idUri = "sip:%s@127.0.0.1:%d" % (user, self.port)
        config.sipConfig.transportId = self.transport
        for proxy in proxies:
            config.sipConfig.proxies.append(proxy)
        config.mediaConfig.transportConfig.boundAddress = "127.0.0.1"
        config.mediaConfig.transportConfig.port = 0
        config.natConfig.iceEnabled = False
        config.natConfig.sdpNatRewriteUse = 0
        config.natConfig.contactRewriteUse = 0
        config.natConfig.viaRewriteUse = 0
        config.callConfig.timerUse = pj.PJSUA_SIP_TIMER_INACTIVE
        return config

    def register(self, call):
        index = self.next_index
        self.next_index += 1
        self.calls[index] = call
        self.live[index] = call
        return index

    def forget(self, call):
        self.live.pop(call.index, None)

    def call(self, index):
        if index not in self.calls:
            raise ValueError("no call %s" % index)
        return self.calls[index]

    def command(self, line):
        words = line.split()
        if not words:
            return True
        verb, rest = words[0], words[1:]
        if verb == "quit":
            return False
        if verb == "call":
            call = PeerCall(self, self.plain)
            emit("dialing", call=call.index, uri=rest[0])
            call.makeCall(rest[0], pj.CallOpParam(True))
        elif verb == "answer":
            answer(self.call(int(rest[0])))
        elif verb == "hangup":
            targets = list(self.live.values()) if rest[0] == "all" else [self.call(int(rest[0]))]
            for call in targets:
                call.hangup(pj.CallOpParam(True))
        elif verb == "refer":
            call = self.call(int(rest[0]))
            call.keep_after_refer = rest[2:3] == ["keep"]
            call.xfer(rest[1], pj.CallOpParam(True))
        elif verb == "refer-replaces":
            self.call(int(rest[0])).xferReplaces(self.call(int(rest[1])), pj.CallOpParam(True))
        elif verb == "replace":
            self.replace(self.call(int(rest[0])), rest[1])
        elif verb == "tone":
            self.tone_share(self.call(int(rest[0])), float(rest[1]))
        else:
            raise ValueError("unknown command %r" % verb)
        return True

    def replace(self, old, uri):
        if not (old.call_id and old.local_tag and old.remote_tag):
            raise ValueError("call %d has no confirmed dialog" % old.index)
        emit("dialog", call=old.index, callId=old.call_id, localTag=old.local_tag, remoteTag=old.remote_tag)
        # Seen from the receiver (our remote party), its tag is the to-tag (RFC 3891 §3).
        replaces = pj.SipHeader()
        replaces.hName = "Replaces"
        replaces.hValue = "%s;to-tag=%s;from-tag=%s" % (old.call_id, old.remote_tag, old.local_tag)
        op = pj.CallOpParam(True)
        op.txOption.headers.append(replaces)
        call = PeerCall(self, self.plain)
        emit("dialing", call=call.index, uri=uri, replacing=old.index)
        call.makeCall(uri, op)

    def tone_share(self, call, hz):
        """The share of the last second's energy at `hz` in what the call received so far
        (the WAV's data as written: its header's sizes are filled in only at the end)."""
        if not call.recording or not os.path.exists(call.recording):
            emit("tone", call=call.index, hz=hz, ratio=0.0, seconds=0.0)
            return
        with open(call.recording, "rb") as wav:
            data = wav.read()
        rate = struct.unpack_from("<I", data, 24)[0] if len(data) >= 44 else 8000
        pcm = data[44:]
        count = len(pcm) // 2
        samples = struct.unpack_from("<%dh" % count, pcm)[-rate:] if count else ()
        energy = sum(s * s for s in samples)
        ratio = 0.0
        if energy > 0:
            # Goertzel at exactly `hz`: |X(f)|^2 * 2 / N is the tone's share of the energy.
            w = 2 * math.pi * hz / rate
            coeff = 2 * math.cos(w)
            s1 = s2 = 0.0
            for s in samples:
                s1, s2 = s + coeff * s1 - s2, s1
            power = s1 * s1 + s2 * s2 - coeff * s1 * s2
            ratio = min(1.0, 2 * power / (len(samples) * energy))
        emit("tone", call=call.index, hz=hz, ratio=round(ratio, 3), seconds=round(count / rate, 2))

    def run(self):
        emit("ready", port=self.port)
        buffered = b""
        running = True
        stdin = sys.stdin.fileno()
        while running:
            self.ep.libHandleEvents(10)
            if self.unroute_plain:
                self.unroute_plain = False
                self.plain.modify(self.account_config(self.plain_user, []))
            readable, _, _ = select.select([stdin], [], [], 0)
            if not readable:
                continue
            chunk = os.read(stdin, 4096)
            if not chunk:
                break
            buffered += chunk
            while b"\n" in buffered and running:
                line, buffered = buffered.split(b"\n", 1)
                try:
                    running = self.command(line.decode())
                except Exception as error:  # noqa: BLE001 - a bad command is reported, not fatal
                    emit("error", message="%s: %s" % (line.decode(), error))
        self.close()

    def close(self):
        self.ep.hangupAllCalls()
        for _ in range(20):
            self.ep.libHandleEvents(10)
        for call in self.calls.values():
            call.stop_recording()
        self.tone = None
        emit("quit")
        self.ep.libDestroy()
        # The calls' Python objects would be freed after pjsua is gone (its assertions).
        os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--user", default="pjsua", help="the user part of this peer's SIP URI")
    parser.add_argument("--auto-answer", action="store_true", help="answer every incoming call at once")
    parser.add_argument("--tone", type=int, help="a tone (Hz) every call sends")
    parser.add_argument("--record", help="a folder: each call's received audio goes to call-<n>.wav there")
    parser.add_argument("--target", help="host:port every call placed for a REFER goes to (a loose route)")
    parser.add_argument("--log", help="pjsua's log, SIP messages included, to this file")
    Peer(parser.parse_args()).run()


if __name__ == "__main__":
    main()
