"""Dramatiq over SQS (dramatiq-sqs) against the endpoint (QUEEN_SQS_ENDPOINT, set by
scripts/frameworks.sh), configured as dramatiq-sqs documents a custom endpoint: boto3
options passed through the broker. Each test has a broker of its own (a fresh queue-name
namespace) and runs a Dramatiq worker in this process with the actors it declares.

What Dramatiq leans on: long polls of up to 10 messages, base64 bodies, per-message
DelaySeconds for delays and retry backoff, a visibility change to 0 of a batch for
messages a stopping worker had prefetched, the three approximate counts for `join`, and a
dead-letter queue it sends to itself."""

import base64
import os
import threading
import time
import uuid

import boto3
import dramatiq
import pytest
from dramatiq_sqs import SQSBroker

ENDPOINT = os.environ["QUEEN_SQS_ENDPOINT"]  # no default: a fixed port could be anyone's
CLIENT_OPTIONS = dict(
    endpoint_url=ENDPOINT,
    region_name="us-east-1",
    aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
    aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
)


class Broker(SQSBroker):
    """The broker of one test: its namespace, and the workers it started (stopped at the end)."""

    def __init__(self, namespace):
        super().__init__(namespace=namespace, dead_letter=True, visibility_timeout=30, **CLIENT_OPTIONS)
        self.namespace_for_test = namespace
        self.workers = []

    def start_worker(self, worker_threads):
        worker = dramatiq.Worker(self, worker_threads=worker_threads, worker_timeout=1000)
        worker.start()
        self.workers.append(worker)
        return worker

    def stop_worker(self, worker):
        self.workers.remove(worker)
        worker.stop(timeout=10_000)


@pytest.fixture
def broker():
    namespace = f"dq{uuid.uuid4().hex[:8]}"
    b = Broker(namespace)
    yield b
    for w in list(b.workers):
        b.stop_worker(w)
    client = boto3.client("sqs", **CLIENT_OPTIONS)
    for url in client.list_queues(QueueNamePrefix=namespace).get("QueueUrls", []):
        client.delete_queue(QueueUrl=url)


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {what}")
        time.sleep(0.1)


def test_every_message_runs_once_and_join_sees_the_queue_empty(broker):
    seen, lock = [], threading.Lock()

    @dramatiq.actor(broker=broker, queue_name="work")
    def record(i):
        with lock:
            seen.append(i)

    for i in range(30):
        record.send(i)
    broker.start_worker(worker_threads=4)
    wait_for(lambda: len(seen) >= 30, 60, "30 messages")
    # join reads ApproximateNumberOfMessages, ...Delayed and ...NotVisible until all are 0:
    # each delete must be counted out.
    broker.join("work", timeout=30)
    time.sleep(1.5)  # a second delivery of anything would have arrived by now
    assert sorted(seen) == list(range(30))


def test_a_failing_actor_is_retried_with_backoff_until_it_succeeds(broker):
    attempts, lock = {}, threading.Lock()

    @dramatiq.actor(broker=broker, queue_name="flaky", max_retries=5, min_backoff=500, max_backoff=1500)
    def flaky(key):
        with lock:
            attempts[key] = attempts.get(key, 0) + 1
            n = attempts[key]
        if n < 3:
            raise RuntimeError(f"attempt {n} fails")

    for key in ("a", "b"):
        flaky.send(key)
    broker.start_worker(worker_threads=2)
    wait_for(lambda: attempts.get("a", 0) >= 3 and attempts.get("b", 0) >= 3, 60, "three attempts each")
    broker.join("flaky", timeout=30)
    time.sleep(1.5)
    assert attempts == {"a": 3, "b": 3}


def test_a_delayed_message_runs_after_its_delay(broker):
    ran = {}

    @dramatiq.actor(broker=broker, queue_name="later")
    def stamp(key):
        ran[key] = time.monotonic()

    broker.start_worker(worker_threads=1)
    sent = time.monotonic()
    stamp.send_with_options(args=("late",), delay=3000)
    stamp.send("now")
    wait_for(lambda: "late" in ran and "now" in ran, 30, "both messages")
    assert ran["now"] - sent < 2.5, "an undelayed message is not held back"
    assert ran["late"] - sent >= 2.8, f"ran {ran['late'] - sent:.2f}s after it was sent with a 3 s delay"


def test_an_exhausted_message_goes_to_the_dead_letter_queue(broker):
    calls = []

    @dramatiq.actor(broker=broker, queue_name="doomed", max_retries=0)
    def doomed(x):
        calls.append(x)
        raise ValueError("never works")

    doomed.send("poison")
    broker.start_worker(worker_threads=1)
    wait_for(lambda: calls, 30, "the first attempt")
    broker.join("doomed", timeout=30)
    client = boto3.client("sqs", **CLIENT_OPTIONS)
    dlq = client.get_queue_url(QueueName=f"{broker.namespace_for_test}_doomed_dlq")["QueueUrl"]
    got = client.receive_message(QueueUrl=dlq, WaitTimeSeconds=5).get("Messages", [])
    assert len(got) == 1
    message = dramatiq.Message.decode(base64.b64decode(got[0]["Body"]))
    assert message.actor_name == "doomed" and message.args == ("poison",)
    assert calls == ["poison"]


def test_a_large_message_near_the_limit_runs(broker):
    sizes = []

    @dramatiq.actor(broker=broker, queue_name="large")
    def measure(text):
        sizes.append(len(text))

    # Base64 of the encoded message must stay within 1 MiB: 760,000 characters is ~1,013,400.
    measure.send("x" * 760_000)
    broker.start_worker(worker_threads=1)
    wait_for(lambda: sizes, 30, "the large message")
    assert sizes == [760_000]


def test_messages_a_stopping_worker_had_prefetched_are_given_back_at_once(broker):
    """A worker that stops puts the messages it fetched but never started back with a
    visibility change to 0 of the whole batch; a second worker runs them straight away,
    well inside their 30 s visibility, and nothing runs twice."""
    started, finished, lock = [], [], threading.Lock()

    @dramatiq.actor(broker=broker, queue_name="slow")
    def slow(i):
        with lock:
            started.append(i)
        time.sleep(2)
        with lock:
            finished.append(i)

    for i in range(6):
        slow.send(i)
    first = broker.start_worker(worker_threads=1)
    wait_for(lambda: started, 30, "the first message to start")
    broker.stop_worker(first)
    stopped_at = time.monotonic()
    done_by_first = len(finished)
    assert done_by_first >= 1 and len(started) == done_by_first
    broker.start_worker(worker_threads=3)
    wait_for(lambda: len(finished) >= 6, 40, "all six messages")
    assert time.monotonic() - stopped_at < 25, "given back at once, not after the visibility timeout"
    broker.join("slow", timeout=30)
    time.sleep(1.5)
    assert sorted(finished) == list(range(6))
