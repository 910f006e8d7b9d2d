"""A tiny round-robin HTTP/1.1 reverse proxy for the cluster lane (stdlib asyncio only).

    python front.py LISTEN_PORT UPSTREAM_PORT [UPSTREAM_PORT ...]

Listens on 127.0.0.1:LISTEN_PORT and sends each REQUEST (not each connection) to the next
upstream on 127.0.0.1 in turn, so consecutive calls from one keep-alive client alternate
replicas. The request head (method, target, every header including Host, which SigV4
signs), the body, and the response (status line, headers, body) are passed through
byte for byte; nothing is added or removed. Bodies are framed by Content-Length or
chunked transfer coding (forwarded raw, chunk framing included); a response with
neither is read to EOF. Interim 1xx responses (Expect: 100-continue) are relayed.

Upstream connections are kept alive and reused (for at most IDLE_REUSE_S idle). A
request with a Content-Length body (read whole first; small here) written to a REUSED
upstream connection that fails before a single response byte arrives is retried once on a
fresh connection (the upstream had closed it); any other failure answers 502, or hangs up
if part of the response went out already.

On SIGTERM/SIGINT it stops listening and exits. Prints "front ready" once listening, and
on exit a per-upstream count of requests.
"""

import asyncio
import signal
import sys
import time

HOST = "127.0.0.1"
MAX_HEAD = 64 * 1024
# A pooled upstream connection idle longer than this is dropped, not reused (servers close
# idle keep-alive connections on their own clock).
IDLE_REUSE_S = 15.0


class ClientGone(Exception):
    pass


class UpstreamFailed(Exception):
    pass


def parse_head(raw):
    """(first line, {lowercase name: [values]}) from a raw head (CRLF lines, no final blank)."""
    lines = raw.split(b"\r\n")
    headers = {}
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(b":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return lines[0], headers


def body_framing(headers):
    """('chunked', None) | ('length', n) | ('none', None)."""
    te = b",".join(headers.get(b"transfer-encoding", [])).lower()
    if te and te.split(b",")[-1].strip() == b"chunked":
        return "chunked", None
    if b"content-length" in headers:
        return "length", int(headers[b"content-length"][0])
    return "none", None


def wants_close(version, headers):
    conn = b",".join(headers.get(b"connection", [])).lower()
    if b"close" in conn:
        return True
    return version == b"HTTP/1.0" and b"keep-alive" not in conn


async def read_head(reader):
    """The raw head including the blank line; b'' at a clean EOF before any byte."""
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            return b""
        raise
    except asyncio.LimitOverrunError:
        raise ValueError("head too large")


async def copy_body(reader, writer, kind, length):
    """Copies one message body (raw framing) from reader to writer."""
    if kind == "length":
        left = length
        while left > 0:
            chunk = await reader.read(min(left, 65536))
            if not chunk:
                raise asyncio.IncompleteReadError(b"", left)
            writer.write(chunk)
            left -= len(chunk)
            await writer.drain()
    elif kind == "chunked":
        while True:
            size_line = await reader.readuntil(b"\r\n")
            writer.write(size_line)
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                # trailers, up to and including the blank line
                while True:
                    line = await reader.readuntil(b"\r\n")
                    writer.write(line)
                    if line == b"\r\n":
                        break
                await writer.drain()
                return
            writer.write(await reader.readexactly(size + 2))
            await writer.drain()
    elif kind == "eof":
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            writer.write(chunk)
            await writer.drain()


class Front:
    def __init__(self, upstreams):
        self.upstreams = upstreams
        self.next = 0
        self.idle = {p: [] for p in upstreams}
        self.count = {p: 0 for p in upstreams}

    def pick(self):
        port = self.upstreams[self.next % len(self.upstreams)]
        self.next += 1
        self.count[port] += 1
        return port

    async def connection(self, port):
        """(reader, writer, reused): an idle kept-alive connection if a fresh enough one is
        pooled, else a new one."""
        pool = self.idle[port]
        now = time.monotonic()
        while pool:
            r, w, since = pool.pop()
            if now - since < IDLE_REUSE_S and not w.is_closing() and not r.at_eof():
                return r, w, True
            w.close()
        r, w = await asyncio.open_connection(HOST, port, limit=MAX_HEAD)
        return r, w, False

    async def handle(self, creader, cwriter):
        try:
            while True:
                head = await read_head(creader)
                if not head:
                    return
                first, headers = parse_head(head[:-4])
                method, _, rest = first.partition(b" ")
                version = rest.rpartition(b" ")[2]
                kind, length = body_framing(headers)
                client_close = wants_close(version, headers)
                expect = b"100-continue" in b",".join(headers.get(b"expect", [])).lower()
                body = None
                if kind == "length" and not expect:
                    # Small request bodies are read whole first, so a request can be replayed
                    # on a fresh connection when a pooled one turns out closed.
                    body = await creader.readexactly(length) if length else b""
                port = self.pick()
                try:
                    upstream_close = await self.exchange(port, head, body, method, kind, length, creader, cwriter)
                except ClientGone:
                    return
                except UpstreamFailed as e:
                    msg = f"front: upstream 127.0.0.1:{port} failed: {e}\n".encode()
                    cwriter.write(
                        b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                        + b"Content-Length: " + str(len(msg)).encode() + b"\r\n\r\n" + msg
                    )
                    await cwriter.drain()
                    return
                if client_close or upstream_close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            cwriter.close()

    async def exchange(self, port, head, body, method, kind, length, creader, cwriter):
        """Forwards one request and its response; answers whether the connection must close.
        `body` is the whole request body when it was read up front, else None (streamed)."""
        for attempt in (0, 1):
            try:
                ur, uw, reused = await self.connection(port)
            except OSError as e:
                raise UpstreamFailed(f"connect: {e}")
            body_task = None
            uw.write(head + (body or b""))
            if body is None and kind != "none":
                # Streamed concurrently: with `Expect: 100-continue` the client sends the body
                # only after the interim response, which the loop below relays.
                body_task = asyncio.ensure_future(self.pump_body(creader, uw, kind, length))
            got_any = False
            try:
                await uw.drain()
                while True:
                    rhead = await read_head(ur)
                    if not rhead:
                        raise ConnectionResetError("upstream closed before answering")
                    got_any = True
                    rfirst, rheaders = parse_head(rhead[:-4])
                    parts = rfirst.split(b" ", 2)
                    rversion, status = parts[0], int(parts[1])
                    cwriter.write(rhead)
                    await cwriter.drain()
                    if 100 <= status < 200 and status != 101:
                        continue
                    break
                rkind, rlength = body_framing(rheaders)
                if method == b"HEAD" or status in (204, 304):
                    rkind = "skip"
                elif rkind == "none":
                    rkind = "eof"
                if rkind != "skip":
                    await copy_body(ur, cwriter, rkind, rlength)
                await cwriter.drain()
                if body_task is not None:
                    await body_task
                close = wants_close(rversion, rheaders) or rkind == "eof"
                if close:
                    uw.close()
                else:
                    self.idle[port].append((ur, uw, time.monotonic()))
                return close
            except ClientGone:
                uw.close()
                raise
            except (ConnectionError, asyncio.IncompleteReadError, OSError, ValueError) as e:
                uw.close()
                if body_task is not None:
                    if body_task.done() and not body_task.cancelled() and isinstance(body_task.exception(), ClientGone):
                        raise ClientGone()
                    body_task.cancel()
                if got_any:
                    # part of the response went out already: all we can do is hang up
                    raise ClientGone()
                if reused and attempt == 0 and body_task is None:
                    continue  # a pooled connection the upstream had closed: once more, fresh
                raise UpstreamFailed(str(e) or type(e).__name__)

    async def pump_body(self, creader, uw, kind, length):
        try:
            await copy_body(creader, uw, kind, length)
            await uw.drain()
        except (asyncio.IncompleteReadError, ConnectionError) as e:
            raise ClientGone() from e


async def main():
    listen = int(sys.argv[1])
    upstreams = [int(p) for p in sys.argv[2:]]
    if not upstreams:
        sys.exit("usage: front.py LISTEN_PORT UPSTREAM_PORT [UPSTREAM_PORT ...]")
    front = Front(upstreams)
    server = await asyncio.start_server(front.handle, HOST, listen, limit=MAX_HEAD, backlog=1024)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"front ready on http://{HOST}:{listen} -> {', '.join(str(p) for p in upstreams)}", flush=True)
    await stop.wait()
    server.close()
    counts = ", ".join(f"{p}: {n}" for p, n in front.count.items())
    print(f"front: requests per upstream: {counts}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
