"""A fault-injecting HTTP/1.1 proxy between the endpoint (the host, `QUEEN_URL` pointing here)
and the broker (the embedded broker run as `queen-sqs-host broker`, or the Queen engine).

It runs an asyncio loop in a thread of the driver, so the driver knows exactly when a fault
was injected (every fault is recorded in the run's History as a window [start, end]). Each
client connection gets its own upstream connection; requests on it are relayed one at a time
(HTTP/1.1 without pipelining, which is what an HTTP client sends), byte for byte, bodies
framed by Content-Length or chunked encoding.

While `enabled`, a request meets a fault with probability `rate`:

  delay        held 0.2-2.5 s before it is forwarded
  long-delay   held 31-35 s (past the broker's 30 s pop lease); at most `long_delays` a run
  late-answer  forwarded at once, its answer held 1-3 s
  refuse       the connection is closed before the request is forwarded (nothing happened)
  lost-answer  forwarded, then the connection is closed without the answer (it happened)
  cut          forwarded, the answer cut off half way
  429 / 500 / 502 / 503
               answered by the proxy itself, not forwarded
  applied-500  forwarded, and the answer replaced by a 500 (it happened, the facade is told
               it failed)

Every request is also traced (`trace`): when it came and went, its fault, its first line,
the broker's status, and the heads of both bodies. A violation in a run is explained by
the broker calls that led to it, which the client-side log cannot show.
"""

from __future__ import annotations

import asyncio
import random
import threading
from time import monotonic as now

KINDS = [
    ("delay", 24), ("long-delay", 2), ("late-answer", 10), ("refuse", 10),
    ("lost-answer", 12), ("cut", 8), ("429", 10), ("500", 5), ("502", 4), ("503", 10),
    ("applied-500", 5),
]
MAX_HEAD = 256 * 1024


TRACE_EXCERPT = 700


def excerpt(body: bytes) -> str:
    """The head of a body on one line (chunk framing and all: it is for reading)."""
    return body[:TRACE_EXCERPT].decode("utf-8", "replace").replace("\n", " ").replace("\r", " ")


def write_trace(path: str, trace: list, t0: float):
    with open(path, "w") as f:
        for st, en, fault, first, status, req, ans in sorted(trace, key=lambda t: t[0]):
            f.write(f"{st - t0:8.3f}-{(en or st) - t0:8.3f} {fault or '-'} {status or '-'} {first}\n")
            if req:
                f.write(f"    > {req}\n")
            if ans:
                f.write(f"    < {ans}\n")


class HttpError(Exception):
    pass


async def read_head(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            return None
        raise HttpError("connection closed inside a head")
    except asyncio.LimitOverrunError:
        raise HttpError("head too long")
    return head


def parse_head(head: bytes):
    lines = head.split(b"\r\n")
    first = lines[0].decode("latin-1")
    headers = {}
    for ln in lines[1:]:
        if not ln:
            continue
        k, _, v = ln.partition(b":")
        headers[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
    return first, headers


async def read_body(reader, headers, is_response, status=None, method=None):
    """The body's raw bytes as framed on the wire, and whether the connection must close."""
    te = headers.get("transfer-encoding", "").lower()
    if is_response and (method == "HEAD" or status in (204, 304) or (status and 100 <= status < 200)):
        return b"", False
    if "chunked" in te:
        out = bytearray()
        while True:
            line = await reader.readuntil(b"\r\n")
            out += line
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while True:
                    t = await reader.readuntil(b"\r\n")
                    out += t
                    if t == b"\r\n":
                        return bytes(out), False
            out += await reader.readexactly(size + 2)
    if "content-length" in headers:
        n = int(headers["content-length"])
        return (await reader.readexactly(n)) if n else b"", False
    if is_response:
        return await reader.read(), True
    return b"", False


def canned(status: int, reason: str, body: bytes = b"") -> bytes:
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: keep-alive\r\n\r\n").encode() + body


class FaultProxy:
    def __init__(self, upstream_host: str, upstream_port: int, history, seed: int,
                 long_delays: int = 2):
        self.up = (upstream_host, upstream_port)
        self.history = history
        self.rng = random.Random(seed)
        self.rng_lock = threading.Lock()
        self.enabled = False
        self.rate = 0.08
        self.long_delays = long_delays
        self.requests = 0
        self.faults: dict[str, int] = {}
        self.loop = None
        self.server = None
        self.port = None
        self.thread = None
        self.tasks = set()
        # (start, end, fault, first line, status, request excerpt, answer excerpt)
        self.trace: list[tuple] = []

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> int:
        ready = threading.Event()

        def run():
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)

            async def boot():
                self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0, limit=MAX_HEAD)
                self.port = self.server.sockets[0].getsockname()[1]
                ready.set()

            self.loop.run_until_complete(boot())
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
        self.thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fault proxy did not start")
        return self.port

    def stop(self):
        if not self.loop:
            return

        async def down():
            self.server.close()
            for t in list(self.tasks):
                t.cancel()

        try:
            asyncio.run_coroutine_threadsafe(down(), self.loop).result(5)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    # -- faults --------------------------------------------------------------------------

    def pick(self):
        if not self.enabled:
            return None
        with self.rng_lock:
            if self.rng.random() >= self.rate:
                return None
            total = sum(w for _, w in KINDS)
            x = self.rng.uniform(0, total)
            kind = KINDS[-1][0]
            for k, w in KINDS:
                x -= w
                if x <= 0:
                    kind = k
                    break
            if kind == "long-delay":
                if self.long_delays <= 0:
                    kind = "delay"
                else:
                    self.long_delays -= 1
            if kind == "delay":
                arg = self.rng.uniform(0.2, 2.5)
            elif kind == "long-delay":
                arg = self.rng.uniform(31, 35)
            elif kind == "late-answer":
                arg = self.rng.uniform(1, 3)
            else:
                arg = self.rng.random()
        self.faults[kind] = self.faults.get(kind, 0) + 1
        return kind, arg

    # -- one client connection -----------------------------------------------------------

    async def handle(self, creader, cwriter):
        task = asyncio.current_task()
        self.tasks.add(task)
        ureader = uwriter = None
        try:
            while True:
                head = await read_head(creader)
                if head is None:
                    return
                first, headers = parse_head(head)
                method = first.split(" ", 1)[0]
                body, _ = await read_body(creader, headers, False)
                self.requests += 1
                fault = self.pick()
                window = self.history.fault_begin(f"{fault[0]} {first[:60]}") if fault else None
                traced = [now(), None, fault[0] if fault else "", first, None, excerpt(body), ""]
                self.trace.append(traced)
                try:
                    kind = fault[0] if fault else None
                    if kind in ("delay", "long-delay"):
                        await asyncio.sleep(fault[1])
                    if kind == "refuse":
                        return
                    if kind in ("429", "500", "502", "503"):
                        st = int(kind)
                        reason = {429: "Too Many Requests", 500: "Internal Server Error",
                                  502: "Bad Gateway", 503: "Service Unavailable"}[st]
                        cwriter.write(canned(st, reason, b'{"error":"injected by the checker proxy"}'))
                        await cwriter.drain()
                        continue
                    if uwriter is None:
                        ureader, uwriter = await asyncio.open_connection(*self.up, limit=MAX_HEAD)
                    uwriter.write(head + body)
                    await uwriter.drain()
                    rhead = await read_head(ureader)
                    if rhead is None:
                        return
                    rfirst, rheaders = parse_head(rhead)
                    status = int(rfirst.split(" ")[1])
                    rbody, must_close = await read_body(ureader, rheaders, True, status, method)
                    traced[4], traced[6] = status, excerpt(rbody)
                    if rheaders.get("connection", "").lower() == "close":
                        must_close = True
                    if kind == "lost-answer":
                        return
                    if kind == "cut":
                        whole = rhead + rbody
                        cwriter.write(whole[: max(1, len(whole) // 2)])
                        await cwriter.drain()
                        return
                    if kind == "applied-500":
                        cwriter.write(canned(500, "Internal Server Error", b'{"error":"injected after forwarding"}'))
                        await cwriter.drain()
                    else:
                        if kind == "late-answer":
                            await asyncio.sleep(fault[1])
                        cwriter.write(rhead + rbody)
                        await cwriter.drain()
                    if must_close:
                        return
                finally:
                    traced[1] = now()
                    if window is not None:
                        self.history.fault_end(window)
        except (HttpError, ConnectionError, asyncio.IncompleteReadError, ValueError, OSError):
            return
        except asyncio.CancelledError:
            return
        finally:
            self.tasks.discard(task)
            for w in (cwriter, uwriter):
                if w is not None:
                    try:
                        w.close()
                    except Exception:
                        pass
