/// The Python servers the tests talk to (stdlib only, port 0, port printed on stdout).
enum ServerScripts {
    /// HTTP/1.1: JSON GET, POST echo, a chunked body, a JSON 404, a response that never
    /// comes in time, and `/api/v1/gather?n=N`, answered once N requests are in at once.
    static let http = #"""
        import signal
        # The test runner's threads block most signals and a spawned child inherits the mask:
        # unblock them so stop()'s SIGTERM ends the server at once.
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        import json, sys, threading, time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        arrived = threading.Condition()
        gathered = [0]

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send_json(self, status, obj, extra={}):
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path.startswith("/api/v1/hello"):
                    self.send_json(200, {"hello": "world", "path": self.path,
                                         "auth": self.headers.get("Authorization", ""),
                                         "host": self.headers.get("Host", "")}, {"X-Iris": "one"})
                elif self.path == "/api/v1/chunked":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for part in [b"alpha-", b"beta-", b"x" * 5000, b"-omega"]:
                        self.wfile.write(b"%x;note=1\r\n" % len(part) + part + b"\r\n")
                        self.wfile.flush()
                        time.sleep(0.01)
                    self.wfile.write(b"0\r\nX-Trailer: yes\r\n\r\n")
                elif self.path == "/api/v1/calls/nope":
                    self.send_json(404, {"error": "no such call", "code": "not_found"})
                elif self.path == "/api/v1/slow":
                    time.sleep(30)
                    self.send_json(200, {})
                elif self.path.startswith("/api/v1/gather?n="):
                    # Answered once n requests are in at the same time (504 after 10 s).
                    n = int(self.path.split("=")[1])
                    with arrived:
                        gathered[0] += 1
                        ok = arrived.wait_for(lambda: gathered[0] >= n, timeout=10)
                        arrived.notify_all()
                    self.send_json(200 if ok else 504, {"gathered": gathered[0]})
                else:
                    self.send_json(400, {"error": "unknown path " + self.path})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                self.send_json(201, {"received": body.decode(), "length": length,
                                     "type": self.headers.get("Content-Type", ""),
                                     "method": self.command})

        ThreadingHTTPServer.daemon_threads = True
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// RFC 6455 server. Requires `Authorization: Bearer good` (else 401 with a JSON body).
    /// `mode=script` (default): `n` text messages, a fragmented one with a ping inside, an
    /// 80000-byte one, a binary one, a ping; once both pongs are back, a message reporting
    /// them, then a close (1000 "bye"). `mode=echo`: echoes text/binary, answers close.
    /// `mode=idle`: sends nothing, answers close. `mode=drop`: one message, then TCP close
    /// without a close frame.
    static let webSocket =
        webSocketFraming + #"""
            import signal
            # The test runner's threads block most signals and a spawned child inherits the mask:
            # unblock them so stop()'s SIGTERM ends the server at once.
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            import base64, hashlib, json, socket, struct, threading
            from urllib.parse import urlparse, parse_qs

            def handle(conn):
                try:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = conn.recv(4096)
                        if not chunk:
                            return
                        request += chunk
                    lines = request.split(b"\r\n\r\n")[0].decode().split("\r\n")
                    target = lines[0].split(" ")[1]
                    headers = {}
                    for line in lines[1:]:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                    query = parse_qs(urlparse(target).query)
                    if headers.get("authorization") != "Bearer good":
                        body = b'{"error":"unauthorized"}'
                        conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
                        return
                    accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + GUID).encode()).digest()).decode()
                    mode = query.get("mode", ["script"])[0]
                    reply = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode()
                    if mode == "script":
                        # The first frames go out in the same write as the 101.
                        out = reply
                        for i in range(int(query.get("n", ["3"])[0])):
                            out += frame(1, json.dumps({"seq": i, "type": "call.ringing"}).encode())
                        out += frame(1, b'{"frag":', fin=False) + frame(9, b"mid") + frame(0, b'"ment', fin=False) + frame(0, b'ed"}')
                        out += frame(1, ("\u00e9" * 40000).encode())
                        out += frame(2, b"\x00\x01binary")
                        out += frame(9, b"are-you-there")
                        conn.sendall(out)
                        pongs = []
                        while len(pongs) < 2:
                            opcode, masked, data = read_frame(conn)
                            if opcode == 10:
                                pongs.append([masked, data.decode()])
                        conn.sendall(frame(1, json.dumps({"pongs": pongs}).encode()))
                        conn.sendall(frame(8, struct.pack(">H", 1000) + b"bye"))
                        read_frame(conn)
                    elif mode == "echo":
                        conn.sendall(reply)
                        while True:
                            opcode, masked, data = read_frame(conn)
                            if not masked:
                                conn.sendall(frame(1, b"client frame was not masked"))
                            if opcode == 8:
                                conn.sendall(frame(8, data))
                                break
                            if opcode in (1, 2):
                                conn.sendall(frame(opcode, data))
                    elif mode == "idle":
                        conn.sendall(reply)
                        while True:
                            opcode, masked, data = read_frame(conn)
                            if opcode == 8:
                                conn.sendall(frame(8, data))
                                break
                    elif mode == "drop":
                        conn.sendall(reply + frame(1, b"last"))
                except (EOFError, OSError):
                    pass
                finally:
                    conn.close()

            """# + serveForever

    /// The Python servers' accept loop: a listener on 127.0.0.1 with a port the OS picks, that
    /// port printed, each connection to `handle` on a thread of its own.
    static let serveForever = #"""

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        print(listener.getsockname()[1], flush=True)
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=handle, args=(conn,), daemon=True).start()
        """#

    /// RFC 6455 framing for the Python servers (the scripts import `struct`): `recv_exact`,
    /// `read_frame` (opcode, masked, unmasked payload), `frame` (a server frame), `GUID`.
    static let webSocketFraming = #"""
        GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

        def recv_exact(conn, n):
            data = b""
            while len(data) < n:
                chunk = conn.recv(n - len(data))
                if not chunk:
                    raise EOFError()
                data += chunk
            return data

        def read_frame(conn):
            b0, b1 = recv_exact(conn, 2)
            opcode, masked, n = b0 & 0x0F, b1 >> 7, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", recv_exact(conn, 2))[0]
            elif n == 127:
                n = struct.unpack(">Q", recv_exact(conn, 8))[0]
            key = recv_exact(conn, 4) if masked else b"\0\0\0\0"
            data = bytes(b ^ key[i % 4] for i, b in enumerate(recv_exact(conn, n)))
            return opcode, bool(masked), data

        def frame(opcode, data, fin=True):
            head = bytes([(0x80 if fin else 0) | opcode])
            n = len(data)
            if n < 126:
                head += bytes([n])
            elif n < 65536:
                head += bytes([126]) + struct.pack(">H", n)
            else:
                head += bytes([127]) + struct.pack(">Q", n)
            return head + data

        """#
}
