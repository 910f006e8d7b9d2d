#!/usr/bin/env python3
"""The model-based checker's driver: random operation sequences from several concurrent
consumers (threads, one boto3 client each, retries off) against a REAL running endpoint,
recorded into a History that tests/checker/model.py checks after the run.

One seed is one run: its own broker (embedded mode) or its own queues (engine mode), its own
fault proxy and host, a bounded phase of random operations (--seconds, --ops), then a drain
that receives and deletes everything left, then the checks. The seed picks everything random:
the queues' attributes, the consumers' operations, the proxy's faults, the kill times; a
replay with the same seed and the same --ops/--consumers makes the same choices (thread
timing still differs, so a replay reproduces a failure often, not always).

  driver.py --broker embedded --bin target/debug/queen-sqs-host --seeds 1,2,3 --fresh
  driver.py --broker engine --engine-url http://127.0.0.1:PORT --engine-pid PID --seed 7

Profiles (--profile, default from the seed: seed % 4): clean (no faults), faults (the proxy
injects faults in bursts), kills (the host is SIGKILLed and restarted), chaos (both).
Topology (embedded only; --topology, default from the seed): proxy (a separate broker
process behind the fault proxy) or inproc (the host's own in-process broker; no proxy
faults, kills only).

The last line is "N passed, M failed": seeds x invariants.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import heapq
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import boto3  # noqa: E402
import botocore.config  # noqa: E402
import botocore.exceptions as bx  # noqa: E402

from model import (INVARIANTS, THROTTLE_CODES, History, QueueInfo, Send, attributes_size,  # noqa: E402
                   error_code, md5_of_body, now)
from proxy import FaultProxy, write_trace  # noqa: E402
from servers import BrokerProc, HostProc, listening_pids  # noqa: E402

PROFILES = ["clean", "faults", "kills", "chaos"]
MIB = 1048576


# --------------------------------------------------------------------------------------
# Bodies and attributes


UNICODE = "é漢字😀\ufffd\ue000ß\u00a0ñ\u2028\u2029𝄞"
HOSTILE = ['"', "\\", '\\"', '\\\\', "\\u0000", "</script>", "]]>", "{\"a\":", "}", "'", "&amp;", "<x/>", "%00", "\\n"]
WS = ["\t", "\r", "\n", "\r\n", " "]


def piece(rng: random.Random) -> str:
    k = rng.random()
    if k < 0.35:
        return rng.choice(HOSTILE)
    if k < 0.5:
        return rng.choice(WS)
    if k < 0.7:
        return rng.choice(UNICODE)
    if k < 0.85:
        return base64.b64encode(rng.randbytes(rng.randint(3, 30))).decode()
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rng.randint(1, 12)))


def fill_to(rng: random.Random, prefix: str, nbytes: int, style: str) -> str:
    """A body of exactly nbytes UTF-8 bytes starting with prefix."""
    parts = [prefix]
    size = len(prefix.encode())
    if style == "quotes":
        unit = '"'
    elif style == "backslash":
        unit = '\\"'
    elif style == "b64":
        unit = base64.b64encode(rng.randbytes(3000)).decode()
    else:
        unit = "".join(piece(rng) for _ in range(64))
    ub = len(unit.encode())
    if size + ub <= nbytes:
        reps = (nbytes - size) // ub
        parts.append(unit * reps)
        size += reps * ub
    # Finish with ASCII so the byte count is exact.
    parts.append("x" * max(0, nbytes - size))
    return "".join(parts)


def make_body(rng: random.Random, token: str, max_bytes: int, big_ok: bool) -> str:
    prefix = token + "|"
    r = rng.random()
    if big_ok:
        # Near the limit; or, on a 1 MiB queue, 550-700 KB of characters JSON doubles.
        style = rng.choice(["b64", "b64", "mixed", "quotes", "backslash", "half-quotes"])
        if style == "half-quotes":
            if max_bytes >= 1000000:
                return fill_to(rng, prefix, rng.randint(550000, 700000), "quotes")
            style = "quotes"
        n = max_bytes - rng.randint(0, 64)
        return fill_to(rng, prefix, max(len(prefix) + 1, n), style)
    if r < 0.7:
        s = prefix + "".join(piece(rng) for _ in range(rng.randint(1, 12)))
    elif r < 0.93:
        s = prefix + "".join(piece(rng) for _ in range(rng.randint(20, 300)))
    else:
        n = rng.choice([4096, 16384, 65536, 150000])
        s = fill_to(rng, prefix, min(n, max_bytes // 2), rng.choice(["mixed", "quotes", "b64"]))
    if len(s.encode()) > max_bytes:
        s = fill_to(rng, prefix, max_bytes, "mixed")
    return s


def make_attrs(rng: random.Random) -> dict | None:
    n = rng.choice([0, 0, 0, 1, 1, 2, 3])
    if not n:
        return None
    names = rng.sample(["colour", "n.count", "bin_1", "S-2", "trace.id", "x", "Z_9", "kind"], n)
    out = {}
    for name in names:
        t = rng.choice(["String", "Number", "Binary", "String.custom", "Number.int", "Binary.gz"])
        if t.startswith("String"):
            out[name] = {"DataType": t, "StringValue": "".join(piece(rng) for _ in range(rng.randint(1, 6)))}
        elif t.startswith("Number"):
            out[name] = {"DataType": t, "StringValue": rng.choice(["0", "42", "-12.5", "0.001", "123456789012345678901234567890", "-7"])}
        else:
            out[name] = {"DataType": t, "BinaryValue": rng.randbytes(rng.randint(1, 48))}
    return out


# --------------------------------------------------------------------------------------


class Budget:
    def __init__(self, ops: int, deadline: float):
        self.left = ops
        self.deadline = deadline
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def take(self) -> bool:
        if self.stop.is_set() or now() >= self.deadline:
            return False
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


class LiveQueue:
    def __init__(self, info: QueueInfo, url: str, role: str, attrs: dict):
        self.info = info
        self.url = url
        self.role = role
        self.attrs = attrs
        self.usable = True
        self.arn = None
        self.dedup_recent: list[str] = []
        self.last_purge = -1e9


class Run:
    """One seed."""

    def __init__(self, args, seed: int):
        self.args = args
        self.seed = seed
        self.rng = random.Random(seed)
        self.profile = args.profile if args.profile != "auto" else PROFILES[seed % 4]
        if args.broker == "engine":
            self.topology = "proxy"
        elif args.topology != "auto":
            self.topology = args.topology
        else:
            self.topology = "inproc" if seed % 5 == 4 else "proxy"
        if self.topology == "inproc" and self.profile in ("faults", "chaos"):
            self.profile = "kills" if self.profile == "chaos" else "clean"
        drawn = self.rng.randint(3, 6)  # drawn always, so --consumers leaves the rest as the seed made it
        self.consumers = args.consumers or drawn
        self.run_id = f"{seed % 100000}x{random.Random().randrange(36**4):04x}"[:14]
        self.history = History(args.broker, self.run_id)
        self.work = tempfile.mkdtemp(prefix=f"checker-{seed}-", dir=args.workdir)
        self.account = "".join(str(random.Random().randint(0, 9)) for _ in range(12))
        self.account = "9" + self.account[1:]
        self.token_seq = 0
        self.token_lock = threading.Lock()
        self.queues: dict[str, LiveQueue] = {}
        self.broker = None
        self.proxy = None
        self.host = None
        self.host_lock = threading.Lock()
        self.endpoint = None
        self.local = threading.local()
        self.handles_recent: list = []  # (handle, qrole, token)
        self.handles_by_msg: dict = {}
        self.hlock = threading.Lock()
        self.latest_deadline = 0.0
        self.big_left = args.big
        self.big_lock = threading.Lock()
        self.tracker_lock = threading.Lock()
        self.acked = {}  # token -> role
        self.settled = set()
        self.drained = set()
        self.ops_done = 0
        self.kills = 0
        self.log_lines = []

    # -- output --------------------------------------------------------------------------

    def say(self, text):
        print(f"[seed {self.seed}] {text}", flush=True)

    # -- infrastructure ------------------------------------------------------------------

    def boot(self):
        a = self.args
        binary = a.bin_copy
        env = {
            "QUEEN_SQS_HANDLE_SECRET": "checker-" + hashlib.sha256(f"{self.run_id}".encode()).hexdigest()[:32],
            "QUEEN_SQS_ACCOUNT_ID": self.account,
        }
        if self.topology == "proxy":
            if a.broker == "embedded":
                token = hashlib.sha256(os.urandom(16)).hexdigest()
                self.broker = BrokerProc(binary, os.path.join(self.work, "broker"), token,
                                         os.path.join(self.work, "broker.log"))
                bport = self.broker.start()
                up = ("127.0.0.1", bport)
                env["QUEEN_SQS_CREDENTIALS"] = f"test:test:{token}"
            else:
                host, _, port = a.engine_url.replace("http://", "").partition(":")
                up = (host, int(port))
                if a.engine_pid and int(a.engine_pid) not in listening_pids(int(port)):
                    raise RuntimeError(f"engine port {port} is not answered by pid {a.engine_pid}: {listening_pids(int(port))}")
                env["QUEEN_SQS_CREDENTIALS"] = "test:test:"
            self.proxy = FaultProxy(up[0], up[1], self.history, self.seed * 7919 + 1,
                                    long_delays=a.long_delays)
            pport = self.proxy.start()
            env["QUEEN_URL"] = f"http://127.0.0.1:{pport}"
        else:
            env["QUEEN_SQS_CREDENTIALS"] = "test:test:"
        self.host = HostProc(binary, os.path.join(self.work, "host"), env,
                             os.path.join(self.work, "host.log"))
        t = now()
        port = self.host.start()
        self.host_start_s = now() - t
        self.endpoint = f"http://127.0.0.1:{port}"
        self.say(f"host pid {self.host.proc.pid} on {self.endpoint} (started in {self.host_start_s:.1f}s)"
                 + (f", proxy :{self.proxy.port} -> {self.proxy.up[0]}:{self.proxy.up[1]}" if self.proxy else ", in-process broker"))

    def shutdown(self):
        for x in (self.host, self.broker):
            try:
                if x:
                    x.stop()
            except Exception as e:
                self.say(f"stop: {e}")
        if self.proxy:
            self.proxy.stop()

    def client(self):
        c = getattr(self.local, "client", None)
        if c is None or getattr(self.local, "endpoint", None) != self.endpoint:
            cfg = botocore.config.Config(
                retries={"total_max_attempts": 1}, connect_timeout=3, read_timeout=45,
                max_pool_connections=4)
            c = boto3.session.Session().client(
                "sqs", endpoint_url=self.endpoint, region_name="us-east-1",
                aws_access_key_id="test", aws_secret_access_key="test", config=cfg)
            self.local.client = c
            self.local.endpoint = self.endpoint
        return c

    # -- one call ------------------------------------------------------------------------

    def call(self, op, q: LiveQueue | None, consumer, method, brief=None, **kw):
        h = self.history
        c = h.begin(op, q.info.key if q else None, consumer)
        if brief:
            c.extra["brief"] = brief
        fn = getattr(self.client(), method)
        try:
            r = fn(**kw)
            h.end(c, "ok", r.get("ResponseMetadata", {}).get("HTTPStatusCode", 200))
            return c, r
        except bx.ClientError as e:
            st = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            err = e.response.get("Error", {})
            # The query code names the error in the model's words on both protocols: over
            # JSON the header carries it, while botocore's `QueryErrorCode` may hold the
            # exception's name (`InvalidParameterValueException`) instead.
            headers = e.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
            query_error = headers.get("x-amzn-query-error", "").split(";")[0]
            code = query_error or err.get("QueryErrorCode") or err.get("Code")
            ec = error_code(code)
            outcome = "unknown" if (st or 0) >= 500 or ec in THROTTLE_CODES or st == 429 else "err"
            h.end(c, outcome, st, code, err.get("Message"))
            return c, None
        except (bx.EndpointConnectionError, bx.ConnectionClosedError, bx.ReadTimeoutError,
                bx.ConnectTimeoutError, bx.ProxyConnectionError, bx.HTTPClientError) as e:
            h.end(c, "unknown", None, None, f"{type(e).__name__}: {str(e)[:120]}")
            if isinstance(e, (bx.EndpointConnectionError, bx.ConnectTimeoutError)):
                time.sleep(0.25)  # the host is down (being restarted): do not spin
            return c, None
        except Exception as e:  # a botocore parse failure of a garbled answer, and the like
            h.end(c, "unknown", None, None, f"{type(e).__name__}: {str(e)[:160]}")
            c.extra["client_error"] = "exception"
            return c, None

    # -- queues --------------------------------------------------------------------------

    def plan_queues(self):
        r = self.rng
        p = f"ck{self.run_id}-"
        plans = []
        std_dlq_vt = 5
        plans.append(dict(role="std-dlq", name=p + "std-dlq", fifo=False, vt=std_dlq_vt, delay=0,
                          max=262144, redrive=None, parts=None))
        plans.append(dict(role="std-a", name=p + "std-a", fifo=False, vt=r.choice([2, 3, 4, 5]), delay=0,
                          max=r.choice([262144, MIB]), redrive=("std-dlq", r.randint(1, 3)),
                          parts=r.choice([None, 1, 2, 8])))
        plans.append(dict(role="std-b", name=p + "std-b", fifo=False, vt=r.choice([2, 3]), delay=r.choice([3, 5]),
                          max=MIB, redrive=None, parts=r.choice([None, 4])))
        plans.append(dict(role="std-c", name=p + "std-c", fifo=False, vt=r.choice([2, 4, 6]), delay=0,
                          max=r.choice([262144, MIB]), redrive=None, parts=r.choice([None, 1, 4])))
        plans.append(dict(role="fifo-dlq", name=p + "fifo-dlq.fifo", fifo=True, vt=5, delay=0,
                          max=262144, redrive=None, parts=None))
        plans.append(dict(role="fifo-a", name=p + "fifo-a.fifo", fifo=True, vt=r.choice([2, 3, 4]), delay=0,
                          max=r.choice([262144, MIB]), redrive=("fifo-dlq", r.randint(1, 3)), parts=None))
        plans.append(dict(role="fifo-b", name=p + "fifo-b.fifo", fifo=True, vt=r.choice([2, 3]),
                          delay=r.choice([0, 0, 2]), max=MIB, redrive=None, parts=None))
        return plans

    def create_queue(self, plan, inc=0, consumer=0):
        attrs = {"VisibilityTimeout": str(plan["vt"]), "DelaySeconds": str(plan["delay"]),
                 "MaximumMessageSize": str(plan["max"])}
        if plan["fifo"]:
            attrs["FifoQueue"] = "true"
        if plan["parts"]:
            attrs["queen.partitions"] = str(plan["parts"])
        if plan["redrive"]:
            dlq = self.queues[plan["redrive"][0]]
            attrs["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": str(plan["redrive"][1])})
        info = QueueInfo(plan["name"], inc, plan["fifo"], plan["vt"], plan["delay"], plan["max"],
                         redrive=((self.queues[plan["redrive"][0]].info.key, plan["redrive"][1]) if plan["redrive"] else None),
                         is_dlq=plan["role"].endswith("dlq"))
        c, r = self.call("CreateQueue", None, consumer, "create_queue", brief=plan["name"],
                         QueueName=plan["name"], Attributes=attrs)
        if r is None:
            return None, c
        url = r["QueueUrl"]
        if f"/{self.account}/" not in url:
            raise RuntimeError(f"CreateQueue answered {url}: not the account {self.account} of the host this run started")
        self.history.add_queue(info)
        lq = LiveQueue(info, url, plan["role"], attrs)
        lq.plan = plan
        c2, ra = self.call("GetQueueAttributes", lq, consumer, "get_queue_attributes", QueueUrl=url, AttributeNames=["QueueArn"])
        if ra:
            lq.arn = ra["Attributes"]["QueueArn"]
        return lq, c

    def setup(self):
        for plan in self.plan_queues():
            for attempt in range(5):
                lq, c = self.create_queue(plan)
                if lq:
                    break
                time.sleep(1)
            if lq is None:
                raise RuntimeError(f"could not create {plan['name']}: {c.code} {c.msg}")
            self.queues[plan["role"]] = lq
        for lq in self.queues.values():
            if lq.info.redrive:
                self.history.queues[lq.info.redrive[0]].sources.append(lq.info.key)
        if self.proxy and self.proxy.requests == 0:
            raise RuntimeError("the host never called the broker through the checker's proxy")

    # -- messages ------------------------------------------------------------------------

    def token(self):
        with self.token_lock:
            self.token_seq += 1
            return f"ck:{self.run_id}:{self.token_seq}"

    def new_send(self, rng, q: LiveQueue, big_ok):
        s = Send()
        s.token = self.token()
        s.qkey = q.info.key
        s.attrs = make_attrs(rng)
        room = q.info.max_size - attributes_size(s.attrs)
        big = False
        if big_ok:
            with self.big_lock:
                if self.big_left > 0 and rng.random() < self.args.big_rate:
                    self.big_left -= 1
                    big = True
        body = make_body(rng, s.token, room, big)
        raw = body.encode()
        s.body_sha = hashlib.sha256(raw).hexdigest()
        s.body_md5 = md5_of_body(body)
        s.body_len = len(raw)
        s.body_small = body if len(raw) < 2048 else body[:200]
        s.group = None
        s.dedup = None
        s.msg_delay = None
        s.epoch = self.history.dedup_epoch[q.info.key]
        if q.info.fifo:
            s.group = f"g{rng.randint(0, 3)}"
            if q.dedup_recent and rng.random() < 0.06:
                s.dedup = rng.choice(q.dedup_recent[-20:])
            else:
                s.dedup = "d-" + s.token.replace(":", "-")
                q.dedup_recent.append(s.dedup)
                del q.dedup_recent[:-50]
        elif q.role == "std-c" and rng.random() < 0.15:
            s.msg_delay = rng.randint(1, 4)
        return s, body

    def entry_kwargs(self, s: Send, body):
        kw = {"MessageBody": body}
        if s.attrs:
            kw["MessageAttributes"] = s.attrs
        if s.group:
            kw["MessageGroupId"] = s.group
        if s.dedup:
            kw["MessageDeduplicationId"] = s.dedup
        if s.msg_delay:
            kw["DelaySeconds"] = s.msg_delay
        return kw

    def finish_send(self, s: Send, q: LiveQueue, outcome, answer=None, code=None):
        s.outcome = outcome
        s.code = error_code(code)
        if answer:
            s.message_id = answer.get("MessageId")
            s.md5_body = answer.get("MD5OfMessageBody")
            s.md5_attrs = answer.get("MD5OfMessageAttributes")
            s.seq_no = answer.get("SequenceNumber")
        lo, hi = q.info.delay_bounds(s.call.ts, s.call.te)
        if s.msg_delay:
            lo, hi = s.msg_delay, max(hi, s.msg_delay)
        s.delay_lo, s.delay_hi = lo, hi
        self.history.add_send(s)
        if outcome == "ok":
            with self.tracker_lock:
                self.acked[s.token] = q.role

    def op_send(self, rng, cid, q):
        s, body = self.new_send(rng, q, big_ok=q.info.max_size >= MIB or rng.random() < 0.3)
        c, r = self.call("SendMessage", q, cid, "send_message", brief=f"{s.token} {s.body_len}B" + (f" {s.group}/{s.dedup}" if s.group else "") + (f" delay {s.msg_delay}" if s.msg_delay else ""),
                         QueueUrl=q.url, **self.entry_kwargs(s, body))
        s.call = c
        self.finish_send(s, q, c.outcome, r, c.code)

    def op_send_batch(self, rng, cid, q):
        n = rng.randint(2, 10)
        entries, sends = [], []
        total = 0
        for i in range(n):
            s, body = self.new_send(rng, q, big_ok=False)
            if total + s.body_len + attributes_size(s.attrs) > 1000000:
                break
            total += s.body_len + attributes_size(s.attrs)
            kw = self.entry_kwargs(s, body)
            kw["Id"] = f"e{i}"
            entries.append(kw)
            sends.append(s)
        # Each entry's number and, on FIFO queues, its group: what a replay needs to read.
        named = ",".join(s.token.rsplit(":", 1)[-1] + (f"/{s.group}" if s.group else "") for s in sends)
        c, r = self.call("SendMessageBatch", q, cid, "send_message_batch", brief=f"{len(entries)} entries: {named}",
                         QueueUrl=q.url, Entries=entries)
        ok = {e["Id"]: e for e in (r or {}).get("Successful", [])}
        failed = {e["Id"]: e for e in (r or {}).get("Failed", [])}
        for kw, s in zip(entries, sends):
            s.call = c
            if r is None:
                self.finish_send(s, q, c.outcome, None, c.code)
            elif kw["Id"] in ok:
                self.finish_send(s, q, "ok", ok[kw["Id"]])
            elif kw["Id"] in failed:
                f = failed[kw["Id"]]
                code = error_code(f.get("Code"))
                sender = f.get("SenderFault", True)
                outcome = "err" if sender and code not in THROTTLE_CODES else "unknown"
                self.finish_send(s, q, outcome, None, code)
                if outcome == "err" or not sender:
                    c.extra.setdefault("entry_failures", []).append(f)
            else:
                self.finish_send(s, q, "unknown", None, "MissingEntry")
                c.extra.setdefault("entry_failures", []).append({"Id": kw["Id"], "Code": "missing from the answer"})
        for f in c.extra.get("entry_failures", []):
            code = error_code(f.get("Code"))
            if code in THROTTLE_CODES:
                continue
            # An entry of a valid batch failed: judged as a refusal of its own.
            sub = self.history.begin("SendMessageBatchEntry", q.info.key, cid)
            sub.ts, sub.te = c.ts, c.te
            sub.outcome = "err" if f.get("SenderFault", True) else "unknown"
            sub.status = 400 if f.get("SenderFault", True) else (503 if code == "ServiceUnavailable" else 500)
            sub.code = code
            sub.msg = f.get("Message")

    # -- receive and what follows --------------------------------------------------------

    def op_receive(self, rng, cid, q, plans, drain=False, vt=None, wait=None, maxn=None):
        kw = {"QueueUrl": q.url, "MaxNumberOfMessages": maxn or rng.randint(1, 10),
              "MessageSystemAttributeNames": ["All", "queen.originalMessageId", "queen.sourceQueue"],
              "MessageAttributeNames": ["All"]}
        if vt is None and not drain and rng.random() < 0.7:
            vt = rng.choice([0, 1, 2, 2, 3, 3, 4, 5, 6, 8])
        if vt is not None:
            kw["VisibilityTimeout"] = vt
        wait = wait if wait is not None else rng.choice([0, 0, 0, 0, 0, 0, 1, 1, 2])
        kw["WaitTimeSeconds"] = wait
        c, r = self.call("ReceiveMessage", q, cid, "receive_message", QueueUrl=q.url,
                         **{k: v for k, v in kw.items() if k != "QueueUrl"})
        c.extra["vt"] = vt
        c.extra["wait"] = wait
        c.extra["drain"] = drain
        msgs = (r or {}).get("Messages", []) if r is not None else []
        c.extra["messages"] = msgs
        tokens = [m.get("Body", "").split("|", 1)[0] for m in msgs]
        counts = [(m.get("Attributes") or {}).get("ApproximateReceiveCount", "?") for m in msgs]
        c.extra["brief"] = f"max {kw['MaxNumberOfMessages']} vt {vt} wait {wait}: " + (",".join(f"{t.rsplit(':', 1)[-1]}({n})" for t, n in zip(tokens, counts)) or "none")
        eff_vt = vt if vt is not None else q.info.vt
        held = []
        for m, tok in zip(msgs, tokens):
            dl = c.ts + eff_vt
            self.latest_deadline = max(self.latest_deadline, c.te + eff_vt)
            item = {"handle": m["ReceiptHandle"], "q": q, "token": tok, "rs": c.ts, "re": c.te,
                    "vt": eff_vt, "deadline": dl, "mid": m.get("MessageId")}
            held.append(item)
            with self.hlock:
                self.handles_recent.append(item)
                del self.handles_recent[:-400]
                self.handles_by_msg.setdefault((q.info.key, item["mid"]), []).append(item)
            if drain:
                with self.tracker_lock:
                    self.drained.add(tok)
        if plans is not None and held:
            self.plan_fates(rng, cid, held, plans)
        return c, held

    def plan_fates(self, rng, cid, held, plans):
        batch_del, batch_cmv = [], []
        t = now()
        for it in held:
            vt = it["vt"]
            x = rng.random()
            if vt == 0:
                if x < 0.3:
                    heapq.heappush(plans, (t + rng.uniform(0, 0.3), next(TIE), "delete", it))
                continue
            if x < 0.45:
                heapq.heappush(plans, (t + rng.uniform(0, min(vt, 3) * 0.5), next(TIE), "delete", it))
            elif x < 0.57:
                batch_del.append(it)
            elif x < 0.67:
                heapq.heappush(plans, (t + rng.uniform(0, vt * 0.5), next(TIE), "cmv", it))
            elif x < 0.74:
                heapq.heappush(plans, (it["deadline"] - rng.uniform(-0.15, 0.35), next(TIE), "cmv0-deadline", it))
            elif x < 0.79:
                heapq.heappush(plans, (it["re"] + vt + rng.uniform(0.2, 1.5), next(TIE), "delete-late", it))
            elif x < 0.84:
                batch_cmv.append(it)
            # else: abandoned; its visibility runs out and it comes back
        if batch_del:
            heapq.heappush(plans, (t + rng.uniform(0, 0.5), next(TIE), "delete-batch", batch_del))
        if batch_cmv:
            heapq.heappush(plans, (t + rng.uniform(0, 0.5), next(TIE), "cmv-batch", batch_cmv))

    def record_settle(self, op, it, cid, c, v=None):
        c.extra["handle"] = it["handle"]
        if v is not None:
            c.extra["v"] = v
        if op == "DeleteMessage" and c.outcome != "err":
            with self.tracker_lock:
                self.settled.add(it["token"])

    def do_delete(self, cid, it, why="delete"):
        q = it["q"]
        c, r = self.call("DeleteMessage", q, cid, "delete_message", brief=f"{why} {it['token'].rsplit(':', 1)[-1]}",
                         QueueUrl=q.url, ReceiptHandle=it["handle"])
        self.record_settle("DeleteMessage", it, cid, c)

    def do_cmv(self, cid, it, v, why="cmv"):
        q = it["q"]
        c, r = self.call("ChangeMessageVisibility", q, cid, "change_message_visibility",
                         brief=f"{why} {it['token'].rsplit(':', 1)[-1]} -> {v}",
                         QueueUrl=q.url, ReceiptHandle=it["handle"], VisibilityTimeout=v)
        self.record_settle("ChangeMessageVisibility", it, cid, c, v)
        if c.outcome == "ok":
            self.latest_deadline = max(self.latest_deadline, c.te + v)
        return c

    def do_batch(self, rng, cid, items, kind):
        """DeleteMessageBatch / ChangeMessageVisibilityBatch over items of one queue, with a
        repeated handle under a second Id now and then, and both handles of a message
        delivered twice. Answers how many entries have no known outcome (throttled, or lost
        with the whole call): their messages may still be in flight."""
        unsettled = 0
        byq = {}
        for it in items:
            byq.setdefault(it["q"].info.key, []).append(it)
        for _, its in byq.items():
            q = its[0]["q"]
            its = its[:10]
            entries = []
            for i, it in enumerate(its):
                entries.append((f"m{i}", it))
            if len(entries) < 10 and rng.random() < 0.35:
                entries.append((f"dup{len(entries)}", rng.choice(its)))
            if len(entries) < 10 and rng.random() < 0.25:
                with self.hlock:
                    other = [h for h in self.handles_by_msg.get((q.info.key, its[0]["mid"]), []) if h["handle"] != its[0]["handle"]]
                if other:
                    entries.append((f"old{len(entries)}", other[-1]))
            if kind == "delete":
                c, r = self.call("DeleteMessageBatch", q, cid, "delete_message_batch",
                                 brief=f"{len(entries)} entries ({','.join(e[0] for e in entries)})",
                                 QueueUrl=q.url, Entries=[{"Id": i, "ReceiptHandle": it["handle"]} for i, it in entries])
                op = "DeleteMessage"
                v = None
            else:
                v = rng.choice([0, 0, 1, 3, 5])
                c, r = self.call("ChangeMessageVisibilityBatch", q, cid, "change_message_visibility_batch",
                                 brief=f"{len(entries)} entries -> {v}",
                                 QueueUrl=q.url, Entries=[{"Id": i, "ReceiptHandle": it["handle"], "VisibilityTimeout": v} for i, it in entries])
                op = "ChangeMessageVisibility"
            ok = {e["Id"] for e in (r or {}).get("Successful", [])}
            failed = {e["Id"]: e for e in (r or {}).get("Failed", [])}
            for i, it in entries:
                # Each entry is recorded as a call of its own over the batch's interval.
                sub = self.history.begin(op, q.info.key, cid)
                sub.ts, sub.te = c.ts, c.te
                sub.extra["batch"] = c.seq
                if r is None:
                    # The batch call itself is judged; its entries only carry its outcome.
                    sub.outcome, sub.code = c.outcome, c.code
                    sub.extra["derived"] = True
                elif i in ok:
                    sub.outcome, sub.status = "ok", 200
                elif i in failed:
                    f = failed[i]
                    code = error_code(f.get("Code"))
                    sub.outcome = "err" if f.get("SenderFault", True) and code not in THROTTLE_CODES else "unknown"
                    sub.status = 400 if f.get("SenderFault", True) else (503 if code == "ServiceUnavailable" else 500)
                    sub.code = code
                    sub.msg = f.get("Message")
                else:
                    sub.outcome, sub.code = "unknown", "MissingEntry"
                sub.extra["brief"] = f"entry {i} of batch #{c.seq}: {it['token'].rsplit(':', 1)[-1]}"
                self.record_settle(op, it, cid, sub, v)
                if op == "ChangeMessageVisibility" and sub.outcome == "ok":
                    self.latest_deadline = max(self.latest_deadline, c.te + v)
                if sub.outcome == "err" and sub.code is None:
                    sub.code = "?"
                if sub.outcome == "unknown":
                    unsettled += 1
                # A refusal of a batch entry is judged like the single call's; a 5xx entry
                # is a 5xx answer.
        return unsettled

    def run_plan(self, rng, cid, kind, it):
        t = now()
        if kind == "delete":
            self.do_delete(cid, it)
        elif kind == "delete-late":
            self.do_delete(cid, it, "late delete")
        elif kind == "cmv":
            c = self.do_cmv(cid, it, rng.choice([0, 1, 2, 4, 6]))
        elif kind == "cmv0-deadline":
            self.do_cmv(cid, it, 0, "cmv0 near deadline")
        elif kind == "delete-batch":
            self.do_batch(rng, cid, it, "delete")
        elif kind == "cmv-batch":
            self.do_batch(rng, cid, it, "cmv")

    # -- the consumers -------------------------------------------------------------------

    def usable(self, roles=None):
        return [q for r, q in self.queues.items() if q.usable and (roles is None or r in roles)]

    def worker(self, cid, budget: Budget):
        rng = random.Random(self.seed * 1000003 + cid)
        plans = []
        weights = [("send", 26), ("batch", 8), ("receive", 34), ("receive-dlq", 3),
                   ("stale-delete", 3), ("twin-delete", 1)]
        total = sum(w for _, w in weights)
        try:
            while True:
                if plans and plans[0][0] <= now():
                    _, _, kind, it = heapq.heappop(plans)
                    if not budget.take():
                        break
                    self.run_plan(rng, cid, kind, it)
                    continue
                if not budget.take():
                    break
                x = rng.uniform(0, total)
                op = weights[-1][0]
                for k, w in weights:
                    x -= w
                    if x <= 0:
                        op = k
                        break
                qs = self.usable(["std-a", "std-b", "std-c", "fifo-a", "fifo-b"])
                if not qs:
                    time.sleep(0.2)
                    continue
                q = rng.choice(qs)
                if op == "send":
                    self.op_send(rng, cid, q)
                elif op == "batch":
                    self.op_send_batch(rng, cid, q)
                elif op == "receive":
                    self.op_receive(rng, cid, q, plans)
                elif op == "receive-dlq":
                    dq = self.usable(["std-dlq", "fifo-dlq"])
                    if dq:
                        self.op_receive(rng, cid, rng.choice(dq), plans)
                elif op == "stale-delete":
                    with self.hlock:
                        it = rng.choice(self.handles_recent) if self.handles_recent else None
                    if it:
                        self.do_delete(cid, it, "old handle")
                elif op == "twin-delete":
                    with self.hlock:
                        twins = [v for v in self.handles_by_msg.values() if len(v) >= 2]
                        pick = rng.choice(twins)[-2:] if twins else None
                    if pick:
                        self.do_batch(rng, cid, pick, "delete")
                # Pace: never spin. (The time left is read once: read twice, it could be
                # past due by the second read, and a negative sleep raises; seed 472.)
                due_in = plans[0][0] - now() if plans else 0.0
                if due_in > 0:
                    time.sleep(min(0.05, due_in))
        except Exception:
            self.say(f"consumer {cid} crashed:\n{traceback.format_exc()}")
            self.crashed = True

    def admin(self, budget: Budget, end: float):
        rng = random.Random(self.seed * 31 + 7)
        deleted = None
        while now() < end - 1 and not budget.stop.is_set():
            time.sleep(rng.uniform(1.5, 4.0))
            if now() >= end - 1 or not budget.take():
                break
            x = rng.random()
            try:
                if deleted and now() - deleted[1] > 61:
                    self.recreate(deleted[0])
                    deleted = None
                elif x < 0.22:
                    q = rng.choice(self.usable(["std-c", "fifo-b", "std-b"]) or [None])
                    if q:
                        self.purge(q)
                elif x < 0.38:
                    self.toggle_delay()
                elif x < 0.55:
                    dq = rng.choice(self.usable(["std-dlq", "fifo-dlq"]))
                    self.start_move(dq, rng)
                elif x < 0.65:
                    dq = rng.choice(self.usable(["std-dlq", "fifo-dlq"]))
                    self.call("ListMessageMoveTasks", dq, 99, "list_message_move_tasks", SourceArn=dq.arn)
                elif x < 0.72 and deleted is None and self.args.delete_queues and not self.deleted_once:
                    q = self.queues.get("std-c")
                    if q and q.usable:
                        self.deleted_once = True
                        if self.delete_queue(q):
                            deleted = ("std-c", now())
                            # At once: the 60 s tombstone answers QueueDeletedRecently.
                            lq, c = self.create_queue(q.plan, inc=q.info.inc + 1, consumer=99)
                            if lq:
                                self.queues["std-c"] = lq
                                deleted = None
                else:
                    q = rng.choice(self.usable())
                    self.call("GetQueueAttributes", q, 99, "get_queue_attributes", QueueUrl=q.url, AttributeNames=["All"])
            except Exception:
                self.say(f"admin: {traceback.format_exc()}")

    def purge(self, q):
        c, r = self.call("PurgeQueue", q, 99, "purge_queue", QueueUrl=q.url)
        self.history.purges[q.info.key].append(c)
        if c.outcome != "err":
            self.history.dedup_epoch[q.info.key] += 1
            q.dedup_recent = []

    def toggle_delay(self):
        q = self.queues.get("std-b")
        if not q or not q.usable:
            return
        info = q.info
        old = info.delays[-1][1]
        new = 3 if old == 5 else 5
        # Recorded before the call: a send that ends while the change is in flight computes
        # its bounds then, and must see it (the change may land at any instant of the call).
        pending = [now(), float("inf"), old, new]
        info.delay_changes.append(pending)
        c, r = self.call("SetQueueAttributes", q, 99, "set_queue_attributes", brief=f"DelaySeconds {old} -> {new}",
                         QueueUrl=q.url, Attributes={"DelaySeconds": str(new)})
        # An unknown outcome keeps the change open until a read settles it: closed at the
        # call's end meanwhile, a send made while the read was under way was judged at the
        # old delay though the change had landed (engine seed 961: 3.1 s on a queue set
        # to 3 by a change answered 503, judged against 5).
        pending[0] = c.ts
        if c.outcome != "unknown":
            pending[1] = c.te
        if c.outcome == "ok":
            info.delays.append((c.te, new))
        elif c.outcome == "unknown":
            # Whether it applied is learnt from the next read that answers; until then both
            # are possible (and stay so if none does: the pending change never ends).
            for _ in range(10):
                c2, ra = self.call("GetQueueAttributes", q, 99, "get_queue_attributes", QueueUrl=q.url, AttributeNames=["DelaySeconds"])
                if ra:
                    now_d = int(ra["Attributes"]["DelaySeconds"])
                    pending[1] = c2.te
                    info.delays.append((c2.te, now_d))
                    break
                time.sleep(0.5)
            else:
                pending[1] = float("inf")

    def start_move(self, dq, rng):
        kw = {"SourceArn": dq.arn}
        if rng.random() < 0.5:
            kw["MaxNumberOfMessagesPerSecond"] = rng.choice([5, 50])
        c, r = self.call("StartMessageMoveTask", dq, 99, "start_message_move_task", **kw)
        self.history.move_tasks[dq.info.key].append(c)

    def delete_queue(self, q):
        q.usable = False
        info = q.info
        first = None
        for attempt in range(6):
            c, r = self.call("DeleteQueue", q, 99, "delete_queue", QueueUrl=q.url)
            first = first or c
            if c.outcome == "ok" or c.code in ("QueueDoesNotExist", "NonExistentQueue"):
                info.deleted = (first.ts, c.te, "ok")
                return True
            time.sleep(1)
        info.deleted = (first.ts, now(), "unknown")
        return False

    def recreate(self, role):
        old = self.queues[role]
        for attempt in range(20):
            lq, c = self.create_queue(old.plan, inc=old.info.inc + 1, consumer=99)
            if lq:
                self.queues[role] = lq
                return True
            if c.code != "QueueDeletedRecently" and c.outcome == "err":
                self.say(f"re-create of {role}: {c.code} {c.msg}")
            time.sleep(3)
        return False

    # -- faults and kills ----------------------------------------------------------------

    def chaos(self, end: float):
        rng = random.Random(self.seed * 131 + 3)
        faults = self.profile in ("faults", "chaos") and self.proxy is not None
        kills = self.profile in ("kills", "chaos")
        span = max(4.0, end - now())
        next_kill = now() + rng.uniform(0.2, 0.6) * span if kills else 1e18
        next_toggle = now() + rng.uniform(1, 3)
        while now() < end - 2:
            t = now()
            if faults and t >= next_toggle:
                self.proxy.enabled = not self.proxy.enabled
                next_toggle = t + (rng.uniform(2, 6) if self.proxy.enabled else rng.uniform(2, 5))
            if t >= next_kill and end - t > 2:
                self.kill_host(rng)
                next_kill = now() + rng.uniform(0.3, 0.8) * span
            time.sleep(0.1)
        if self.proxy:
            self.proxy.enabled = False

    def kill_host(self, rng):
        w = self.history.kill_begin()
        with self.host_lock:
            self.host.kill9()
            self.kills += 1
            time.sleep(rng.uniform(0, 0.5))
            try:
                self.host.start()
            except Exception as e:
                self.say(f"restart after kill failed: {e}")
                raise
        w[1] = now()

    # -- the drain -----------------------------------------------------------------------

    def outstanding(self):
        with self.tracker_lock:
            out = []
            done = set(self.settled) | set(self.drained)
            dd_done = set()
            for tok in done:
                s = self.history.sends.get(tok)
                if s is not None and s.dedup is not None:
                    dd_done.add((s.qkey, s.epoch, s.dedup))
            for tok, role in self.acked.items():
                if tok in done:
                    continue
                s = self.history.sends.get(tok)
                if s is not None and s.dedup is not None and (s.qkey, s.epoch, s.dedup) in dd_done:
                    continue
                q = self.history.queues.get(s.qkey) if s else None
                if q is None or q.deleted is not None:
                    continue
                purged = any(p.outcome != "err" and p.te >= s.call.ts for p in self.history.purges.get(s.qkey, []))
                if not purged and q.redrive:
                    purged = any(p.outcome != "err" and p.te >= s.call.ts for p in self.history.purges.get(q.redrive[0], []))
                if not purged:
                    out.append(tok)
            return out

    def drain(self, cap: float):
        t0 = now()
        self.history.drain_started = t0
        wait = min(15.0, max(0.0, self.latest_deadline - now()) + 6.5)
        time.sleep(wait)
        empty_rounds = 0
        rounds = 0
        order = ["std-a", "std-b", "std-c", "fifo-a", "fifo-b", "std-dlq", "fifo-dlq"]
        # Past the cap only while the last round still found messages (a long run's backlog
        # on the engine takes longer than `cap` to drain: engine seed 412 left 183 messages
        # in a dead-letter queue the drain was still emptying 10 at a time), and never past
        # ten caps.
        progressing = True
        settle_by = 0.0

        def in_time():
            spent = now() - t0
            return spent < cap or (progressing and spent < 10 * cap)

        while in_time():
            rounds += 1
            got = 0
            unsettled = 0
            for role in order:
                q = self.queues.get(role)
                if not q or not q.usable:
                    continue
                for i in range(300):
                    c, held = self.op_receive(None, -1, q, None, drain=True, vt=30, wait=0, maxn=10)
                    if not held:
                        break
                    got += len(held)
                    unsettled += self.do_batch(random.Random(0), -1, held, "delete")
                    if not in_time():
                        break
            # A round whose deletes were throttled or lost left its messages in flight for
            # the drain's 30 s visibility (and a FIFO group behind them): it still counts as
            # progress, so the drain waits them out rather than reporting what is behind
            # them as lost (engine seed 471: the KV rate limit throttled the drain's last
            # delete batch, and five later messages of that group were counted lost).
            if unsettled:
                settle_by = now() + 31.0
            progressing = got > 0 or now() < settle_by
            left = self.outstanding()
            if got == 0:
                empty_rounds += 1
                if not left and empty_rounds >= 1 and rounds >= 2:
                    break
                time.sleep(1.0)
            else:
                empty_rounds = 0
        return now() - t0, rounds

    # -- the whole seed ------------------------------------------------------------------

    def execute(self):
        a = self.args
        self.crashed = False
        self.deleted_once = False
        self.say(f"broker {a.broker}, topology {self.topology}, profile {self.profile}, {self.consumers} consumers, "
                 f"--seconds {a.seconds} --ops {a.ops} (work dir {self.work})")
        t_start = now()
        self.boot()
        self.setup()
        end = now() + a.seconds
        budget = Budget(a.ops, end)
        threads = [threading.Thread(target=self.worker, args=(i + 1, budget), name=f"consumer-{i + 1}", daemon=True)
                   for i in range(self.consumers)]
        threads.append(threading.Thread(target=self.admin, args=(budget, end), name="admin", daemon=True))
        chaos = threading.Thread(target=self.chaos, args=(end,), name="chaos", daemon=True)
        for t in threads:
            t.start()
        chaos.start()
        chaos.join(a.seconds + 60)
        budget.stop.set()
        if self.proxy:
            self.proxy.enabled = False
        for t in threads:
            t.join(max(1.0, end + 50 - now()))
        stuck = [t.name for t in threads if t.is_alive()]
        if stuck:
            self.say(f"threads still running after their bound (their calls count as unanswered): {stuck}")
        with self.host_lock:
            if not self.host.alive():
                self.host.start()
        t_ops = now() - t_start
        ops = len(self.history.calls)
        disturbed = bool(self.history.fault_windows or self.history.kill_windows)
        drain_s, rounds = self.drain(cap=a.drain_cap if not disturbed else max(a.drain_cap, 45))
        self.ops_phase = t_ops
        violations, notes, stats = self.history.check()
        if self.crashed:
            from model import Violation
            violations.append(Violation("no-5xx", "a consumer thread crashed (see above)"))
        self.report(violations, notes, stats, drain_s, rounds)
        return violations

    def report(self, violations, notes, stats, drain_s, rounds):
        h = self.history
        faults = dict(self.proxy.faults) if self.proxy else {}
        self.say(f"{len(h.calls)} calls ({stats.get('deliveries', 0)} deliveries, {len(h.sends)} messages sent) "
                 f"in {self.ops_phase:.1f}s + drain {drain_s:.1f}s ({rounds} rounds); "
                 f"faults injected {sum(faults.values())} {faults if faults else ''}; kills {self.kills}; "
                 f"broker requests via proxy {self.proxy.requests if self.proxy else 'n/a'}")
        interesting = {k: v for k, v in sorted(stats.items()) if k.startswith("code ") or not k.startswith(("op ", "outcome "))}
        self.say("answers: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items()) if k.startswith("outcome ")))
        if interesting:
            self.say("counts: " + "; ".join(f"{k}={v}" for k, v in interesting.items()))
        by = {}
        for v in violations:
            by.setdefault(v.inv, []).append(v)
        for inv in INVARIANTS:
            n = len(by.get(inv, []))
            print(f"  {'FAIL' if n else 'ok  '} {inv}" + (f": {n} violation(s)" if n else ""), flush=True)
        for inv, vs in by.items():
            for v in vs[: self.args.show]:
                print(f"  VIOLATION [{inv}] seed {self.seed}: {v.text}", flush=True)
                for c in v.calls[:4]:
                    if c is not None:
                        print(f"      {c.brief(h.t0)}", flush=True)
            if len(vs) > self.args.show:
                print(f"      ... and {len(vs) - self.args.show} more [{inv}]", flush=True)
        nb = {}
        for n in notes:
            nb.setdefault(n.inv, []).append(n)
        for inv, ns in nb.items():
            print(f"  note [{inv}]: {len(ns)}; first: {ns[0].text}", flush=True)
        with open(os.path.join(self.work, "violations.txt"), "w") as f:
            for v in violations:
                f.write(f"[{v.inv}] {v.text}\n")
                for c in v.calls[:6]:
                    if c is not None:
                        f.write(f"    {c.brief(h.t0)} {c.msg or ''}\n")
        with open(os.path.join(self.work, "faults.log"), "w") as f:
            for st, en, what in sorted(h.fault_windows + h.kill_windows):
                f.write(f"{st - h.t0:8.3f}-{(en or st) - h.t0:8.3f} {what}\n")
        if self.proxy is not None:
            write_trace(os.path.join(self.work, "broker-calls.log"), list(self.proxy.trace), h.t0)
        log = os.path.join(self.work, "calls.log")
        with open(log, "w") as f:
            for c in sorted(h.calls, key=lambda c: c.ts):
                f.write(c.brief(h.t0) + (f" {c.msg}" if c.msg and c.outcome != "ok" else "") + "\n")
        if violations:
            print(f"  operation log tail (whole log: {log}):", flush=True)
            for c in (sorted(h.calls, key=lambda c: c.te or c.ts)[-self.args.tail:] if self.args.tail > 0 else []):
                print(f"      {c.brief(h.t0)}", flush=True)
            print(f"  seed {self.seed} FAILED; replay: {replay_command(self.args, self.seed, self)}", flush=True)


def replay_command(args, seed, run=None):
    parts = [f"tests/checker/driver.py --broker {args.broker}", f"--seed {seed}",
             f"--seconds {args.seconds}", f"--ops {args.ops}"]
    if run is not None:
        parts.append(f"--consumers {run.consumers} --profile {run.profile} --topology {run.topology}")
    if args.broker == "engine":
        parts.append("--engine-url URL")
    return " ".join(parts)


TIE = iter(range(10**12))


def run_seed(args, seed):
    r = Run(args, seed)
    try:
        v = r.execute()
    except Exception:
        r.say(f"run aborted:\n{traceback.format_exc()}")
        from model import Violation
        v = [Violation("no-5xx", "the run could not complete (see the trace above)")]
        r.consumers = r.consumers
    finally:
        r.shutdown()
    failed = {x.inv for x in v}
    if not failed and not args.keep:
        shutil.rmtree(r.work, ignore_errors=True)
    return r, failed


def shrink(args, seed, failed, run):
    """Re-run the failing seed smaller (fewer ops, fewer consumers) while the same invariant
    still fails; reports the smallest configuration that did."""
    budget_end = now() + args.shrink_seconds
    target = sorted(failed)[0]
    best = (run.consumers, args.ops, args.seconds)
    ops = max(40, min(args.ops, len(run.history.calls)) // 2)
    consumers = run.consumers
    secs = max(5, args.seconds // 2)
    while now() < budget_end and ops >= 40:
        a = argparse.Namespace(**vars(args))
        a.ops, a.consumers, a.seconds = ops, consumers, secs
        a.profile, a.topology = run.profile, run.topology
        print(f"== shrink: seed {seed} with --ops {ops} --consumers {consumers} --seconds {secs}", flush=True)
        r, f = run_seed(a, seed)
        if target in f:
            best = (consumers, ops, secs)
            ops //= 2
            consumers = max(1, consumers - 1)
            secs = max(5, secs // 2)
        else:
            break
    print(f"== shrink result for [{target}] seed {seed}: --consumers {best[0]} --ops {best[1]} --seconds {best[2]} "
          f"--profile {run.profile} --topology {run.topology}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--broker", choices=["embedded", "engine"], default="embedded")
    p.add_argument("--bin", default=os.path.join(HERE, "..", "..", "target", "debug", "queen-sqs-host"))
    p.add_argument("--engine-url", help="the Queen engine (engine mode)")
    p.add_argument("--engine-pid", help="the engine's pid: checked to be the one listening")
    p.add_argument("--seed", type=int, action="append", help="a seed to run (repeatable)")
    p.add_argument("--seeds", help="comma-separated seeds")
    p.add_argument("--fresh", action="store_true", help="also one fresh random seed (printed)")
    p.add_argument("--seconds", type=int, default=20, help="operation phase per seed")
    p.add_argument("--ops", type=int, default=100000, help="operations per seed at most")
    p.add_argument("--consumers", type=int, default=0, help="concurrent consumers (default: from the seed, 2-5)")
    p.add_argument("--profile", choices=["auto"] + PROFILES, default="auto")
    p.add_argument("--topology", choices=["auto", "proxy", "inproc"], default="auto")
    p.add_argument("--big", type=int, default=4, help="near-maximum-size messages per seed at most")
    p.add_argument("--big-rate", type=float, default=0.04)
    p.add_argument("--long-delays", type=int, default=1, help="proxy delays past the 30 s pop lease per seed")
    p.add_argument("--delete-queues", action="store_true", default=True)
    p.add_argument("--no-delete-queues", dest="delete_queues", action="store_false")
    p.add_argument("--drain-cap", type=float, default=30)
    p.add_argument("--shrink", action="store_true", help="shrink a failing seed")
    p.add_argument("--shrink-seconds", type=int, default=120)
    p.add_argument("--show", type=int, default=3, help="violations shown per invariant")
    p.add_argument("--tail", type=int, default=30, help="operation log lines shown on failure")
    p.add_argument("--keep", action="store_true", help="keep the work directory of a passing seed")
    p.add_argument("--workdir", default=None)
    args = p.parse_args(argv)
    if args.broker == "engine" and not args.engine_url:
        p.error("--engine-url is required with --broker engine")
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        p.error(f"no host binary at {args.bin}")
    # One copy of the binary for the whole process: a rebuild elsewhere cannot change it
    # under a restart.
    args.workdir = args.workdir or tempfile.mkdtemp(prefix="queen-sqs-checker-")
    os.makedirs(args.workdir, exist_ok=True)
    args.bin_copy = os.path.join(args.workdir, "queen-sqs-host")
    shutil.copy2(args.bin, args.bin_copy)
    seeds = list(args.seed or [])
    if args.seeds:
        seeds += [int(x) for x in args.seeds.split(",") if x.strip()]
    if args.fresh or not seeds:
        fresh = random.SystemRandom().randrange(10**6, 10**9)
        print(f"fresh seed: {fresh}", flush=True)
        seeds.append(fresh)
    print(f"seeds: {', '.join(map(str, seeds))} (broker {args.broker})", flush=True)
    passed = failed_n = 0
    failures = []
    total_calls = 0
    t0 = now()
    for seed in seeds:
        r, failed = run_seed(args, seed)
        total_calls += len(r.history.calls)
        passed += len(INVARIANTS) - len(failed)
        failed_n += len(failed)
        if failed:
            failures.append((seed, sorted(failed), r))
            if args.shrink:
                shrink(args, seed, failed, r)
    print(f"== {args.broker}: {len(seeds)} seeds, {total_calls} calls in {now() - t0:.0f}s", flush=True)
    for seed, inv, r in failures:
        print(f"== FAILED seed {seed} [{', '.join(inv)}]: {replay_command(args, seed, r)}", flush=True)
    print(f"{passed} passed, {failed_n} failed", flush=True)
    return 1 if failed_n else 0


if __name__ == "__main__":
    sys.exit(main())
