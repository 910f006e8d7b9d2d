"""A reference model of what Amazon SQS promises, standard and FIFO, and the checks that
compare a recorded history of real calls against it.

The driver records every call it makes (what it sent, when it started and ended by the
monotonic clock, and what came back); nothing is checked while the run is going. After the
run (and the drain that follows it) `History.check()` replays the whole history against the
model. Checking after the fact means no check ever races the recording of a concurrent
answer: a receive that ended before another began is always known when the later one is
judged.

What "a call happened at time t" means: the server handled it at some instant inside
[start, end] of the client's call. Every bound below is derived from that, plus MARGIN for
the broker's timers; a check fires only when no instant inside the intervals could make the
history legal.

The promises (one id per invariant, used in reports):

  no-loss          a send answered with a MessageId is eventually received, deleted,
                   dead-lettered, purged, or its queue deleted
  no-5xx           a valid request gets no 5xx: ServiceUnavailable (503) only while faults are
                   injected or the host is being killed; InternalError (500) never; and no
                   dropped connection or time-out without a fault
  valid-accepted   a valid request to a live queue is not refused (a 4xx other than a throttle
                   or the answers the request's own state explains)
  content          bodies and message attributes round-trip byte-exact; MD5OfBody and
                   MD5OfMessageAttributes match, on send and on receive; no unknown message
  delete-final     a successful DeleteMessage of the current delivery, made while that
                   delivery's visibility was still running and no other delivery of the
                   message overlapped it, is followed by no later delivery of the message
  receive-count    ApproximateReceiveCount equals the deliveries the checker saw (exactly when
                   no fault, kill or unanswered receive could have hidden one; never lower)
  dead-letter      a message reaches its DLQ only after maxReceiveCount deliveries, is never
                   delivered from its source more than maxReceiveCount times, and its
                   dead-letter copy names the original (queen.originalMessageId)
  delay-once       DelaySeconds (queue or message) holds a message back once, at send: never
                   delivered before it, and a redelivery is not delayed again
  receivable       on a standard queue, a long poll does not answer empty while a message has
                   certainly been visible for LIVENESS_SLACK seconds
  fifo-group       FIFO: no two receives hold messages of one group at once, and a message
                   is delivered in the group it was sent in
  fifo-order       FIFO: a group's messages are delivered in send order
  fifo-dedup       FIFO: one message per deduplication id in the 5-minute window, and a
                   duplicate send answers the original MessageId
  queue-lifecycle  no delivery of a purged message after the purge answered, none of a
                   deleted queue's messages; a message shows up only in its queue, its DLQ, or
                   back in its queue after a move task
  visibility       (a note on standard queues, where SQS allows duplicates) no second delivery
                   of a message while a first delivery's visibility timeout is running

A standard message whose ChangeMessageVisibility had an unknown outcome (its answer lost to a
fault) may be delivered once more than the rules above allow: the broker may carry out that
change after the timer it names has fired, which schedules the copy a second time
(docs/divergences.md, "a visibility change that reaches the broker late"). Its later
deliveries are judged as duplicates (a note), not as violations.

Notes are printed but do not fail a run.
"""

from __future__ import annotations

import hashlib
import struct
import threading
import time
from collections import defaultdict

# The MessageId the released engine gives a duplicate it does not name.
NIL_ID = "00000000-0000-0000-0000-000000000000"
# Slack for the broker's timers and the scheduler of a loaded 2-core machine: a lower bound
# (e.g. "not visible before the deadline") is only enforced MARGIN before the bound.
MARGIN = 0.5
# A message certainly visible for this long must be returned by a long poll (standard).
LIVENESS_SLACK = 2.5
# How long after a fault a hidden hold (a pop whose answer was lost) may keep a message.
HIDDEN_HOLD = 31.0

INVARIANTS = [
    "no-loss", "no-5xx", "valid-accepted", "content", "delete-final", "receive-count",
    "dead-letter", "delay-once", "receivable", "fifo-group", "fifo-order", "fifo-dedup",
    "queue-lifecycle",
]
NOTES = ["visibility", "receive-count-note", "stats"]

THROTTLE_CODES = {
    "RequestThrottled", "ThrottlingException", "Throttling", "TooManyRequestsException",
    "ThrottledException", "SlowDown", "KmsThrottled",
}


def now() -> float:
    return time.monotonic()


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def md5_of_body(body: str) -> str:
    return md5_hex(body.encode("utf-8"))


def md5_of_attributes(attrs: dict | None) -> str | None:
    """AWS's MD5OfMessageAttributes: names sorted; for each, length-prefixed name, type,
    a transport byte (1 string/number, 2 binary) and the length-prefixed value."""
    if not attrs:
        return None
    buf = bytearray()
    for name in sorted(attrs):
        a = attrs[name]
        dt = a["DataType"]
        nb = name.encode("utf-8")
        tb = dt.encode("utf-8")
        buf += struct.pack(">I", len(nb)) + nb
        buf += struct.pack(">I", len(tb)) + tb
        if dt.startswith("Binary"):
            v = a["BinaryValue"]
            if isinstance(v, str):
                v = v.encode("utf-8")
            buf += b"\x02" + struct.pack(">I", len(v)) + bytes(v)
        else:
            v = a["StringValue"].encode("utf-8")
            buf += b"\x01" + struct.pack(">I", len(v)) + v
    return md5_hex(bytes(buf))


def attributes_size(attrs: dict | None) -> int:
    """What SQS counts of the attributes against MaximumMessageSize."""
    n = 0
    for name, a in (attrs or {}).items():
        n += len(name.encode()) + len(a["DataType"].encode())
        if "BinaryValue" in a:
            n += len(a["BinaryValue"])
        else:
            n += len(a["StringValue"].encode())
    return n


def normalise_attrs(attrs: dict | None) -> dict:
    out = {}
    for name, a in (attrs or {}).items():
        if "BinaryValue" in a:
            v = a["BinaryValue"]
            out[name] = (a["DataType"], bytes(v) if not isinstance(v, str) else v.encode())
        else:
            out[name] = (a["DataType"], a.get("StringValue"))
    return out


def error_code(code: str | None) -> str | None:
    if not code:
        return code
    for p in ("AWS.SimpleQueueService.", "com.amazonaws.sqs#", "com.amazon.coral.service#"):
        if code.startswith(p):
            code = code[len(p):]
    return code


# --------------------------------------------------------------------------------------
# Recorded events. Outcome is "ok" (answered success), "err" (answered an AWS error: the
# request was refused and did nothing, except 5xx, which are treated as unknown), or
# "unknown" (no answer, a 5xx, or a cut connection: it may or may not have happened).


class Call:
    __slots__ = ("seq", "op", "qkey", "ts", "te", "outcome", "status", "code", "msg",
                 "consumer", "extra")

    def __init__(self, op, qkey, consumer):
        self.seq = 0
        self.op = op
        self.qkey = qkey
        self.consumer = consumer
        self.ts = now()
        self.te = None
        self.outcome = None
        self.status = None
        self.code = None
        self.msg = None
        self.extra = {}

    def brief(self, t0: float) -> str:
        s = f"#{self.seq} {self.ts - t0:8.3f}-{(self.te or self.ts) - t0:8.3f} c{self.consumer} {self.op} {self.qkey[0] if self.qkey else '-'}"
        if self.qkey and self.qkey[1]:
            s += f"@{self.qkey[1]}"
        s += f" -> {self.outcome}"
        if self.status:
            s += f" {self.status}"
        if self.code:
            s += f" {self.code}"
        ex = self.extra.get("brief")
        if ex:
            s += f" [{ex}]"
        return s


class Send:
    """One message sent (a SendMessage, or one entry of a batch)."""
    __slots__ = ("token", "qkey", "call", "body_sha", "body_len", "body_small", "attrs",
                 "group", "dedup", "msg_delay", "outcome", "message_id", "md5_body",
                 "md5_attrs", "seq_no", "code", "delay_lo", "delay_hi", "epoch", "body_md5")

    def __init__(self):
        self.message_id = None
        self.md5_body = None
        self.md5_attrs = None
        self.seq_no = None
        self.code = None
        self.outcome = None


class Delivery:
    __slots__ = ("call", "copy", "msg", "handle", "count", "vt", "index_in_recv",
                 "deletes", "cmvs", "raw_attrs", "k", "drain")

    def __init__(self):
        self.deletes = []
        self.cmvs = []
        self.k = 0
        self.drain = False

    @property
    def rs(self):
        return self.call.ts

    @property
    def re(self):
        return self.call.te


class Copy:
    """A message as one queue holds it: its home copy, a dead-letter copy, a moved copy."""
    __slots__ = ("qkey", "message_id", "send", "origin", "deliveries", "first_seen")

    def __init__(self, qkey, message_id, send, origin):
        self.qkey = qkey
        self.message_id = message_id
        self.send = send
        self.origin = origin  # "home" | "dlq" | "moved"
        self.deliveries = []
        self.first_seen = None


class QueueInfo:
    """What the driver configured; the model reads it."""

    def __init__(self, name, inc, fifo, vt, delay, max_size, redrive=None, is_dlq=False):
        self.name = name
        self.inc = inc
        self.fifo = fifo
        self.vt = vt
        self.delays = [(-1e18, delay)]  # (time the change was answered, delay)
        self.delay_changes = []  # (ts, te, old, new)
        self.max_size = max_size
        self.redrive = redrive  # (dlq qkey, maxReceiveCount)
        self.is_dlq = is_dlq
        self.sources = []
        self.created = now()
        self.deleted = None  # (ts, te, outcome)

    @property
    def key(self):
        return (self.name, self.inc)

    def delay_bounds(self, ts, te):
        """Queue DelaySeconds a send made in [ts, te] got: (lowest, highest) possible, with
        a change counted as uncertain from its start until 1.2 s (the record cache) after."""
        lo = hi = None
        cur = self.delays[0][1]
        for t, d in self.delays:
            if t <= ts:
                cur = d
        lo = hi = cur
        for cts, cte, old, new in self.delay_changes:
            if cts <= te and cte + 1.2 >= ts:
                lo = min(lo, old, new)
                hi = max(hi, old, new)
        return lo, hi


class Violation:
    def __init__(self, inv, text, t=None, calls=()):
        self.inv = inv
        self.text = text
        self.t = t
        self.calls = list(calls)


class History:
    """Everything recorded in one run, and the checks."""

    def __init__(self, broker: str, run_id: str):
        self.lock = threading.Lock()
        self.broker = broker
        self.run_id = run_id
        self.t0 = now()
        self.calls: list[Call] = []
        self.sends: dict[str, Send] = {}
        self.queues: dict[tuple, QueueInfo] = {}
        self.fault_windows: list[list] = []  # [start, end or None, what]
        self.kill_windows: list[list] = []
        self.purges = defaultdict(list)  # qkey -> [Call]
        self.move_tasks = defaultdict(list)  # dlq qkey -> [Call]
        self.dedup_epoch = defaultdict(int)  # qkey -> epoch (bumped by a purge)
        self.drain_started = None
        self.seq = 0

    # -- recording (thread-safe) ---------------------------------------------------------

    def add_queue(self, q: QueueInfo):
        with self.lock:
            self.queues[q.key] = q

    def begin(self, op, qkey, consumer) -> Call:
        c = Call(op, qkey, consumer)
        with self.lock:
            self.seq += 1
            c.seq = self.seq
            self.calls.append(c)
        return c

    def end(self, c: Call, outcome, status=None, code=None, msg=None):
        c.te = now()
        c.outcome = outcome
        c.status = status
        c.code = error_code(code)
        c.msg = msg

    def add_send(self, s: Send):
        with self.lock:
            self.sends[s.token] = s

    def fault_begin(self, what) -> list:
        w = [now(), None, what]
        with self.lock:
            self.fault_windows.append(w)
        return w

    def fault_end(self, w):
        w[1] = now()

    def kill_begin(self, what="kill -9 host"):
        w = [now(), None, what]
        with self.lock:
            self.kill_windows.append(w)
        return w

    # -- helpers for the checks ----------------------------------------------------------

    def _disturbed(self, a, b, pad=0.5):
        """A fault or a kill overlapped [a, b]?"""
        for s, e, _ in self.fault_windows:
            if s <= b + pad and (e is None or e >= a - pad):
                return True
        for s, e, _ in self.kill_windows:
            if s <= b + pad and (e is None or e + 1.0 >= a - pad):
                return True
        return False

    def check(self) -> tuple[list[Violation], list[Violation], dict]:
        return Checker(self).run()


class Checker:
    def __init__(self, h: History):
        self.h = h
        self.v: list[Violation] = []
        self.notes: list[Violation] = []
        self.stats = defaultdict(int)
        self.copies: dict[tuple, Copy] = {}  # (qkey, message_id) -> Copy
        self.copies_of: dict[str, list[Copy]] = defaultdict(list)  # token -> copies
        self.deliveries: list[Delivery] = []
        self.by_handle: dict[str, Delivery] = {}
        self.unknown_receives = defaultdict(list)  # qkey -> [Call]
        self.empty_polls = []

    def bad(self, inv, text, calls=()):
        self.v.append(Violation(inv, text, calls=calls))

    def note(self, inv, text, calls=()):
        self.notes.append(Violation(inv, text, calls=calls))

    def rel(self, t):
        return f"{t - self.h.t0:.3f}s"

    # -- the run -------------------------------------------------------------------------

    def run(self):
        h = self.h
        calls = sorted(h.calls, key=lambda c: c.ts)
        for c in calls:
            if c.te is None:  # never finished (a thread given up on): unknown
                c.te = now()
                c.outcome = c.outcome or "unknown"
        self.check_answers(calls)
        self.check_sends()
        self.build_deliveries(calls)
        self.attach_settles(calls)
        self.check_deliveries()
        self.check_delete_final()
        self.check_fifo()
        self.check_dedup()
        self.check_receivable()
        self.check_no_loss()
        for c in calls:
            self.stats[f"op {c.op}"] += 1
            self.stats[f"outcome {c.outcome}"] += 1
            if c.code:
                self.stats[f"code {c.op} {c.code}"] += 1
        return self.v, self.notes, dict(self.stats)

    # -- no-5xx / valid-accepted ---------------------------------------------------------

    def queue_gone(self, qkey, t):
        q = self.h.queues.get(qkey)
        return q is not None and q.deleted is not None and q.deleted[0] <= t

    def check_answers(self, calls):
        h = self.h
        for c in calls:
            if c.extra.get("derived"):
                continue
            if c.status is not None and c.status >= 500:
                disturbed = h._disturbed(c.ts, c.te)
                if c.status == 503 and c.code in ("ServiceUnavailable", None):
                    if not disturbed:
                        self.bad("no-5xx", f"{c.op} answered 503 ServiceUnavailable with no fault injected and no kill", [c])
                    else:
                        self.stats["503 under faults"] += 1
                elif c.code in THROTTLE_CODES:
                    self.stats["throttled"] += 1
                else:
                    near = self.faults_near(c)
                    self.bad("no-5xx", f"{c.op} answered {c.status} {c.code}: {str(c.msg)[:400]}"
                             + (f" (broker calls meeting a fault meanwhile: {near})" if near else " (no fault injected meanwhile)"), [c])
            elif c.outcome == "unknown" and c.status is None:
                if not h._disturbed(c.ts, c.te):
                    self.bad("no-5xx", f"{c.op} got no answer ({c.msg}) with no fault injected and no kill", [c])
            elif c.outcome == "err":
                self.check_refusal(c)
            elif c.code in THROTTLE_CODES or c.status == 429:
                self.stats["throttled"] += 1

    def faults_near(self, c: Call):
        out = []
        for st, en, what in self.h.fault_windows:
            if st <= c.te and (en is None or en >= c.ts):
                out.append(what)
        for st, en, what in self.h.kill_windows:
            if st <= c.te + 0.5 and (en is None or en + 1.0 >= c.ts):
                out.append(what)
        return "; ".join(out[:4])

    def check_refusal(self, c: Call):
        code = c.code
        if code in THROTTLE_CODES or c.status == 429:
            self.stats["throttled"] += 1
            return
        gone = self.queue_gone(c.qkey, c.te) if c.qkey else False
        if code in ("QueueDoesNotExist", "NonExistentQueue") and gone:
            return
        allowed = {
            "PurgeQueue": {"PurgeQueueInProgress"},
            "CreateQueue": {"QueueDeletedRecently"},
            "StartMessageMoveTask": {"UnsupportedOperation", "ResourceNotFoundException", "InvalidParameterValue"},
            "ListMessageMoveTasks": {"ResourceNotFoundException"},
            "ChangeMessageVisibility": {"MessageNotInflight", "ReceiptHandleIsInvalid", "InvalidParameterValue"},
            # InvalidParameterValue: a FIFO handle whose visibility ended ("The receipt
            # handle has expired.", as SQS answers it).
            "DeleteMessage": {"ReceiptHandleIsInvalid", "InvalidParameterValue"},
        }.get(c.op, set())
        if code in allowed:
            # Judged per delivery later (a refusal of a live current handle is a defect).
            return
        if c.op == "DeleteQueue" and code in ("QueueDoesNotExist", "NonExistentQueue"):
            return
        self.bad("valid-accepted", f"{c.op} refused: {c.status} {code}: {str(c.msg)[:200]}", [c])

    # -- sends ---------------------------------------------------------------------------

    def check_sends(self):
        for s in self.h.sends.values():
            if s.outcome == "ok":
                if s.md5_body != s.body_md5:
                    self.bad("content", f"SendMessage answered MD5OfMessageBody {s.md5_body}, expected {s.body_md5} (token {s.token})", [s.call])
                want = md5_of_attributes(s.attrs)
                if (s.md5_attrs or None) != want:
                    self.bad("content", f"SendMessage answered MD5OfMessageAttributes {s.md5_attrs}, expected {want} (token {s.token})", [s.call])
            if s.outcome == "err" and s.code not in THROTTLE_CODES:
                self.stats["sends refused"] += 1

    # -- deliveries ----------------------------------------------------------------------

    def build_deliveries(self, calls):
        h = self.h
        for c in calls:
            if c.op != "ReceiveMessage":
                continue
            if c.outcome == "unknown":
                self.unknown_receives[c.qkey].append(c)
                continue
            if c.outcome != "ok":
                continue
            msgs = c.extra.get("messages") or []
            if not msgs and c.extra.get("wait", 0) >= 1:
                self.empty_polls.append(c)
            for i, m in enumerate(msgs):
                self.stats["deliveries"] += 1
                d = self.make_delivery(c, i, m)
                if d is not None:
                    self.deliveries.append(d)
                    if d.handle in self.by_handle:
                        self.note("visibility", f"two deliveries answered the same receipt handle ({d.msg.token})", [c, self.by_handle[d.handle].call])
                    self.by_handle[d.handle] = d

    def make_delivery(self, c: Call, i: int, m: dict):
        h = self.h
        body = m.get("Body", "")
        token = body.split("|", 1)[0] if "|" in body[:80] else None
        s = h.sends.get(token) if token else None
        if s is None:
            self.bad("content", f"received a body naming no message this run sent: {body[:80]!r} (MessageId {m.get('MessageId')})", [c])
            return None
        # Content.
        raw = body.encode("utf-8")
        sha = hashlib.sha256(raw).hexdigest()
        if sha != s.body_sha:
            self.bad("content", f"body of {token} changed in transit: sent {s.body_len} bytes, got {len(raw)} (first bytes {body[:60]!r} vs {s.body_small[:60] if s.body_small else '?'!r})", [c, s.call])
        if m.get("MD5OfBody") != md5_hex(raw):
            self.bad("content", f"MD5OfBody {m.get('MD5OfBody')} does not match the received body of {token}", [c])
        got_attrs = m.get("MessageAttributes")
        if normalise_attrs(got_attrs) != normalise_attrs(s.attrs):
            self.bad("content", f"message attributes of {token} changed: sent {sorted((s.attrs or {}).keys())}, got {sorted((got_attrs or {}).keys())} / {str(normalise_attrs(got_attrs))[:200]} vs {str(normalise_attrs(s.attrs))[:200]}", [c, s.call])
        if m.get("MD5OfMessageAttributes") != md5_of_attributes(got_attrs):
            self.bad("content", f"MD5OfMessageAttributes {m.get('MD5OfMessageAttributes')} does not match the received attributes of {token}", [c])
        if s.outcome == "err" and s.code not in THROTTLE_CODES and (s.call.status or 0) < 500:
            self.bad("valid-accepted", f"{token} was delivered although its send was refused ({s.code})", [c, s.call])

        attrs = m.get("Attributes") or {}
        mid = m.get("MessageId")
        qkey = c.qkey
        copy = self.copies.get((qkey, mid))
        if copy is None:
            copy = self.new_copy(c, s, qkey, mid, attrs)
            if copy is None:
                return None
        d = Delivery()
        d.call = c
        d.copy = copy
        d.msg = s
        d.handle = m.get("ReceiptHandle")
        d.raw_attrs = attrs
        d.drain = bool(c.extra.get("drain"))
        try:
            d.count = int(attrs.get("ApproximateReceiveCount"))
        except (TypeError, ValueError):
            d.count = None
        vt = c.extra.get("vt")
        if vt is None:
            vt = h.queues[qkey].vt
        d.vt = vt
        d.index_in_recv = i
        copy.deliveries.append(d)
        d.k = len(copy.deliveries)
        return d

    def new_copy(self, c, s: Send, qkey, mid, attrs):
        h = self.h
        q = h.queues.get(qkey)
        home = s.qkey
        hq = h.queues.get(home)
        prior = self.copies_of[s.token]
        if qkey == home:
            home_copies = [p for p in prior if p.qkey == home]
            if not home_copies:
                origin = "home"
                if s.message_id is not None and s.message_id != mid and s.dedup is None:
                    # A first sight of a copy moved back from the dead-letter queue, which
                    # deliveries the checker never saw answered took it to (seed 325).
                    moves = [m for m in h.move_tasks.get(hq.redrive[0], []) if m.outcome != "err" and m.ts < c.te] if hq and hq.redrive else []
                    if moves and self.tainted(home, s.call.ts, c.ts):
                        origin = "moved"
                    else:
                        self.bad("queue-lifecycle", f"{s.token} delivered under MessageId {mid}, its send answered {s.message_id}", [c, s.call])
            else:
                dlq_copies = [p for p in prior if hq.redrive and p.qkey == hq.redrive[0]]
                moves = [m for m in h.move_tasks.get(hq.redrive[0], []) if m.outcome != "err" and m.ts < c.te] if hq.redrive else []
                # Dead-lettered by a receive the checker never saw answer it (the copy was
                # moved back before anyone received it from the dead-letter queue). Counted
                # by what the endpoint said as well: a receive count above the deliveries
                # seen is deliveries the checker did not see answered (seed 321).
                def receives(p):
                    counted = [d.count for d in p.deliveries if isinstance(d.count, int)]
                    return max([len(p.deliveries)] + counted)
                # Or by deliveries hidden from the checker altogether (a fault, a kill, an
                # unanswered receive since the send: seed 321 again).
                unseen_dlq = bool(hq.redrive) and (
                    max(receives(p) for p in home_copies) >= hq.redrive[1]
                    or self.tainted(home, s.call.ts, c.ts))
                if moves and (dlq_copies or unseen_dlq):
                    origin = "moved"
                else:
                    self.bad("queue-lifecycle", f"{s.token} delivered from its queue under a second MessageId {mid} (first {home_copies[0].message_id}) with no move task to explain it", [c, s.call])
                    origin = "dup"
        elif hq is not None and hq.redrive and qkey == hq.redrive[0]:
            origin = "dlq"
            # The id the send was answered, or the first home copy's; a message whose send
            # went unanswered and that the checker first saw as a move task's copy (a new
            # MessageId; seed 605) has an original the checker never saw.
            home_first = prior[0].message_id if prior and prior[0].origin == "home" else None
            want = s.message_id or home_first
            orig = attrs.get("queen.originalMessageId")
            if want and orig != want:
                self.bad("dead-letter", f"dead-letter copy of {s.token} names original {orig!r}, its MessageId is {want}", [c])
            src = attrs.get("queen.sourceQueue")
            if src is not None and src != home[0]:
                self.bad("dead-letter", f"dead-letter copy of {s.token} names source {src!r}, not {home[0]}", [c])
        else:
            self.bad("queue-lifecycle", f"{s.token} (sent to {home[0]}@{home[1]}) delivered from {qkey[0]}@{qkey[1]}", [c, s.call])
            return None
        copy = Copy(qkey, mid, s, origin)
        copy.first_seen = c
        self.copies[(qkey, mid)] = copy
        prior.append(copy)
        return copy

    def attach_settles(self, calls):
        for c in calls:
            if c.op in ("DeleteMessage", "ChangeMessageVisibility"):
                d = self.by_handle.get(c.extra.get("handle"))
                if d is None:
                    continue
                (d.deletes if c.op == "DeleteMessage" else d.cmvs).append(c)
        # Judged once every settle is attached: a repeated handle's other entry counts.
        for c in calls:
            if c.op in ("DeleteMessage", "ChangeMessageVisibility"):
                d = self.by_handle.get(c.extra.get("handle"))
                if d is not None:
                    self.judge_settle_refusal(d, c)

    def deadline_lo(self, d: Delivery, upto=None):
        """The earliest the delivery's visibility can end, following the changes answered
        before `upto`; None when a change left it uncertain or released it."""
        lo = d.rs + d.vt
        # A change to 0 by an earlier delivery's handle releases the delivery that holds the
        # message now (docs/divergences.md, "An older receipt handle acts on the message as
        # SQS's does"; checker embedded seed 432).
        for e in d.copy.deliveries:
            if e is d or e.rs >= d.rs:
                continue
            for c in e.cmvs:
                if c.extra.get("v") == 0 and c.outcome != "err" and c.te > d.rs and (upto is None or c.ts < upto):
                    return None
        for c in d.cmvs:
            if upto is not None and c.ts >= upto:
                break
            if c.outcome == "ok":
                v = c.extra.get("v")
                if c.te < lo - MARGIN:
                    if v == 0:
                        return None
                    lo = c.ts + v
                else:
                    return None
            elif c.outcome == "unknown":
                return None
            # a refusal changes nothing
        return lo

    def deadline_hi(self, d: Delivery):
        """The latest the delivery's visibility can end (None: unknown)."""
        hi = d.re + d.vt
        for c in d.cmvs:
            if c.outcome == "ok":
                v = c.extra.get("v")
                if c.ts <= hi:
                    hi = c.te + v
            elif c.outcome == "unknown":
                return None
        return hi

    def judge_settle_refusal(self, d: Delivery, c: Call):
        """A delete or change of the CURRENT delivery while it is in flight must work."""
        if c.outcome != "err" or c.code in THROTTLE_CODES:
            return
        if self.queue_gone(d.copy.qkey, c.te) or self.purged_between(d.copy.qkey, d.rs, c.te):
            return
        later = [x for x in d.copy.deliveries if x.rs > d.rs and x.rs < c.te]
        if later:
            return
        # Another delete, or a change to 0, of this delivery ran first (a repeated handle).
        for o in d.deletes + d.cmvs:
            if o is not c and o.ts <= c.te and (o.op == "DeleteMessage" or o.extra.get("v") == 0) and o.outcome != "err":
                return
        lo = self.deadline_lo(d, upto=c.ts)
        if lo is None:
            return
        # A change of this delivery running at the same time (a repeated handle in one
        # batch, or another consumer) may have shortened the visibility before this one
        # arrived: the earliest it can then have ended is that change's start plus its value.
        for o in d.cmvs:
            if o is not c and o.ts < c.te and o.te > c.ts and o.outcome != "err":
                lo = min(lo, o.ts + (o.extra.get("v") or 0))
        if c.te >= lo - MARGIN:
            return
        if d.vt == 0:
            return
        self.bad("valid-accepted", f"{c.op} of {d.msg.token}'s current delivery (visibility running until >= {self.rel(lo)}) refused {c.code}: {str(c.msg)[:160]}", [c, d.call])

    def purged_between(self, qkey, a, b):
        for p in self.h.purges.get(qkey, []):
            if p.outcome != "err" and p.ts <= b and p.te >= a:
                return True
        return False

    def tainted(self, qkey, a, b):
        """Could a delivery in [a, b] have been hidden from the checker?"""
        if self.h._disturbed(a, b, pad=HIDDEN_HOLD):
            return True
        for c in self.unknown_receives.get(qkey, []):
            if c.ts <= b and c.te >= a - HIDDEN_HOLD:
                return True
        return False

    def check_deliveries(self):
        h = self.h
        for copy in self.copies.values():
            s = copy.send
            q = h.queues[copy.qkey]
            ds = sorted(copy.deliveries, key=lambda d: d.rs)
            copy.deliveries = ds
            dup = False
            created = s.call.ts if copy.origin == "home" else (copy.first_seen.ts - 60 if copy.first_seen else s.call.ts)
            late = None if q.fifo else self.late_change(s)
            for k, d in enumerate(ds, 1):
                d.k = k
                if late is not None and d.rs > late:
                    dup = True
                # Delay: the first delivery of the home copy not before the delay.
                if copy.origin == "home" and k == 1 and s.delay_lo:
                    if d.re < s.call.ts + s.delay_lo - MARGIN:
                        self.bad("delay-once", f"{s.token} delivered {d.re - s.call.ts:.2f}s after its send began, DelaySeconds {s.delay_lo}", [d.call, s.call])
                # Visibility: not while an earlier delivery's timeout runs.
                for e in ds[:k - 1]:
                    if e.re is None or e.re > d.rs:
                        if e.call is not d.call and e.vt > 0:
                            dup = True
                        continue
                    if self.settled_before(e, d.re):
                        continue
                    lo = self.deadline_lo(e, upto=d.re)
                    if lo is None or e.vt == 0:
                        continue
                    self.stats["judged: redeliveries against a running visibility"] += 1
                    if d.re < lo - MARGIN:
                        dup = True
                        text = (f"{s.token} delivered again at {self.rel(d.rs)} while an earlier delivery "
                                f"(received {self.rel(e.rs)}, VisibilityTimeout {e.vt}) was invisible until >= {self.rel(lo)}")
                        if q.fifo:
                            self.bad("fifo-group", text, [d.call, e.call])
                        else:
                            self.note("visibility", text, [d.call, e.call])
                # Receive counts.
                self.check_count(copy, d, k, dup, q)
                # Dead-letter: no more than maxReceiveCount deliveries from the source.
                if q.redrive and copy.origin in ("home", "moved"):
                    mrc = q.redrive[1]
                    if k > mrc:
                        self.bad("dead-letter", f"{s.token} delivered {k} times from {q.name} (maxReceiveCount {mrc}), not dead-lettered", [d.call])
                    elif d.count is not None and d.count > mrc:
                        self.bad("dead-letter", f"{s.token} delivered from {q.name} with ApproximateReceiveCount {d.count} > maxReceiveCount {mrc}", [d.call])
                # Lifecycle: nothing after a purge or a queue delete.
                self.check_lifecycle(copy, d, q)
            if copy.origin == "dlq":
                self.check_dead_lettered(copy)

    def late_change(self, s: Send):
        """When the first ChangeMessageVisibility (to more than 0) of the message began
        whose outcome is unknown; None if there was none. Such a change may reach the broker
        after its timer fired and schedule the copy again."""
        starts = [c.ts for p in self.copies_of[s.token] for d in p.deliveries for c in d.cmvs
                  if c.outcome == "unknown" and c.extra.get("v") != 0]
        return min(starts) if starts else None

    def settled_before(self, e: Delivery, t):
        for c in e.deletes:
            if c.ts < t and c.outcome != "err":
                return True
        return False

    def check_count(self, copy, d, k, dup, q):
        if copy.origin == "dup":
            return
        if d.count is None:
            self.bad("receive-count", f"{copy.send.token} delivered without ApproximateReceiveCount", [d.call])
            return
        base = 0
        if copy.origin == "dlq":
            src = self.source_copy(copy)
            if src is not None:
                base = len([x for x in src.deliveries if x.rs < copy.first_seen.te])
        # Deliveries whose calls overlap may have happened in either order: the count is
        # judged against those certainly before it (lower bound) and those possibly before.
        others = [x for x in copy.deliveries if x is not d]
        before_lo = len([x for x in others if x.re < d.rs])
        before_hi = len([x for x in others if x.rs < d.re])
        expected = base + before_lo + 1
        expected_hi = base + before_hi + 1
        if dup:
            if d.count < 1:
                self.bad("receive-count", f"{copy.send.token} ApproximateReceiveCount {d.count}", [d.call])
            return
        created = copy.send.call.ts if copy.origin == "home" else copy.send.call.ts
        hidden_possible = self.tainted(copy.qkey, created, d.re)
        if copy.origin == "dlq":
            src = self.source_copy(copy)
            if src is not None:
                hidden_possible = hidden_possible or self.tainted(src.qkey, created, d.re)
        if d.count < expected:
            vt0 = any(x.vt == 0 for x in copy.deliveries[:k])
            text = f"{copy.send.token} delivery {k} ({copy.origin} copy in {q.name}) answered ApproximateReceiveCount {d.count}, the checker saw {expected}"
            if self.h.broker == "engine" and vt0:
                self.note("receive-count-note", text + " (engine, a VisibilityTimeout=0 delivery: documented as possibly uncounted when the KV incr is throttled)", [d.call])
            else:
                self.bad("receive-count", text, [d.call])
        elif d.count > expected_hi and not hidden_possible:
            self.bad("receive-count", f"{copy.send.token} delivery {k} ({copy.origin} copy in {q.name}) answered ApproximateReceiveCount {d.count}, the checker saw {expected_hi} deliveries and nothing could have hidden one", [d.call])
        elif d.count > expected_hi:
            self.stats["receive counts above seen (hidden deliveries possible)"] += 1

    def source_copy(self, dlq_copy):
        s = dlq_copy.send
        homes = [p for p in self.copies_of[s.token] if p.qkey == s.qkey and p.first_seen is not None
                 and p.first_seen.ts < dlq_copy.first_seen.te]
        if not homes:
            homes = [p for p in self.copies_of[s.token] if p.qkey == s.qkey]
        return homes[-1] if homes else None

    def check_dead_lettered(self, copy):
        s = copy.send
        hq = self.h.queues[s.qkey]
        mrc = hq.redrive[1]
        src = self.source_copy(copy)
        seen = len([x for x in src.deliveries if x.rs < copy.first_seen.te]) if src else 0
        if seen >= mrc:
            return
        created = s.call.ts
        if self.tainted(s.qkey, created, copy.first_seen.te):
            self.stats["dead-lettered with hidden deliveries possible"] += 1
            return
        self.bad("dead-letter", f"{s.token} reached the DLQ {copy.qkey[0]} after {seen} deliveries (maxReceiveCount {mrc})", [copy.first_seen, s.call])

    def check_lifecycle(self, copy, d, q):
        h = self.h
        if q.deleted and q.deleted[2] == "ok" and d.rs > q.deleted[1] + MARGIN:
            self.bad("queue-lifecycle", f"{copy.send.token} delivered from {q.name}@{q.inc} after DeleteQueue answered", [d.call])
        for p in h.purges.get(copy.qkey, []):
            if p.outcome != "ok":
                continue
            created_before = (copy.origin == "home" and copy.send.call.te < p.ts) or \
                (copy.first_seen is not None and copy.first_seen.te < p.ts)
            if created_before and d.rs > p.te + MARGIN:
                self.bad("queue-lifecycle", f"{copy.send.token} delivered at {self.rel(d.rs)} from {q.name}, purged by a PurgeQueue answered at {self.rel(p.te)}", [d.call, p])

    # -- delete-final --------------------------------------------------------------------

    def check_delete_final(self):
        for copy in self.copies.values():
            for d in copy.deliveries:
                if d.vt == 0:
                    continue
                for c in d.deletes:
                    if c.outcome != "ok":
                        continue
                    # The current delivery: no other delivery of the message began between
                    # this one and the delete's answer, and none overlapped this one.
                    others = [x for p in self.copies_of[copy.send.token] for x in p.deliveries if x is not d]
                    if any(x.rs < c.te and x.re > d.rs for x in others):
                        continue
                    lo = self.deadline_lo(d, upto=c.ts)
                    if lo is None or c.te >= lo - MARGIN:
                        continue
                    fifo = self.h.queues[copy.qkey].fifo
                    # A ChangeMessageVisibility(0) of this delivery racing the delete may push
                    # the copy back after the delete cancelled its timer (timer verdicts never
                    # roll a transaction back): a duplicate, allowed on a standard queue
                    # (docs/divergences.md, "a visibility change racing a delete").
                    racing = [m for m in d.cmvs if m.extra.get("v") == 0 and m.ts < c.te and m.te > c.ts]
                    if racing and not fifo:
                        if any(x.rs > c.te for x in others):
                            self.note("visibility", f"{copy.send.token} delivered after a successful delete that raced a ChangeMessageVisibility(0) of the same delivery ({self.rel(racing[0].ts)})", [c, racing[0]])
                        continue
                    self.stats["judged: deletes of a current delivery"] += 1
                    late = None if fifo else self.late_change(copy.send)
                    for x in others:
                        if x.rs > c.te and late is not None and x.rs > late:
                            self.note("visibility", f"{copy.send.token} delivered at {self.rel(x.rs)} after a successful delete; a visibility change with an unknown outcome began at {self.rel(late)}", [x.call, c])
                            break
                        if x.rs > c.te:
                            extra = ""
                            cmv0 = [m for p in self.copies_of[copy.send.token] for y in p.deliveries for m in y.cmvs if m.extra.get("v") == 0]
                            if cmv0:
                                extra = f" (a ChangeMessageVisibility(0) of this message ran at {self.rel(cmv0[0].ts)})"
                            self.bad("delete-final", f"{copy.send.token} delivered at {self.rel(x.rs)} after DeleteMessage of its current delivery (received {self.rel(d.rs)}) answered success at {self.rel(c.te)}{extra}", [x.call, c, d.call])
                            break

    # -- FIFO ----------------------------------------------------------------------------

    def routed_group(self, s: Send, firsts):
        """The group a FIFO message lives in: a send whose deduplication id an earlier send
        of the queue claimed is pushed into that send's group (src/sqs/dedup.rs), where it
        is a duplicate, or, when the original never landed, delivered there. None when a
        PurgeQueue of unknown outcome makes the claim uncertain."""
        first = firsts.get((s.qkey, s.epoch, s.dedup))
        if first is None:
            return s.group
        # A send of its id in another group that ran at once, or whose claim may have
        # landed late (its outcome unknown), may have claimed it first, whichever call
        # began first (checker embedded seed 575: a batch claimed the id and failed before
        # its push; the send that began before it was routed to the batch's group).
        if any(self.may_have_claimed_first(x, s) for x in self.same_id[(s.qkey, s.epoch, s.dedup)]):
            return None
        if first is s or first.group == s.group:
            return s.group
        if self.unknown_purge(s.qkey, first.call.ts, s.call.te):
            return None
        # A purge that answered while either send ran may have started the ids afresh
        # between them (the epoch only tells purges that answered before a send began).
        if any(p.outcome != "err" and p.ts < s.call.te and p.te > first.call.ts
               for p in self.h.purges.get(s.qkey, [])):
            return None
        # An original whose answer was lost may never have claimed its id: the later send
        # then claimed it for its own group.
        if first.outcome != "ok":
            return None
        # Two sends of one id running at once: either may have claimed it first.
        if first.call.te > s.call.ts:
            return None
        return first.group

    def may_have_claimed_first(self, x: Send, s: Send):
        """Could send x, of another group, have claimed s's deduplication id before s?"""
        if x is s or x.group == s.group or x.call.ts >= s.call.te:
            return False
        claim_by = x.call.te + (HIDDEN_HOLD if x.outcome != "ok" else 0)
        return claim_by > s.call.ts

    def index_dedup_ids(self):
        """The sends of each (queue, purge epoch, deduplication id)."""
        self.same_id = defaultdict(list)
        for s in self.h.sends.values():
            if s.dedup is not None:
                self.same_id[(s.qkey, s.epoch, s.dedup)].append(s)

    def check_fifo(self):
        h = self.h
        self.index_dedup_ids()
        firsts = {}
        for s in sorted(h.sends.values(), key=lambda s: s.call.ts):
            if s.dedup is not None and not (s.outcome == "err" and (s.call.status or 0) < 500):
                firsts.setdefault((s.qkey, s.epoch, s.dedup), s)
        by_group = defaultdict(list)
        for d in self.deliveries:
            q = h.queues[d.copy.qkey]
            if q.fifo:
                g = self.routed_group(d.msg, firsts)
                if g is not None:
                    by_group[(d.copy.qkey, g)].append(d)
        for (qkey, g), ds in by_group.items():
            ds.sort(key=lambda d: d.rs)
            # One holder at a time.
            for i, d in enumerate(ds):
                for e in ds[max(0, i - 400):i]:
                    if e.call is d.call or e.copy is d.copy:
                        continue  # the same receive; the same message (checked above)
                    if e.re > d.rs:
                        continue
                    if self.settled_before(e, d.re) or e.vt == 0:
                        continue
                    lo = self.deadline_lo(e, upto=d.re)
                    if lo is None or self.purged_between(qkey, e.rs, d.re):
                        continue
                    self.stats["judged: FIFO receives against a held group"] += 1
                    if d.re < lo - MARGIN:
                        self.bad("fifo-group", f"group {g} of {qkey[0]}: {d.msg.token} received at {self.rel(d.rs)} (consumer {d.call.consumer}) while {e.msg.token} (received {self.rel(e.rs)} by consumer {e.call.consumer}, VisibilityTimeout {e.vt}) was in flight until >= {self.rel(lo)}", [d.call, e.call])
                        break
        self.check_fifo_own_group()
        # Order within a group: home copies only.
        sends_by_group = defaultdict(list)
        reused = self.reused_dedup_keys()
        for s in h.sends.values():
            q = h.queues.get(s.qkey)
            if q and q.fifo and s.outcome == "ok" and (s.qkey, s.epoch, s.dedup) not in reused:
                sends_by_group[(s.qkey, s.group)].append(s)
        for key, ss in sends_by_group.items():
            ss.sort(key=lambda s: s.call.ts)
            q = h.queues[key[0]]
            members = {id(x) for x in ss}
            for d in by_group.get(key, []):
                if d.copy.origin != "home" or id(d.msg) not in members:
                    continue
                sk = d.msg
                for sj in ss:
                    if sj.call.te >= sk.call.ts:
                        break
                    if sj is sk or self.possibly_removed(sj, d.re, q):
                        continue
                    # Earlier in the same receive, before it: in order.
                    if any(x.msg is sj and x.call is d.call and x.index_in_recv < d.index_in_recv for x in self.deliveries_of(sj)):
                        continue
                    self.bad("fifo-order", f"group {key[1]} of {q.name}: {sk.token} (sent {self.rel(sk.call.ts)}) delivered at {self.rel(d.rs)} while {sj.token} (sent {self.rel(sj.call.ts)}, before it) was neither deleted nor delivered ahead of it", [d.call, sj.call, sk.call])
                    break

    def check_fifo_own_group(self):
        """A FIFO message is delivered in the group it was sent in (its MessageGroupId).
        Only a send that ran at once with another send of its deduplication id, or with one
        whose outcome is unknown, may have been stored in that send's group: the holder of
        the id's claim may have landed after it (docs/divergences.md)."""
        h = self.h
        for d in self.deliveries:
            q = h.queues[d.copy.qkey]
            got = (d.raw_attrs or {}).get("MessageGroupId")
            s = d.msg
            if not q.fifo or got is None or got == s.group:
                continue
            self.stats["judged: FIFO deliveries outside their sent group"] += 1
            excused = any(x.group == got and self.may_have_claimed_first(x, s)
                          for x in self.same_id.get((s.qkey, s.epoch, s.dedup), []))
            if not excused:
                self.bad("fifo-group", f"{s.token} (sent {self.rel(s.call.ts)} in group {s.group}) delivered at {self.rel(d.rs)} in group {got}", [d.call, s.call])

    def deliveries_of(self, s: Send):
        return [x for p in self.copies_of[s.token] for x in p.deliveries]

    def possibly_removed(self, s: Send, t, q):
        """Could the message have left its queue by time t (deleted, dead-lettered, purged,
        its queue deleted)?"""
        ds = self.deliveries_of(s)
        for d in ds:
            for c in d.deletes:
                if c.ts < t and c.outcome != "err":
                    return True
        if q.redrive:
            home = [x for x in ds if x.copy.qkey == s.qkey and x.rs < t]
            if len(home) >= q.redrive[1] or self.tainted(s.qkey, s.call.ts, t):
                return True
            if any(x.copy.origin == "dlq" for x in ds):
                return True
        for p in self.h.purges.get(s.qkey, []):
            if p.outcome != "err" and p.te >= s.call.ts and p.ts < t:
                return True
        if q.deleted and q.deleted[0] < t:
            return True
        return False

    def reused_dedup_keys(self):
        seen = defaultdict(int)
        for s in self.h.sends.values():
            if s.dedup is not None:
                seen[(s.qkey, s.epoch, s.dedup)] += 1
        return {k for k, n in seen.items() if n > 1}

    def unknown_purge(self, qkey, a, b):
        return any(p.outcome == "unknown" and p.ts < b and p.te + HIDDEN_HOLD > a
                   for p in self.h.purges.get(qkey, []))

    def check_dedup(self):
        groups = defaultdict(list)
        for s in self.h.sends.values():
            if s.dedup is not None:
                groups[(s.qkey, s.epoch, s.dedup)].append(s)
        for key, ss in groups.items():
            if len(ss) < 2:
                continue
            self.stats["dedup ids reused"] += 1
            ss.sort(key=lambda s: s.call.ts)
            # A PurgeQueue whose answer was lost may take effect up to HIDDEN_HOLD after it
            # (its broker calls delayed by faults), and a purge starts the ids afresh.
            if self.unknown_purge(key[0], ss[0].call.ts, ss[-1].call.te):
                self.note("stats", f"deduplication id {key[2]!r} of {key[0][0]} reused across a PurgeQueue of unknown outcome")
                continue
            # A purge that answered while a later send ran may have started the ids afresh
            # before it (the epoch only tells purges that answered before a send began;
            # checker embedded seed 411: a batch sent during a purge got a new MessageId).
            # The sends' last answer, not the last-started send's: engine seed 530's send
            # that met the purge started first and answered last (it waited on the claim).
            last_answer = max(s.call.te for s in ss)
            if any(p.outcome != "err" and p.ts < last_answer and p.te > ss[0].call.ts
                   for p in self.h.purges.get(key[0], [])):
                self.note("stats", f"deduplication id {key[2]!r} of {key[0][0]} reused across a PurgeQueue running at a send")
                continue
            delivered = [s for s in ss if any(p.origin == "home" for p in self.copies_of[s.token])]
            if len(delivered) > 1:
                self.bad("fifo-dedup", f"deduplication id {key[2]!r} of {key[0][0]}: {len(delivered)} messages delivered ({', '.join(s.token for s in delivered)})", [s.call for s in delivered])
            ids = {}
            for s in ss:
                if s.outcome == "ok" and s.message_id == NIL_ID and self.h.broker == "engine":
                    # The released engine answered a duplicate without naming the original
                    # (docs/divergences.md, "a duplicate FIFO send the released engine does
                    # not name"): a note, the message being stored once.
                    self.note("stats", f"deduplication id {key[2]!r} of {key[0][0]}: a duplicate answered the nil MessageId (engine)")
                    continue
                if s.outcome == "ok" and s.message_id:
                    ids.setdefault(s.message_id, s)
            first = ss[0]
            if len(ids) > 1:
                # Allowed only when the first send's answer was lost and a later one stored.
                answered = [s for s in ss if s.outcome == "ok"]
                if first.outcome == "ok" or len(ids) > 1 and all(s.call.ts > answered[0].call.te for s in answered[1:]):
                    self.bad("fifo-dedup", f"deduplication id {key[2]!r} of {key[0][0]}: sends answered {len(ids)} MessageIds ({', '.join(ids)})", [s.call for s in ss])

    # -- liveness: standard queues -------------------------------------------------------

    def check_receivable(self):
        h = self.h
        by_queue = defaultdict(list)
        for copy in self.copies.values():
            by_queue[copy.qkey].append(copy)
        # Messages sent but never delivered are candidates too.
        never = defaultdict(list)
        for s in h.sends.values():
            if s.outcome == "ok" and not self.copies_of[s.token]:
                never[s.qkey].append(s)
        for e in self.empty_polls:
            q = h.queues.get(e.qkey)
            if q is None or q.fifo or q.is_dlq:
                continue
            if h._disturbed(e.ts - HIDDEN_HOLD, e.te):
                continue
            purges = [p for p in h.purges.get(e.qkey, []) if p.outcome != "err" and p.ts < e.te]
            if q.deleted and q.deleted[0] < e.te:
                continue
            if any(c.ts < e.te and c.te > e.ts - HIDDEN_HOLD for c in self.unknown_receives.get(e.qkey, [])):
                continue
            self.stats["judged: empty long polls"] += 1
            found = None
            for s in never[e.qkey]:
                v = s.call.te + (s.delay_hi or 0)
                if any(p.te >= s.call.ts for p in purges):
                    continue
                if v + LIVENESS_SLACK < e.ts and s.message_id:
                    found = (s, v, None)
                    break
            if not found:
                for copy in by_queue.get(e.qkey, []):
                    if any(p.te >= copy.send.call.ts for p in purges):
                        continue
                    r = self.visible_since(copy, e, q)
                    if r is not None:
                        found = (copy.send, r[0], r[1])
                        break
            if found:
                s, v, last = found
                inv = "delay-once" if (last is not None and (q.delay_bounds(last.rs, last.re)[1] or 0) > 0) else "receivable"
                what = "never delivered" if last is None else f"last delivered {self.rel(last.rs)} with VisibilityTimeout {last.vt}"
                self.bad(inv, f"a {e.extra.get('wait')} s long poll of {q.name} at {self.rel(e.ts)} answered empty while {s.token} ({what}) was visible since <= {self.rel(v)}", [e] + ([last.call] if last else [s.call]))

    def visible_since(self, copy: Copy, e: Call, q: QueueInfo):
        if copy.origin != "home":
            return None
        s = copy.send
        if s.outcome != "ok":
            return None
        before = [d for d in copy.deliveries if d.rs < e.te]
        if not before:
            # First delivered only after the poll: visible since its send and delay.
            v = s.call.te + (s.delay_hi or 0)
            if s.message_id and v + LIVENESS_SLACK < e.ts:
                return v, None
            return None
        last = before[-1]
        if last.re > e.ts:
            return None  # taken around the poll
        for d in copy.deliveries:
            if d.deletes or any(c.outcome == "unknown" for c in d.cmvs):
                if any(c.ts < e.te for c in d.deletes) or any(c.outcome == "unknown" for c in d.cmvs):
                    return None
        # At maxReceiveCount deliveries the next receive moves it to the dead-letter queue.
        # Counted by the deliveries seen and by the count the last one reported: a receive
        # whose answer a kill cut off delivered it unseen (embedded seed 819 judged a
        # message moved after two deliveries, one unseen, as still visible).
        if q.redrive and (len(before) >= q.redrive[1] or (last.count or 0) >= q.redrive[1]):
            return None
        hi = self.deadline_hi(last)
        if hi is None:
            return None
        if hi + LIVENESS_SLACK < e.ts:
            return hi, last
        return None

    # -- no loss -------------------------------------------------------------------------

    def check_no_loss(self):
        h = self.h
        # Sends sharing a FIFO deduplication id are one message: any of them accounts for all.
        members = defaultdict(list)
        for s in h.sends.values():
            members[(s.qkey, s.epoch, s.dedup) if s.dedup is not None else s.token].append(s)
        for s in h.sends.values():
            if s.outcome != "ok":
                continue
            q = h.queues[s.qkey]
            if q.deleted is not None:
                continue
            group = members[(s.qkey, s.epoch, s.dedup) if s.dedup is not None else s.token]
            if any(self.possibly_gone(x, q) or any(d.drain for d in self.deliveries_of(x)) for x in group):
                continue
            if len(group) > 1 and s is not min(group, key=lambda x: x.call.ts):
                continue
            ds = self.deliveries_of(s)
            where = f"delivered {len(ds)} times, last at {self.rel(ds[-1].rs)} from {ds[-1].copy.qkey[0]}" if ds else "never delivered"
            self.bad("no-loss", f"{s.token} (sent to {q.name} at {self.rel(s.call.ts)}, MessageId {s.message_id}) was not found by the drain and was never deleted ({where})", [s.call] + [d.call for d in ds[-3:]])

    def possibly_gone(self, s: Send, q: QueueInfo):
        for d in self.deliveries_of(s):
            if any(c.outcome != "err" for c in d.deletes):
                return True
        for p in self.h.purges.get(s.qkey, []):
            if p.outcome != "err" and p.te >= s.call.ts:
                return True
        if q.redrive:
            dq = self.h.queues[q.redrive[0]]
            for p in self.h.purges.get(dq.key, []):
                if p.outcome != "err" and p.te >= s.call.ts:
                    return True
        return False

