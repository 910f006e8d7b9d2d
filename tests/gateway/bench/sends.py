"""N sequential SendMessage calls with boto3 against one endpoint; prints messages/s.

    python sends.py ENDPOINT [N]
"""
import sys
import time
import uuid

import boto3
from botocore.config import Config

endpoint = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
sqs = boto3.client(
    "sqs",
    endpoint_url=endpoint,
    region_name="us-east-1",
    aws_access_key_id="test",
    aws_secret_access_key="test",
    config=Config(retries={"total_max_attempts": 1}),
)
url = sqs.create_queue(QueueName=f"bench-{uuid.uuid4().hex[:12]}")["QueueUrl"]
sqs.send_message(QueueUrl=url, MessageBody="warm-up")
started = time.perf_counter()
for i in range(n):
    sqs.send_message(QueueUrl=url, MessageBody=f"message {i}")
took = time.perf_counter() - started
print(f"{n / took:.1f}")
