"""Sequential SendMessage throughput against one endpoint: `bench_send.py N RUNS`. Creates a
queue, sends 20 messages to warm up, then RUNS times N sends one after another (boto3, one
client, keep-alive), and prints one line per run and the median in messages per second.
Deletes the queue at the end. Used by tests/jco/bench.sh."""

import os
import statistics
import sys
import time
import uuid

import boto3
from botocore.config import Config


def main():
    n, runs = int(sys.argv[1]), int(sys.argv[2])
    sqs = boto3.client(
        "sqs",
        endpoint_url=os.environ["QUEEN_SQS_ENDPOINT"],
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=60),
    )
    url = sqs.create_queue(QueueName=f"bench-{uuid.uuid4().hex[:12]}")["QueueUrl"]
    try:
        for i in range(20):
            sqs.send_message(QueueUrl=url, MessageBody=f"warm-{i}")
        rates = []
        for run in range(runs):
            started = time.monotonic()
            for i in range(n):
                sqs.send_message(QueueUrl=url, MessageBody=f"run-{run}-{i}")
            took = time.monotonic() - started
            rates.append(n / took)
            load = open("/proc/loadavg").read().split()[0]
            print(f"run {run + 1}: {n} sends in {took:.2f} s = {n / took:.1f} msg/s (load {load})")
        print(f"median {statistics.median(rates):.1f} msg/s")
    finally:
        sqs.delete_queue(QueueUrl=url)


if __name__ == "__main__":
    main()
