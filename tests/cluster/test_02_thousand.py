"""(d) 1,000 messages sent alternately through the two replicas are all received across
both (at least once; duplicates are reported, none lost)."""

import collections
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from conftest import figure

N = 1000
SENDERS = 8
DRAIN_S = 60


def test_thousand_messages_alternating_replicas_none_lost(r1, r2, make_queue):
    url = make_queue("k", {"VisibilityTimeout": "10"})
    replicas = (r1, r2)

    def send(i):
        body = f"msg-{i:04d}"
        r = replicas[i % 2].send_message(QueueUrl=url, MessageBody=body)
        return r["MessageId"], body

    t0 = time.monotonic()
    with ThreadPoolExecutor(SENDERS) as pool:
        sent = dict(pool.map(send, range(N)))  # MessageId -> body
    send_s = time.monotonic() - t0
    assert len(sent) == N, f"{N - len(sent)} MessageIds repeated across sends"

    lock = threading.Lock()
    received = collections.Counter()  # MessageId -> deliveries
    per_replica = [0, 0]
    wrong_body = []
    stop = threading.Event()

    def receiver(k):
        c = replicas[k]
        while not stop.is_set():
            msgs = c.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
            if not msgs:
                continue
            with lock:
                for m in msgs:
                    received[m["MessageId"]] += 1
                    if sent.get(m["MessageId"]) != m["Body"]:
                        wrong_body.append((m["MessageId"], m["Body"]))
                per_replica[k] += len(msgs)
            r = c.delete_message_batch(
                QueueUrl=url,
                Entries=[{"Id": str(j), "ReceiptHandle": m["ReceiptHandle"]} for j, m in enumerate(msgs)],
            )
            assert not r.get("Failed"), r.get("Failed")

    errors = []

    def guarded(k):
        try:
            receiver(k)
        except Exception as e:  # surfaced below
            errors.append(repr(e))
            stop.set()

    threads = [threading.Thread(target=guarded, args=(k % 2,), daemon=True) for k in range(4)]
    t1 = time.monotonic()
    for th in threads:
        th.start()
    deadline = t1 + DRAIN_S
    while time.monotonic() < deadline and not stop.is_set():
        with lock:
            if len(received) >= N:
                break
        time.sleep(0.2)
    time.sleep(1.5)  # one more round of polls: a late duplicate shows up in the figures
    stop.set()
    for th in threads:
        th.join(10)
    drain_s = time.monotonic() - t1

    assert not errors, errors
    lost = set(sent) - set(received)
    dups = sum(n - 1 for n in received.values() if n > 1)
    unknown = set(received) - set(sent)
    figure(
        f"1,000 alternating: sent {len(sent)} in {send_s:.1f} s ({N / send_s:.0f} msg/s, {SENDERS} threads), "
        f"received {sum(received.values())} (replica 1 {per_replica[0]}, replica 2 {per_replica[1]}) "
        f"in {drain_s:.1f} s, duplicates {dups}, lost {len(lost)}"
    )
    assert not wrong_body, wrong_body[:5]
    assert not unknown, f"received MessageIds nobody sent: {sorted(unknown)[:5]}"
    assert not lost, f"{len(lost)} acknowledged messages never received, e.g. {sorted(lost)[:5]}"
