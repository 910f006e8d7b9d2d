"""The round-robin front (front.py) on its own, against two fake upstreams: it alternates
per request on one keep-alive connection, and passes the request head (Host included) and
body through byte for byte, in both framings, with Expect: 100-continue, HEAD, and
Connection: close. Needs no cluster."""

import base64
import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time

import pytest

FRONT = os.path.join(os.path.dirname(__file__), "front.py")


def read_head(f):
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = f.readline()
        if not line:
            return None
        head += line
    return head


def headers_of(head):
    out = {}
    for line in head.split(b"\r\n")[1:]:
        if b":" in line:
            k, _, v = line.partition(b":")
            out[k.strip().lower()] = v.strip()
    return out


def read_body(f, h):
    """The body's raw bytes (chunk framing included when chunked)."""
    if h.get(b"transfer-encoding", b"").lower() == b"chunked":
        raw = b""
        while True:
            size_line = f.readline()
            raw += size_line
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                while True:
                    line = f.readline()
                    raw += line
                    if line == b"\r\n":
                        return raw
            raw += f.read(size + 2)
    n = int(h.get(b"content-length", b"0"))
    return f.read(n)


def make_upstream(ident):
    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            while True:
                head = read_head(self.rfile)
                if head is None:
                    return
                h = headers_of(head)
                if h.get(b"expect", b"").lower() == b"100-continue":
                    self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    self.wfile.flush()
                body = read_body(self.rfile, h)
                method, path = head.split(b" ")[0:2]
                payload = json.dumps(
                    {"upstream": ident, "head": base64.b64encode(head).decode(), "body": base64.b64encode(body).decode()}
                ).encode()
                close = h.get(b"connection", b"").lower() == b"close"
                extra = b"Connection: close\r\n" if close else b""
                if path == b"/chunked":
                    half = len(payload) // 2
                    chunks = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, payload[:half], len(payload) - half, payload[half:])
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Up: " + ident.encode() + b"\r\n" + extra + b"\r\n" + chunks)
                else:
                    resp_head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Up: " + ident.encode() + b"\r\n"
                    resp_head += extra + b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n"
                    self.wfile.write(resp_head + (b"" if method == b"HEAD" else payload))
                self.wfile.flush()
                if close:
                    return

    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@pytest.fixture(scope="module")
def front():
    ups = [make_upstream("A"), make_upstream("B")]
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, FRONT, str(port)] + [str(u.server_address[1]) for u in ups],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert "front ready" in proc.stdout.readline()
    yield port
    proc.terminate()
    proc.wait(10)
    for u in ups:
        u.shutdown()


def read_response(f, method=b"GET"):
    """(status, headers, body) of one response; interim 1xx responses are skipped."""
    while True:
        head = read_head(f)
        assert head is not None, "the front closed the connection"
        status = int(head.split(b" ")[1])
        if status >= 200:
            break
    h = headers_of(head)
    if method == b"HEAD":
        return status, h, b""
    body = read_body(f, h)
    if h.get(b"transfer-encoding", b"").lower() == b"chunked":
        # de-chunk
        out, rest = b"", body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2 :]
        body = out
    return status, h, body


def test_front_alternates_and_passes_bytes_through(front):
    sock = socket.create_connection(("127.0.0.1", front), timeout=10)
    f = sock.makefile("rb")
    seen = []
    bodies = [b"", b"x" * 70000, "h\u00e9llo \u2603".encode(), b"\x00\x01binary\r\n\r\n"]
    for i, body in enumerate(bodies):
        head = (
            b"POST /q/path?x=%d HTTP/1.1\r\nHost: signed.example:9324\r\nX-Amz-Date: 20260101T000000Z\r\n"
            b"Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, "
            b"SignedHeaders=host;x-amz-date, Signature=abc\r\nx-MiXeD-case:  spaced value \r\n"
            b"Content-Length: %d\r\n\r\n" % (i, len(body))
        )
        sock.sendall(head + body)
        status, h, rbody = read_response(f)
        assert status == 200
        got = json.loads(rbody)
        assert base64.b64decode(got["head"]) == head, "request head changed on the way"
        assert base64.b64decode(got["body"]) == body, "request body changed on the way"
        seen.append(got["upstream"])
    assert seen == ["A", "B", "A", "B"] or seen == ["B", "A", "B", "A"], seen
    sock.close()


def test_front_chunked_expect_head_and_close(front):
    sock = socket.create_connection(("127.0.0.1", front), timeout=10)
    f = sock.makefile("rb")
    # chunked request body, chunked response
    chunked = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
    head = b"POST /chunked HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    sock.sendall(head + chunked)
    status, h, rbody = read_response(f)
    got = json.loads(rbody)
    assert status == 200 and base64.b64decode(got["head"]) == head
    assert base64.b64decode(got["body"]) == chunked
    # Expect: 100-continue: the body goes only after the interim response
    body = b'{"a": 1}'
    head = b"POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body)
    sock.sendall(head)
    interim = read_head(f)
    assert interim.startswith(b"HTTP/1.1 100"), interim
    sock.sendall(body)
    status, h, rbody = read_response(f)
    assert status == 200 and base64.b64decode(json.loads(rbody)["body"]) == body
    # HEAD: a Content-Length and no body
    sock.sendall(b"HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n")
    status, h, rbody = read_response(f, b"HEAD")
    assert status == 200 and int(h[b"content-length"]) > 0
    # and the connection still works after it; then Connection: close closes it
    sock.sendall(b"GET /y HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
    status, h, rbody = read_response(f)
    assert status == 200 and json.loads(rbody)["upstream"] in ("A", "B")
    sock.settimeout(5)
    assert f.read() == b"", "the front kept the connection open after Connection: close"
    sock.close()


def test_front_many_concurrent_clients(front):
    errors = []

    def client(k):
        try:
            s = socket.create_connection(("127.0.0.1", front), timeout=10)
            f = s.makefile("rb")
            for i in range(20):
                body = b"%d-%d" % (k, i)
                s.sendall(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                status, _, rbody = read_response(f)
                assert status == 200 and base64.b64decode(json.loads(rbody)["body"]) == body
            s.close()
        except Exception as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors[:3]
    assert time.monotonic() - t0 < 30
