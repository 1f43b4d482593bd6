"""A voice agent for MediaStreamsTests: a Twilio Media Streams WebSocket server (PyPI
`websockets`) on 127.0.0.1, port picked by the OS.

Prints one JSON object a line: {"event": "ready", "port": N} once listening, then what it
receives ("connected", "start" with its fields, "media" with its numbers and the payload's
size and first bytes, "mark", "dtmf", "stop", "closed"). What it does is chosen per stream by
the start message's customParameters["mode"]:

  echo   sends every media payload back at once; every `markEvery` frames a mark "mark-K"
  burst  keeps the first `burst` frames, then sends: a malformed message, one for another
         stream, the frames, mark "before-clear", clear, the last `after` frames, mark "after-clear"
  tone   answers every media frame with 20 ms of its own 700 Hz tone (mu-law), a mark "tone-K" every
         `markEvery` frames; each media event says whether the frame held that tone (`tone`)
  slow   stops reading (the socket fills up)
  close  closes the WebSocket with 1000 "bye"

Options: --cert FILE --key FILE serve wss:// instead of ws://.
"""

import argparse
import asyncio
import base64
import json
import math
import socket
import ssl
import sys

import websockets


def ulaw_decode(byte):
    """G.711 mu-law to a 16-bit sample."""
    u = ~byte & 0xFF
    t = ((u & 0x0F) << 3) + 0x84
    t <<= (u & 0x70) >> 4
    return (0x84 - t) if (u & 0x80) else (t - 0x84)


def ulaw_encode(sample):
    """A 16-bit sample to G.711 mu-law."""
    sign = 0x80 if sample < 0 else 0
    magnitude = min(abs(sample), 32635) + 0x84
    exponent = 7
    mask = 0x4000
    while exponent > 0 and not magnitude & mask:
        exponent -= 1
        mask >>= 1
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return ~(sign | (exponent << 4) | mantissa) & 0xFF


def power(samples, hz, rate=8000):
    """Goertzel power of `hz` in `samples`."""
    k = 2 * math.cos(2 * math.pi * hz / rate)
    s1 = s2 = 0.0
    for x in samples:
        s1, s2 = x + k * s1 - s2, s1
    return s1 * s1 + s2 * s2 - k * s1 * s2


def has_tone(payload, hz=700):
    samples = [ulaw_decode(b) for b in payload]
    energy = sum(x * x for x in samples) * len(samples) / 2 + 1
    return power(samples, hz) > 0.3 * energy and max(abs(x) for x in samples) > 500


def tone_frame(n, hz=700):
    return bytes(ulaw_encode(int(6000 * math.sin(2 * math.pi * hz * (n * 160 + i) / 8000))) for i in range(160))


def say(**fields):
    print(json.dumps(fields), flush=True)


async def handle(ws):
    say(event="open", path=ws.path, authorization=ws.request_headers.get("Authorization"))
    mode, sid, kept, echoed = "echo", "", [], 0
    params = {}
    async for text in ws:
        message = json.loads(text)
        event = message.get("event")
        if event == "connected":
            say(event="connected", protocol=message.get("protocol"), version=message.get("version"))
        elif event == "start":
            start = message["start"]
            sid = start["streamSid"]
            params = start.get("customParameters", {})
            mode = params.get("mode", "echo")
            say(event="start", seq=message["sequenceNumber"], streamSid=sid, callSid=start["callSid"],
                accountSid=start["accountSid"], tracks=start["tracks"], mediaFormat=start["mediaFormat"],
                customParameters=params)
            if mode == "slow":
                say(event="sleeping")
                await asyncio.sleep(3600)
            if mode == "close":
                await ws.close(1000, "bye")
                return
        elif event == "media":
            media = message["media"]
            payload = base64.b64decode(media["payload"])
            fields = dict(seq=message["sequenceNumber"], track=media["track"], chunk=media["chunk"],
                          timestamp=media["timestamp"], bytes=len(payload), head=payload[:8].hex())
            if mode == "tone" and len(payload) == 160:
                fields["tone"] = has_tone(payload)
            say(event="media", **fields)
            if mode == "tone":
                frame = base64.b64encode(tone_frame(echoed)).decode()
                await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": frame}}))
                echoed += 1
                every = int(params.get("markEvery", "0"))
                if every and echoed % every == 0:
                    await ws.send(json.dumps({"event": "mark", "streamSid": sid,
                                              "mark": {"name": f"tone-{echoed // every}"}}))
            if mode == "echo":
                await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": media["payload"]}}))
                echoed += 1
                every = int(params.get("markEvery", "0"))
                if every and echoed % every == 0:
                    await ws.send(json.dumps({"event": "mark", "streamSid": sid,
                                              "mark": {"name": f"mark-{echoed // every}"}}))
            elif mode == "burst":
                kept.append(media["payload"])
                if len(kept) == int(params.get("burst", "10")):
                    await ws.send(json.dumps({"event": "media", "streamSid": sid}))
                    await ws.send(json.dumps({"event": "clear", "streamSid": "MZ-not-this-one"}))
                    for p in kept:
                        await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": p}}))
                    await ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": "before-clear"}}))
                    await ws.send(json.dumps({"event": "clear", "streamSid": sid}))
                    for p in kept[-int(params.get("after", "2")):]:
                        await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": p}}))
                    await ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": "after-clear"}}))
        elif event == "mark":
            say(event="mark", seq=message["sequenceNumber"], name=message["mark"]["name"])
        elif event == "dtmf":
            say(event="dtmf", seq=message["sequenceNumber"], track=message["dtmf"]["track"],
                digit=message["dtmf"]["digit"])
        elif event == "stop":
            say(event="stop", seq=message["sequenceNumber"], callSid=message["stop"]["callSid"],
                accountSid=message["stop"]["accountSid"])
        else:
            say(event="unexpected", text=text[:200])
    say(event="closed", code=ws.close_code)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # A small receive buffer: a stream that stops reading fills up after a few messages.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    sock.bind(("127.0.0.1", 0))
    async with websockets.serve(handle, sock=sock, ssl=context, max_queue=1, read_limit=4096, max_size=2**20):
        say(event="ready", port=sock.getsockname()[1])
        await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
