"""Long polls of up to 20 s through whatever serves the component (run by scripts/jco-lane.sh
against `jco serve`; any endpoint works). Under jco the component's outgoing request options
are read differently than under wasmtime: a short connect timeout became the socket's
inactivity timeout there, and every long poll past it failed with 503. These tests hold a
poll open for the whole 20 s, and send while one is open (which needs a server that answers
requests side by side)."""

import os
import threading
import time
import uuid

import boto3
import pytest
from botocore.config import Config

# No default: a fixed port could be answered by any server (issue 21 item 10).
ENDPOINT = os.environ.get("QUEEN_SQS_ENDPOINT")
if not ENDPOINT:
    raise pytest.UsageError(
        "QUEEN_SQS_ENDPOINT is not set: the suites run against the endpoint a script started and checked (scripts/compat.sh and the lanes set it); there is no default port"
    )

# One attempt (a retry would hide a 503), and a read timeout well past the longest poll.
CONFIG = Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=60)


def client():
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
        config=CONFIG,
    )


@pytest.fixture
def queue():
    sqs = client()
    url = sqs.create_queue(QueueName=f"longpoll-{uuid.uuid4().hex[:12]}")["QueueUrl"]
    yield url
    sqs.delete_queue(QueueUrl=url)


def test_a_20_second_poll_of_an_empty_queue_waits_it_out(queue):
    started = time.monotonic()
    answer = client().receive_message(QueueUrl=queue, WaitTimeSeconds=20)
    took = time.monotonic() - started
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert not answer.get("Messages")
    # The whole wait, not cut short (AWS answers an empty long poll at its end).
    assert 19.0 <= took < 30.0, took


def test_a_send_during_a_20_second_poll_is_answered_at_once_and_wakes_it(queue):
    got = {}

    def poll():
        started = time.monotonic()
        try:
            got["answer"] = client().receive_message(QueueUrl=queue, WaitTimeSeconds=20)
        except Exception as e:  # noqa: BLE001 - reported by the assertions below
            got["error"] = e
        got["took"] = time.monotonic() - started

    poller = threading.Thread(target=poll)
    poller.start()
    # Past the 5 s the component used to give a broker call to connect.
    time.sleep(7)
    sent_at = time.monotonic()
    body = f"woken-{uuid.uuid4().hex}"
    client().send_message(QueueUrl=queue, MessageBody=body)
    send_took = time.monotonic() - sent_at
    poller.join(40)
    assert not poller.is_alive()
    assert "error" not in got, got.get("error")
    # The send did not wait behind the open poll.
    assert send_took < 5.0, send_took
    assert [m["Body"] for m in got["answer"].get("Messages", [])] == [body]
    # Woken by the send, not by the end of the wait.
    assert 6.5 <= got["took"] < 15.0, got["took"]
