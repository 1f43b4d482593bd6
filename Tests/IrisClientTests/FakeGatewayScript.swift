extension ServerScripts {
    /// The control API's shape on one port (HTTP verbs and the `/v1/events` WebSocket), with
    /// transfers scripted: a stand-in for the gateway while its transfer side is not there.
    /// Key `Bearer key`. Every request but `GET /requests` is recorded (method, path, JSON
    /// body, Content-Type) and `GET /requests` returns them. Outbound sessions are `room-N`
    /// and connect at once; `join` connects and then the carrier asks to transfer to
    /// `+15550100077`. `transfer` answers 202 and plays the contract's events: to
    /// `+15550000486` requested, trying, failed (486); to `+15550000403` it is refused (403,
    /// Iris -417); to `+15550000180` it rings on and on, and a second one meanwhile is
    /// refused (409, -104); otherwise requested, trying, ringing, succeeded and the end
    /// `transferred`. `acceptTransfer` plays trying, `declineTransfer` failed (603).
    static let fakeGateway =
        webSocketFraming + #"""
            import signal
            # The test runner's threads block most signals and a spawned child inherits the mask:
            # unblock them so stop()'s SIGTERM ends the server at once.
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            import base64, hashlib, json, queue, select, socket, struct, threading, time
            from urllib.parse import urlparse, parse_qs

            lock = threading.Lock()
            requests = []
            streams = {}
            rooms = {}
            count = [0]

            def stream_for(key):
                with lock:
                    return streams.setdefault(key, queue.Queue())

            def emit(room, event, **fields):
                with lock:
                    r = rooms[room]
                    r["seq"] += 1
                    e = {"event": event, "roomId": room, "traceId": "trace-" + room, "seq": r["seq"],
                         "at": int(time.time() * 1000)}
                    e.update(fields)
                r["queue"].put(e)

            def sip(code, reason):
                return {"code": code, "reason": reason}

            def respond(conn, status, obj):
                body = json.dumps(obj).encode()
                conn.sendall(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                             b"Connection: close\r\n\r\n" % (status, len(body)) + body)

            def error(conn, status, code, message):
                respond(conn, status, {"error": {"code": code, "message": message}})

            def serve_events(conn, q):
                # Events as they are queued; a close frame from the client is answered and ends it.
                while True:
                    if select.select([conn], [], [], 0.02)[0]:
                        opcode, _, data = read_frame(conn)
                        if opcode == 8:
                            conn.sendall(frame(8, data))
                            return
                        continue
                    try:
                        e = q.get_nowait()
                    except queue.Empty:
                        continue
                    conn.sendall(frame(1, json.dumps(e).encode()))

            def play_transfer(room, body):
                app = {"by": "app", "method": "refer"}
                if "targetTN" in body:
                    app["targetTN"] = body["targetTN"]
                else:
                    app["replacesRoomId"] = body["replacesRoomId"]
                emit(room, "onSessionTransfer", transfer=dict(app, state="requested"))
                emit(room, "onSessionTransfer", transfer=dict(app, state="trying"), sip=sip(100, "Trying"))
                if body.get("targetTN") == "+15550000486":
                    emit(room, "onSessionTransfer", transfer=dict(app, state="failed"), sip=sip(486, "Busy Here"),
                         message="the transfer target is busy")
                    with lock:
                        rooms[room]["transferring"] = False
                    return
                emit(room, "onSessionTransfer", transfer=dict(app, state="ringing"), sip=sip(180, "Ringing"))
                if body.get("targetTN") == "+15550000180":
                    return
                emit(room, "onSessionTransfer", transfer=dict(app, state="succeeded"), sip=sip(200, "OK"))
                emit(room, "onSessionSIPStatus", status="Disconnected")
                emit(room, "onSessionEnded", reason="transferred", durationSec=1.5)

            def route(conn, method, path, body):
                parts = path.strip("/").split("/")
                if method == "POST" and parts == ["v1", "sessions"]:
                    with lock:
                        count[0] += 1
                        room = "room-%d" % count[0]
                    q = stream_for(body["routingId"])
                    with lock:
                        rooms[room] = {"queue": q, "seq": 0, "transferring": False}
                    respond(conn, 201, {"roomId": room, "traceId": "trace-" + room})
                    emit(room, "onSessionCreated", direction="outbound")
                    emit(room, "onSessionSIPStatus", status="Connected", sip=sip(200, "OK"))
                    return
                if len(parts) != 4 or parts[:2] != ["v1", "sessions"] or method != "POST":
                    return error(conn, 404, -103, "no route " + method + " " + path)
                room, verb = parts[2], parts[3]
                if verb == "join":
                    q = stream_for(room)
                    with lock:
                        rooms[room] = {"queue": q, "seq": 0, "transferring": False}
                    respond(conn, 200, {"roomId": room, "traceId": "trace-" + room})
                    emit(room, "onSessionCreated", direction="inbound")
                    emit(room, "onSessionSIPStatus", status="Connected", sip=sip(200, "OK"))
                    emit(room, "onSessionTransferRequest",
                         transfer={"state": "requested", "by": "carrier", "method": "dial", "targetTN": "+15550100077",
                                   "referredBy": "<sip:+15557654321@carrier.example>"})
                    return
                with lock:
                    known = room in rooms
                if not known:
                    return error(conn, 404, -103, "no session " + room)
                if verb == "transfer":
                    with lock:
                        busy = rooms[room]["transferring"]
                        other = body.get("replacesRoomId")
                        if other is not None and other not in rooms:
                            return error(conn, 404, -103, "no session " + other)
                        if not busy and body.get("targetTN") != "+15550000403":
                            rooms[room]["transferring"] = True
                    if body.get("targetTN") == "+15550000403":
                        return error(conn, 403, -417, "the trunk may not dial +15550000403")
                    if busy:
                        return error(conn, 409, -104, "a transfer is already in progress")
                    respond(conn, 202, {"roomId": room})
                    play_transfer(room, body)
                elif verb == "acceptTransfer":
                    respond(conn, 202, {"roomId": room})
                    emit(room, "onSessionTransfer", sip=sip(100, "Trying"),
                         transfer={"state": "trying", "by": "carrier", "method": "dial", "targetTN": "+15550100077"})
                elif verb == "declineTransfer":
                    respond(conn, 202, {"roomId": room})
                    emit(room, "onSessionTransfer", sip=sip(603, "Decline"), message="declined by the app",
                         transfer={"state": "failed", "by": "carrier", "method": "dial", "targetTN": "+15550100077"})
                else:
                    error(conn, 404, -103, "no verb " + verb)

            def handle(conn):
                try:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            return
                        data += chunk
                    head, rest = data.split(b"\r\n\r\n", 1)
                    lines = head.decode().split("\r\n")
                    method, target = lines[0].split(" ")[:2]
                    headers = {}
                    for line in lines[1:]:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                    if headers.get("authorization") != "Bearer key":
                        return error(conn, 401, -103, "bad key")
                    url = urlparse(target)
                    if headers.get("upgrade", "").lower() == "websocket":
                        query = parse_qs(url.query)
                        key = (query.get("routingId") or query.get("roomId") or [""])[0]
                        accept = base64.b64encode(
                            hashlib.sha1((headers["sec-websocket-key"] + GUID).encode()).digest()).decode()
                        conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                      "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode())
                        return serve_events(conn, stream_for(key))
                    n = int(headers.get("content-length", "0"))
                    rest += recv_exact(conn, n - len(rest))
                    body = json.loads(rest) if n else None
                    if url.path == "/requests":
                        with lock:
                            return respond(conn, 200, {"requests": list(requests)})
                    with lock:
                        requests.append({"method": method, "path": url.path, "body": body,
                                         "type": headers.get("content-type", "")})
                    route(conn, method, url.path, body)
                except (EOFError, OSError):
                    pass
                finally:
                    conn.close()

            """# + serveForever
}
