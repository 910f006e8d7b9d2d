#!/usr/bin/env python3
"""Crash test under load (issue 10): SIGKILL the host while it serves 16 senders and 16
receivers, restart it on the same data directory, and check what SQS promises.

The host (`queen-sqs-host serve`, embedded broker in process) is started and killed by this
script. One standard queue and one FIFO queue (VisibilityTimeout 20 s, longer than a
restart); 12 senders and 12 receivers on the standard queue, 4 and 4 on the FIFO queue.
Every round the load runs a random 1-5 s, the host is SIGKILLed, restarted a moment later
on the same `--data-dir` and port, and the load goes on. At the end the senders stop and the
receivers drain both queues (deleting everything, waiting out the visibility timeout of the
messages left undeleted on purpose), then:

1. every MessageId a send ANSWERED with success was received at least once (a send whose
   answer was lost is never counted as acknowledged; it may or may not show up); and every
   message received and not deleted (left undeleted on purpose, or its delete never reached
   the host) was received again later;
2. no message was held by two live receipt handles: an answered receive at t2 of a message
   an earlier answered receive held (t2 < t1 + VisibilityTimeout - slack, its handle not
   deleted with success before t2). Receive times are taken conservatively: t1 = when the
   earlier call was SENT (its hold can only have begun later), t2 = when the later call's
   answer ARRIVED, and a delete counts from when it was sent. A receive whose answer was
   lost (the host killed under it) holds nothing and is not recorded;
3. FIFO, reported separately: no message of a group received by a call sent after another
   call's answer held messages of that group less than VisibilityTimeout - slack before,
   unless each of those was deleted (a delete whose answer was lost may have landed, so it
   counts here). Calls that overlap in time cannot be ordered and are not compared.

On the FIFO queue a send whose answer was lost is sent again (same group and deduplication
id) until answered, as SDKs retry: the MessageId that answer names must be the one received.

Also reported, not failing the run: a message received again after a delete that answered
success while its handle was live (the delete was lost), and ApproximateReceiveCount not
increasing between two receives of a message.

Exit status: 0 when no acknowledged message was lost and no violation was seen, 1
otherwise, 2 when the harness itself could not run. The report (markdown) goes to stdout;
progress to stderr. On failure the work directory (data dir, host log, events.json with
every send, receive, delete and kill) is kept.

The first start listens on --port (default 0: a port the kernel picks, read back from the
host's start line); every restart reuses that port. After each start the process listening
on the port must be the host this script started (`ss -ltnp`), or the run stops (exit 2).

Usage: crash_under_load.py --host-bin PATH [--rounds 20] [--port 0] [--seed N]
       crash_under_load.py --analyse WORK_DIR/events.json    (the checks again, on a kept run)
"""

import argparse
import collections
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError

REGION = "us-east-1"
HANDLE_SECRET = "crash-test-handle-secret-0123456"  # fixed, 32 characters
VISIBILITY_S = 20
SLACK_S = 1.0
SENDERS = 16
RECEIVERS = 16
FIFO_EVERY = 4  # thread i works on the FIFO queue when i % FIFO_EVERY == FIFO_EVERY - 1
FIFO_GROUPS = 10
UNDELETED_STD = 0.03  # received messages left undeleted (load phase only)
UNDELETED_FIFO = 0.01
SINGLE_SEND = 0.5  # share of SendMessage calls (the rest SendMessageBatch of 2-10)
SINGLE_DELETE = 0.25  # share of receives deleted one by one (the rest DeleteMessageBatch)
OUTSTANDING_CAP = {"std": 3000, "fifo": 1500}  # senders pause above this many undeleted acks


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def outcome_of(e):
    """What a failed call tells: "not_sent" (the connection could not be made: the host was
    down, the request never reached it), "lost" (sent, no answer: the host was killed under
    it, or a timeout; it may have taken effect), "error" (answered with an error).
    Telling the first two apart needs ONE attempt per call (`total_max_attempts` 1: botocore's
    `max_attempts` 1 still retries once, and a call cut by the kill then fails on its retry
    with a connection error, as if it had never been sent)."""
    if isinstance(e, ClientError):
        return "error"
    if isinstance(e, (EndpointConnectionError, ConnectTimeoutError)):
        return "not_sent"
    return "lost"


def error_code(e):
    if isinstance(e, ClientError):
        return e.response.get("Error", {}).get("Code", "?")
    return type(e).__name__


def listening_pids(port):
    """The pids listening on a TCP port (`ss -ltnp`)."""
    try:
        out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True,
                             text=True, timeout=10).stdout
    except Exception:  # noqa: BLE001 - no ss: nothing can be shown to be ours
        return set()
    return {int(p) for p in re.findall(r"pid=(\d+)", out)}


class Host:
    """The host process: started, SIGKILLed and restarted on one data directory."""

    def __init__(self, binary, port, data_dir, log_path):
        self.binary = binary
        self.port = port
        self.data_dir = data_dir
        self.log_path = log_path
        self.proc = None
        self.url = f"http://127.0.0.1:{port}"

    def start(self, timeout=60):
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUEEN_")}
        env["QUEEN_SQS_CREDENTIALS"] = "test:test:"
        env["QUEEN_SQS_HANDLE_SECRET"] = HANDLE_SECRET
        logf = open(self.log_path, "ab")
        logf.write(f"--- start at {time.strftime('%H:%M:%S')} ---\n".encode())
        logf.flush()
        offset = logf.tell()
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", self.data_dir],
            env=env,
            stdout=logf,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        logf.close()
        deadline = time.monotonic() + timeout
        while self.port == 0 and time.monotonic() < deadline:
            # Port 0: the port the host got is on its start line.
            with open(self.log_path, errors="replace") as f:
                f.seek(offset)
                m = re.search(r"endpoint on http://127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                self.url = f"http://127.0.0.1:{self.port}"
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"host exited with {self.proc.returncode} at start; see {self.log_path}")
            time.sleep(0.02)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"host exited with {self.proc.returncode} at start; see {self.log_path}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        pids = listening_pids(self.port)
                        if self.proc.pid not in pids:
                            raise RuntimeError(f"port {self.port} is answered by pids {sorted(pids)}, "
                                               f"not the host this script started ({self.proc.pid})")
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        raise RuntimeError(f"host not healthy within {timeout}s; see {self.log_path}")

    def kill(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


class Books:
    """Everything the load did, with monotonic times relative to the run's start."""

    def __init__(self):
        self.lock = threading.Lock()
        self.t_start = time.monotonic()
        self.incarnation = 0  # host incarnation; bumped at each kill
        self.sends = {}  # body -> {q, group, t0, t1, inc, status, mid, code}
        self.receives = []  # {q, call, mid, handle, body, group, t0, t1, inc, count, left}
        self.calls = collections.Counter()  # (q, op, outcome) -> n
        self.deletes = collections.defaultdict(list)  # handle -> [{t0, t1, ok, code}]
        self.kills = []  # {round, t_kill, t_dead, t_up}
        self.acked_n = collections.Counter()  # q -> acknowledged sends
        self.deleted_n = collections.Counter()  # q -> successful deletes
        self.call_seq = 0
        self.draining = threading.Event()
        self.stop_send = threading.Event()
        self.stop_all = threading.Event()
        self.harness_errors = []

    def now(self):
        return time.monotonic() - self.t_start

    def outstanding(self, q):
        return self.acked_n[q] - self.deleted_n[q]


def make_client(url, read_timeout):
    return boto3.session.Session().client(
        "sqs",
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            connect_timeout=1,
            read_timeout=read_timeout,
            max_pool_connections=4,
        ),
    )


def sender(b, c, url, q, tid, seed):
    """Sends unique bodies. On the FIFO queue a send whose answer was lost is sent again,
    same group and deduplication id, until it is answered, as an SDK retries: the answer
    must then name the MessageId of the copy that is delivered (deduplicated or not)."""
    rng = random.Random(seed * 1000 + tid)
    i = 0
    retry = []  # FIFO entries whose answer was lost
    retry_until = None
    while not b.stop_send.is_set() or (retry and time.monotonic() < retry_until):
        if retry:
            entries, retry = retry, []
            n = len(entries)
        else:
            if b.stop_send.is_set():
                break
            if b.outstanding(q) > OUTSTANDING_CAP[q]:
                time.sleep(0.05)
                continue
            n = 1 if rng.random() < SINGLE_SEND else rng.randint(2, 10)
            entries = []
            for _ in range(n):
                body = f"{q}.s{tid}.{i}." + "x" * rng.randint(0, 200)
                i += 1
                e = {"body": body, "group": None}
                if q == "fifo":
                    e["group"] = f"g{rng.randrange(FIFO_GROUPS)}"
                entries.append(e)
        inc = b.incarnation
        t0 = b.now()
        with b.lock:
            for e in entries:
                s = b.sends.get(e["body"])
                if s is None:
                    b.sends[e["body"]] = {"q": q, "group": e["group"], "t0": t0, "t1": None, "inc": inc,
                                          "status": "pending", "mid": None, "code": None, "attempts": 1}
                else:
                    s["attempts"] += 1
        op = "send" if n == 1 else "send_batch"
        try:
            if n == 1:
                e = entries[0]
                kw = {"QueueUrl": url, "MessageBody": e["body"]}
                if q == "fifo":
                    kw["MessageGroupId"] = e["group"]
                    kw["MessageDeduplicationId"] = e["body"][:128]
                r = c.send_message(**kw)
                ok = {e["body"]: r["MessageId"]}
                failed = {}
            else:
                batch = []
                for j, e in enumerate(entries):
                    x = {"Id": str(j), "MessageBody": e["body"]}
                    if q == "fifo":
                        x["MessageGroupId"] = e["group"]
                        x["MessageDeduplicationId"] = e["body"][:128]
                    batch.append(x)
                r = c.send_message_batch(QueueUrl=url, Entries=batch)
                ok = {entries[int(s["Id"])]["body"]: s["MessageId"] for s in r.get("Successful", [])}
                failed = {entries[int(f["Id"])]["body"]: f.get("Code", "?") for f in r.get("Failed", [])}
        except Exception as ex:  # noqa: BLE001 - every failure is booked
            t1 = b.now()
            status = outcome_of(ex)
            with b.lock:
                for e in entries:
                    s = b.sends[e["body"]]
                    # A retry that could not connect leaves the first attempt's "lost".
                    if not (s["status"] == "lost" and status == "not_sent"):
                        s.update(t1=t1, status=status, code=error_code(ex))
                b.calls[(q, op, status)] += 1
            retrying = retry_until is not None
            if q == "fifo" and (status == "lost" or (retrying and status == "not_sent")):
                with b.lock:
                    for e in entries:
                        b.sends[e["body"]]["retried"] = True
                retry = entries
                if not retrying:
                    retry_until = time.monotonic() + 60
            else:
                retry_until = None
            time.sleep(0.05)
            continue
        t1 = b.now()
        retry_until = None
        with b.lock:
            for body, mid in ok.items():
                b.sends[body].update(t1=t1, status="acked", mid=mid)
            for body, code in failed.items():
                b.sends[body].update(t1=t1, status="error", code=code)
            b.acked_n[q] += len(ok)
            b.calls[(q, op, "ok")] += 1


def receiver(b, c, url, q, tid, seed):
    rng = random.Random(seed * 1000 + 500 + tid)
    undeleted = UNDELETED_FIFO if q == "fifo" else UNDELETED_STD
    while not b.stop_all.is_set():
        inc = b.incarnation
        t0 = b.now()
        try:
            r = c.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=rng.choice([1, 2]),
                MessageSystemAttributeNames=["All"],
            )
        except Exception as ex:  # noqa: BLE001
            with b.lock:
                o = outcome_of(ex)
                b.calls[(q, "receive", o if o != "error" else "error:" + error_code(ex))] += 1
            time.sleep(0.05)
            continue
        t1 = b.now()
        msgs = r.get("Messages", [])
        draining = b.draining.is_set()
        with b.lock:
            b.call_seq += 1
            call = b.call_seq
            b.calls[(q, "receive", "ok" if msgs else "empty")] += 1
            keep = []
            for m in msgs:
                a = m.get("Attributes", {})
                left = (not draining) and rng.random() < undeleted
                b.receives.append({
                    "q": q, "call": call, "mid": m["MessageId"], "handle": m["ReceiptHandle"],
                    "body": m["Body"], "group": a.get("MessageGroupId"),
                    "seq": a.get("SequenceNumber"), "t0": t0, "t1": t1, "inc": inc,
                    "count": int(a.get("ApproximateReceiveCount", "0")), "left": left,
                })
                if not left:
                    keep.append(m)
        if not keep:
            continue
        if rng.random() < SINGLE_DELETE:
            for m in keep:
                d0 = b.now()
                try:
                    c.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
                    st, code = "ok", None
                except Exception as ex:  # noqa: BLE001
                    st, code = outcome_of(ex), error_code(ex)
                book_delete(b, q, m["ReceiptHandle"], d0, b.now(), st, code, "delete")
        else:
            d0 = b.now()
            try:
                r = c.delete_message_batch(
                    QueueUrl=url,
                    Entries=[{"Id": str(j), "ReceiptHandle": m["ReceiptHandle"]} for j, m in enumerate(keep)],
                )
            except Exception as ex:  # noqa: BLE001
                d1 = b.now()
                for m in keep:
                    book_delete(b, q, m["ReceiptHandle"], d0, d1, outcome_of(ex), error_code(ex), "delete_batch")
                continue
            d1 = b.now()
            failed = {int(f["Id"]): f.get("Code", "?") for f in r.get("Failed", [])}
            for j, m in enumerate(keep):
                book_delete(b, q, m["ReceiptHandle"], d0, d1, "error" if j in failed else "ok", failed.get(j),
                            "delete_batch")


def book_delete(b, q, handle, t0, t1, st, code, op):
    """st: "ok", "not_sent", "lost" or "error" (see outcome_of)."""
    with b.lock:
        b.deletes[handle].append({"t0": t0, "t1": t1, "st": st, "code": code})
        b.calls[(q, op + "-entry", st if st != "error" else "error:" + str(code))] += 1
        if st == "ok":
            b.deleted_n[q] += 1


def guarded(b, fn, *args):
    try:
        fn(b, *args)
    except Exception as ex:  # noqa: BLE001 - a bug in the harness, reported as such
        import traceback

        with b.lock:
            b.harness_errors.append(traceback.format_exc())
        log("harness error:", repr(ex))


def queue_depths(c, urls):
    out = {}
    for q, url in urls.items():
        a = c.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
        out[q] = tuple(int(a[k]) for k in (
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ))
    return out


def round_of(b, t):
    """The round during which time t fell (round k ends with the k-th kill)."""
    for k in b.kills:
        if t < k["t_kill"]:
            return k["round"]
    return len(b.kills) + 1


def kills_between(b, t0, t1):
    return [k["round"] for k in b.kills if t0 <= k["t_kill"] <= t1]


def analyse(b):
    """The checks; answers (findings, counts)."""
    f = {"lost": [], "vanished": [], "mismatch": [], "foreign": [], "double_held": [], "fifo_group": [],
         "after_delete": [], "count_order": [], "same_answer_twice": []}
    acked = {}  # (q, mid) -> body
    for body, s in b.sends.items():
        if s["status"] == "acked":
            acked[(s["q"], s["mid"])] = body
    by_mid = collections.defaultdict(list)
    for r in b.receives:
        by_mid[(r["q"], r["mid"])].append(r)

    # 1. Lost: acknowledged, never received.
    for key, body in acked.items():
        if key not in by_mid:
            s = b.sends[body]
            f["lost"].append({"q": key[0], "mid": key[1], "body": body[:40], "group": s["group"],
                              "sent_t0": round(s["t0"], 3), "sent_t1": round(s["t1"], 3),
                              "round": round_of(b, s["t1"])})
    # Bodies: each received body must be one that was sent, under the MessageId its send got.
    for (q, mid), rs in by_mid.items():
        for r in rs:
            s = b.sends.get(r["body"])
            if s is None:
                f["foreign"].append({"q": q, "mid": mid, "body": r["body"][:60]})
            elif s["status"] == "acked" and s["mid"] != mid:
                f["mismatch"].append({"q": q, "mid": mid, "acked_mid": s["mid"], "body": r["body"][:40]})

    def delete_ok_before(handle, t):
        """A delete of this handle answered success and was sent before t."""
        return any(d["st"] == "ok" and d["t0"] < t for d in b.deletes.get(handle, []))

    def delete_maybe_before(handle, t):
        """A delete of this handle sent before t that answered success or whose answer was
        lost (it may have landed before the kill)."""
        return any(d["st"] != "not_sent" and d["t0"] < t for d in b.deletes.get(handle, []))

    def timeline(rs):
        out = []
        for r in rs:
            out.append({
                "call": r["call"], "t0": round(r["t0"], 3), "t1": round(r["t1"], 3),
                "round": round_of(b, r["t1"]), "count": r["count"], "left_undeleted": r["left"],
                "handle": r["handle"][:24] + "…",
                "deletes": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in d.items()}
                            for d in b.deletes.get(r["handle"], [])],
            })
        return out

    # 2. Double-held: two answered receives of one message while the first was live.
    for (q, mid), rs in by_mid.items():
        rs.sort(key=lambda r: (r["t0"], r["t1"]))
        for i in range(len(rs)):
            for j in range(i + 1, len(rs)):
                r1, r2 = rs[i], rs[j]
                if r1["call"] == r2["call"]:
                    f["same_answer_twice"].append({"q": q, "mid": mid, "call": r1["call"]})
                    continue
                live = r2["t1"] < r1["t0"] + VISIBILITY_S - SLACK_S
                if live and not delete_ok_before(r1["handle"], r2["t1"]):
                    f["double_held"].append({
                        "q": q, "mid": mid, "group": r1["group"], "gap_s": round(r2["t1"] - r1["t0"], 3),
                        "kills_between": kills_between(b, r1["t0"], r2["t1"]), "timeline": timeline(rs),
                    })
                # Received again after a delete that answered success while its handle was live.
                for d in b.deletes.get(r1["handle"], []):
                    if d["st"] == "ok" and d["t1"] < r2["t0"] and d["t1"] < r1["t0"] + VISIBILITY_S - SLACK_S:
                        f["after_delete"].append({
                            "q": q, "mid": mid, "delete_t1": round(d["t1"], 3),
                            "kills_between": kills_between(b, d["t1"], r2["t1"]), "timeline": timeline(rs),
                        })
                        break
                if r1["t1"] < r2["t0"] and r2["count"] <= r1["count"]:
                    f["count_order"].append({"q": q, "mid": mid, "counts": [r1["count"], r2["count"]],
                                             "timeline": timeline(rs)})

    # 1b. Vanished in flight: a message's LAST answered receive was never deleted (left on
    # purpose, or every delete of its handle failed to reach the host), yet it never came back.
    for (q, mid), rs in by_mid.items():
        last = rs[-1]
        ds = b.deletes.get(last["handle"], [])
        if any(d["st"] != "not_sent" for d in ds):
            continue  # deleted, or a delete that may have landed
        f["vanished"].append({
            "q": q, "mid": mid, "group": last["group"], "left_undeleted": last["left"],
            "round": round_of(b, last["t1"]), "timeline": timeline(rs),
        })

    # 3. FIFO groups: a receive call answering a message of a group another call still holds.
    holds = collections.defaultdict(lambda: collections.defaultdict(list))  # group -> call -> receives
    for r in b.receives:
        if r["q"] == "fifo" and r["group"]:
            holds[r["group"]][r["call"]].append(r)
    for g, calls in holds.items():
        ordered = sorted(calls.values(), key=lambda rs: rs[0]["t0"])
        for i in range(len(ordered)):
            c1 = ordered[i]
            t0 = c1[0]["t0"]
            for j in range(i + 1, len(ordered)):
                c2 = ordered[j]
                t2 = c2[0]["t1"]
                if c2[0]["t0"] >= t0 + VISIBILITY_S:
                    break
                # Calls that overlap cannot be ordered from here: which one claimed first?
                if c2[0]["t0"] < c1[0]["t1"] or t2 >= t0 + VISIBILITY_S - SLACK_S:
                    continue
                if all(delete_maybe_before(r["handle"], t2) for r in c1):
                    continue
                held = [r["mid"] for r in c1 if not delete_maybe_before(r["handle"], t2)]
                f["fifo_group"].append({
                    "group": g, "call_1": c1[0]["call"], "call_1_t0": round(t0, 3),
                    "call_2": c2[0]["call"], "call_2_t1": round(t2, 3), "held": held[:5],
                    "received": [r["mid"] for r in c2][:5],
                    "kills_between": kills_between(b, t0, t2),
                })

    # Counts.
    counts = {}
    for q in ("std", "fifo"):
        sends = [s for s in b.sends.values() if s["q"] == q]
        rs = [r for r in b.receives if r["q"] == q]
        mids = collections.Counter(r["mid"] for r in rs)
        acked_q = {m for (qq, m) in acked if qq == q}
        dels = [d for r in rs for d in b.deletes.get(r["handle"], [])]
        counts[q] = {
            "sends attempted": len(sends),
            "sends acknowledged": sum(1 for s in sends if s["status"] == "acked"),
            "sends not sent (host down)": sum(1 for s in sends if s["status"] == "not_sent"),
            "sends whose answer was lost (host killed under them)": sum(1 for s in sends if s["status"] == "lost"),
            "sends answered with an error": sum(1 for s in sends if s["status"] == "error"),
            "sends retried after a lost answer (FIFO: same deduplication id), acknowledged": sum(
                1 for s in sends if s.get("retried") and s["status"] == "acked"),
            "received (deliveries)": len(rs),
            "distinct messages received": len(mids),
            "received, not acknowledged (send answer lost)": len(set(mids) - acked_q),
            "redeliveries (ApproximateReceiveCount > 1)": sum(1 for r in rs if r["count"] > 1),
            "duplicates (messages received more than once)": sum(1 for n in mids.values() if n > 1),
            "left undeleted on purpose": sum(1 for r in rs if r["left"]),
            "deletes answered success": sum(1 for d in dels if d["st"] == "ok"),
            "deletes answered with an error": sum(1 for d in dels if d["st"] == "error"),
            "deletes not sent (host down)": sum(1 for d in dels if d["st"] == "not_sent"),
            "deletes whose answer was lost": sum(1 for d in dels if d["st"] == "lost"),
        }
    return f, counts


def reanalyse(path):
    with open(path) as fh:
        ev = json.load(fh)
    b = Books()
    b.kills = ev["kills"]
    b.sends = ev["sends"]
    b.receives = ev["receives"]
    b.deletes = collections.defaultdict(list, ev["deletes"])
    findings, counts = analyse(b)
    print(json.dumps(counts, indent=1))
    for name, xs in findings.items():
        print(f"{name}: {len(xs)}")
        for x in xs[:5]:
            print("  " + json.dumps(x, ensure_ascii=False))
    return 1 if findings["lost"] or findings["vanished"] or findings["double_held"] else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host-bin")
    ap.add_argument("--analyse", metavar="EVENTS_JSON", help="run the checks on a kept run's events.json")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--port", type=int, default=0, help="default 0: the kernel picks")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--work-dir", default=None, help="default: a fresh temporary directory")
    ap.add_argument("--drain-max", type=float, default=240.0, help="bound on the drain, seconds")
    ap.add_argument("--keep", action="store_true", help="keep the work directory even on success")
    args = ap.parse_args()
    if args.analyse:
        return reanalyse(args.analyse)
    if not args.host_bin:
        ap.error("--host-bin is required")
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)

    with socket.socket() as s:
        if args.port and s.connect_ex(("127.0.0.1", args.port)) == 0:
            print(f"port {args.port} is taken", file=sys.stderr)
            return 2

    work = args.work_dir or tempfile.mkdtemp(prefix="queen-crash-")
    os.makedirs(work, exist_ok=True)
    data_dir = os.path.join(work, "data")
    host_bin = os.path.join(work, "queen-sqs-host")
    shutil.copy2(args.host_bin, host_bin)  # a rebuild elsewhere must not swap it under the run
    host = Host(host_bin, args.port, data_dir, os.path.join(work, "host.log"))
    log(f"seed {seed}; work dir {work}")
    wall0 = time.monotonic()
    b = Books()
    threads = []
    failed = True
    keep_work = False
    try:
        t_up0 = time.monotonic()
        host.start()
        first_start_s = time.monotonic() - t_up0
        admin = make_client(host.url, 10)
        urls = {
            "std": admin.create_queue(QueueName="crash-std",
                                      Attributes={"VisibilityTimeout": str(VISIBILITY_S)})["QueueUrl"],
            "fifo": admin.create_queue(QueueName="crash-fifo.fifo",
                                       Attributes={"VisibilityTimeout": str(VISIBILITY_S), "FifoQueue": "true"})["QueueUrl"],
        }
        for i in range(SENDERS):
            q = "fifo" if i % FIFO_EVERY == FIFO_EVERY - 1 else "std"
            threads.append(threading.Thread(target=guarded, daemon=True,
                                            args=(b, sender, make_client(host.url, 5), urls[q], q, i, seed)))
        for i in range(RECEIVERS):
            q = "fifo" if i % FIFO_EVERY == FIFO_EVERY - 1 else "std"
            threads.append(threading.Thread(target=guarded, daemon=True,
                                            args=(b, receiver, make_client(host.url, 10), urls[q], q, i, seed)))
        for t in threads:
            t.start()

        restarts = []
        for rnd in range(1, args.rounds + 1):
            time.sleep(rng.uniform(1.0, 5.0))
            with b.lock:
                t_kill = b.now()
                b.incarnation += 1
            host.kill()
            t_dead = b.now()
            time.sleep(rng.uniform(0.1, 1.0))
            t_restart = b.now()
            host.start()
            t_up = b.now()
            restarts.append(t_up - t_restart)
            with b.lock:
                b.kills.append({"round": rnd, "t_kill": t_kill, "t_dead": t_dead, "t_up": t_up})
            log(f"round {rnd}: killed at {t_kill:.2f}s, up again in {t_up - t_restart:.2f}s; "
                f"acked std {b.acked_n['std']} fifo {b.acked_n['fifo']}, outstanding "
                f"{b.outstanding('std')}/{b.outstanding('fifo')}")

        time.sleep(3.0)  # load after the last restart
        b.stop_send.set()
        b.draining.set()
        t_drain = time.monotonic()
        log("senders stopped; draining")
        zero_polls = 0
        depths = {}
        while time.monotonic() - t_drain < args.drain_max:
            time.sleep(2.0)
            try:
                depths = queue_depths(admin, urls)
            except Exception as ex:  # noqa: BLE001
                log("attributes:", error_code(ex))
                continue
            with b.lock:
                acked_keys = {(s["q"], s["mid"]) for s in b.sends.values() if s["status"] == "acked"}
                received = {(r["q"], r["mid"]) for r in b.receives}
            missing = len(acked_keys - received)
            empty = all(v == (0, 0, 0) for v in depths.values())
            zero_polls = zero_polls + 1 if empty else 0
            log(f"drain {time.monotonic() - t_drain:.0f}s: depths {depths}, acked not yet received {missing}")
            if zero_polls >= 2 and missing == 0:
                break
        drain_s = time.monotonic() - t_drain
        b.stop_all.set()
        for t in threads:
            t.join(timeout=30)
        final_depths = queue_depths(admin, urls)

        with b.lock:
            findings, counts = analyse(b)
        failing = (findings["lost"] or findings["vanished"] or findings["double_held"] or findings["mismatch"]
                   or findings["foreign"] or findings["same_answer_twice"] or b.harness_errors)
        failed = bool(failing)
        wall_s = time.monotonic() - wall0

        calls = collections.defaultdict(collections.Counter)
        for (q, op, outcome), n in b.calls.items():
            calls[f"{q} {op}"][outcome] += n

        out = []
        out.append(f"- rounds (SIGKILL + restart): **{len(b.kills)}**; seed {seed}")
        out.append(f"- wall time {wall_s:.0f} s (load {b.kills[-1]['t_up'] + 3:.0f} s, drain {drain_s:.0f} s); "
                   f"first start {first_start_s:.2f} s; restart to /healthz: median "
                   f"{statistics.median(restarts):.2f} s, max {max(restarts):.2f} s")
        out.append(f"- queue depths at the end (visible, not visible, delayed): {final_depths}")
        out.append("")
        out.append("| | standard | FIFO |")
        out.append("|---|---:|---:|")
        for k in counts["std"]:
            out.append(f"| {k} | {counts['std'][k]:,} | {counts['fifo'][k]:,} |")
        out.append("")
        out.append("Calls by outcome: " + "; ".join(
            f"{op}: " + ", ".join(f"{o} {n:,}" for o, n in sorted(c.items())) for op, c in sorted(calls.items())))
        out.append("")
        out.append("| check | result |")
        out.append("|---|---|")
        out.append(f"| acknowledged sends never received (lost) | **{len(findings['lost'])}** |")
        out.append(f"| received, never deleted, never received again (vanished in flight) | **{len(findings['vanished'])}** |")
        out.append(f"| messages held by two live receipt handles | **{len(findings['double_held'])}** |")
        out.append(f"| FIFO: group received while another receive held it | {len(findings['fifo_group'])} |")
        out.append(f"| received again after a timely successful delete | {len(findings['after_delete'])} |")
        out.append(f"| ApproximateReceiveCount not increasing | {len(findings['count_order'])} |")
        out.append(f"| one answer holding a message twice | {len(findings['same_answer_twice'])} |")
        out.append(f"| body under another MessageId / never sent | {len(findings['mismatch'])} / {len(findings['foreign'])} |")
        out.append(f"| harness errors | {len(b.harness_errors)} |")
        out.append("")
        out.append(f"**{'FAIL' if failed else 'PASS'}**")
        for name in ("lost", "vanished", "double_held", "fifo_group", "after_delete", "count_order", "same_answer_twice",
                     "mismatch", "foreign"):
            if findings[name]:
                out.append("")
                out.append(f"### {name} (first 10 of {len(findings[name])})")
                out.append("```")
                for x in findings[name][:10]:
                    out.append(json.dumps(x, ensure_ascii=False))
                out.append("```")
        if any(findings.values()):
            out.append("")
            out.append("Kills (round, t_kill, t_up, s from the run's start): " + ", ".join(
                f"{k['round']}@{k['t_kill']:.2f}/{k['t_up']:.2f}" for k in b.kills))
        for e in b.harness_errors[:3]:
            out.append("```\n" + e + "```")
        print("\n".join(out), flush=True)

        if failed or args.keep or any(findings.values()):
            keep_work = True
            with open(os.path.join(work, "events.json"), "w") as fh:
                json.dump({"seed": seed, "visibility_s": VISIBILITY_S, "kills": b.kills, "sends": b.sends,
                           "receives": b.receives, "deletes": b.deletes, "findings": findings}, fh)
            log(f"events in {work}/events.json")
        return 1 if failed else 0
    finally:
        b.stop_send.set()
        b.stop_all.set()
        host.stop()
        if failed or args.keep or keep_work:
            log(f"work dir kept: {work}")
        elif not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as ex:  # noqa: BLE001 - the harness could not run (host did not start, ...)
        import traceback

        traceback.print_exc()
        print(f"harness failure: {ex!r}", file=sys.stderr)
        sys.exit(2)
