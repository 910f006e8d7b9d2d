#!/usr/bin/env python3
"""Soak (issue 10): mixed load against a release host for a fixed time, then the figures.

Starts `queen-sqs-host serve` itself (embedded broker, fresh data dir, port 19470) and runs,
for --minutes (default 30): 4 senders (SendMessage and SendMessageBatch), 4 receivers
(ReceiveMessage 10 with a 5 s long poll, then DeleteMessageBatch), 2 SNS publishers into a
topic fanned out to two queues (one raw) drained by 2 more receivers, and 1 caller of
GetQueueAttributes/ListQueues. Every answer is counted by status; any 5xx fails the run.
The host's RSS is sampled every 10 s. At the end the queues are drained and every
acknowledged send checked as received.

Output: a markdown report on stdout (counts, 5xx, RSS at start / after warm-up / at end /
max); exit 1 on a 5xx, a lost message, or RSS at the end more than 1.5x RSS after warm-up.
Usage: soak.py --host-bin PATH [--minutes 30] [--port 19470]
"""

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host-bin", required=True)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--port", type=int, default=19470)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="queen-soak-")
    env = dict(os.environ, QUEEN_SQS_CREDENTIALS="test:test:",
               QUEEN_SQS_HANDLE_SECRET="soak-handle-secret-0123456789abcdef")
    log = open(os.path.join(work, "host.log"), "w")
    host = subprocess.Popen([args.host_bin, "serve", "--listen", f"127.0.0.1:{args.port}",
                             "--data-dir", os.path.join(work, "data")],
                            env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{args.port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1)
            break
        except Exception:
            time.sleep(0.1)
    cfg = Config(retries={"total_max_attempts": 1}, read_timeout=30, max_pool_connections=32)
    mk = lambda svc: boto3.client(svc, endpoint_url=url, region_name="us-east-1",
                                  aws_access_key_id="test", aws_secret_access_key="test",
                                  config=cfg)
    sqs, sns = mk("sqs"), mk("sns")
    work_q = sqs.create_queue(QueueName="soak-work")["QueueUrl"]
    fan_a = sqs.create_queue(QueueName="soak-fan-a")["QueueUrl"]
    fan_b = sqs.create_queue(QueueName="soak-fan-b")["QueueUrl"]
    topic = sns.create_topic(Name="soak-topic")["TopicArn"]
    for q, raw in ((fan_a, "false"), (fan_b, "true")):
        arn = sqs.get_queue_attributes(QueueUrl=q, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn,
                      Attributes={"RawMessageDelivery": raw})

    lock = threading.Lock()
    statuses = collections.Counter()
    errors = collections.Counter()
    sent, received = set(), set()
    stop = threading.Event()

    def call(fn, **kw):
        try:
            out = fn(**kw)
            with lock:
                statuses[out["ResponseMetadata"]["HTTPStatusCode"]] += 1
            return out
        except ClientError as e:
            code = e.response["ResponseMetadata"].get("HTTPStatusCode", 0)
            with lock:
                statuses[code] += 1
                errors[e.response["Error"].get("Code", "?")] += 1
        except Exception as e:  # connection trouble: counted, never a 5xx of ours
            with lock:
                errors[type(e).__name__] += 1
        return None

    def sender(w):
        c = mk("sqs")
        i = 0
        while not stop.is_set():
            if i % 3 == 0:
                entries = [{"Id": str(k), "MessageBody": f"s{w}-{i}-{k}"} for k in range(10)]
                out = call(c.send_message_batch, QueueUrl=work_q, Entries=entries)
                if out:
                    with lock:
                        sent.update(m["MessageId"] for m in out.get("Successful", []))
            else:
                out = call(c.send_message, QueueUrl=work_q, MessageBody=f"s{w}-{i}")
                if out:
                    with lock:
                        sent.add(out["MessageId"])
            i += 1

    def receiver(q, record):
        c = mk("sqs")
        while not stop.is_set() or record:
            out = call(c.receive_message, QueueUrl=q, MaxNumberOfMessages=10, WaitTimeSeconds=5)
            msgs = (out or {}).get("Messages", [])
            if not msgs:
                if stop.is_set():
                    return
                continue
            if record:
                with lock:
                    received.update(m["MessageId"] for m in msgs)
            call(c.delete_message_batch, QueueUrl=q,
                 Entries=[{"Id": str(k), "ReceiptHandle": m["ReceiptHandle"]} for k, m in enumerate(msgs)])

    def publisher(w):
        c = mk("sns")
        i = 0
        while not stop.is_set():
            call(c.publish, TopicArn=topic, Message=f"p{w}-{i}",
                 MessageAttributes={"n": {"DataType": "Number", "StringValue": str(i)}})
            i += 1

    def admin():
        c = mk("sqs")
        while not stop.is_set():
            call(c.get_queue_attributes, QueueUrl=work_q, AttributeNames=["All"])
            call(c.list_queues, QueueNamePrefix="soak")
            time.sleep(0.5)

    threads = [threading.Thread(target=sender, args=(w,)) for w in range(4)]
    threads += [threading.Thread(target=receiver, args=(work_q, True)) for _ in range(4)]
    threads += [threading.Thread(target=receiver, args=(q, False)) for q in (fan_a, fan_b)]
    threads += [threading.Thread(target=publisher, args=(w,)) for w in range(2)]
    threads.append(threading.Thread(target=admin))
    started = time.time()
    rss = [(0.0, rss_kb(host.pid))]
    for t in threads:
        t.start()
    end = started + args.minutes * 60
    while time.time() < end:
        time.sleep(10)
        rss.append((time.time() - started, rss_kb(host.pid)))
        print(f"{(time.time() - started) / 60:5.1f} min rss {rss[-1][1] / 1024:.0f} MiB "
              f"calls {sum(statuses.values())} 5xx {sum(n for s, n in statuses.items() if s >= 500)}",
              file=sys.stderr, flush=True)
    stop.set()
    # Drain what is left (the work-queue receivers keep going until an empty long poll).
    for t in threads:
        t.join(timeout=120)
    c = mk("sqs")
    for _ in range(200):
        out = call(c.receive_message, QueueUrl=work_q, MaxNumberOfMessages=10, WaitTimeSeconds=2)
        msgs = (out or {}).get("Messages", [])
        if not msgs:
            break
        received.update(m["MessageId"] for m in msgs)
        call(c.delete_message_batch, QueueUrl=work_q,
             Entries=[{"Id": str(k), "ReceiptHandle": m["ReceiptHandle"]} for k, m in enumerate(msgs)])
    elapsed = time.time() - started
    final_rss = rss_kb(host.pid)
    host.terminate()
    host.wait(timeout=30)

    five_xx = sum(n for s, n in statuses.items() if s >= 500)
    lost = len(sent - received)
    warm = [kb for t, kb in rss if t >= 120] or [rss[-1][1]]
    print(f"# Soak, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(started))}\n")
    print(f"- {elapsed / 60:.1f} min of mixed load: 4 senders, 4 receivers + 2 on an SNS fan-out, "
          f"2 SNS publishers, 1 admin caller; load average at end {os.getloadavg()}")
    print(f"- calls: {sum(statuses.values())} answered, by status {dict(sorted(statuses.items()))}")
    print(f"- errors by code: {dict(errors)}")
    print(f"- **5xx: {five_xx}**; acknowledged sends {len(sent)}, received {len(sent & received)}, **lost {lost}**")
    print(f"- host RSS: start {rss[0][1] / 1024:.0f} MiB, after 2 min {warm[0] / 1024:.0f} MiB, "
          f"end {final_rss / 1024:.0f} MiB, max {max(kb for _, kb in rss) / 1024:.0f} MiB")
    ok = five_xx == 0 and lost == 0 and final_rss <= 1.5 * warm[0]
    print(f"- verdict: {'passed' if ok else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
