"""taskiq over SQS (taskiq-aio-sqs) against the endpoint (QUEEN_SQS_ENDPOINT, set by
scripts/frameworks.sh), configured as the broker takes a custom endpoint: endpoint URL,
region and keys passed to `SQSBroker`, which hands them to aiobotocore.

Each test has queues of its own under a run-unique prefix (the broker only looks queues up,
it never creates them, so the test creates them with a plain botocore client), one broker
that both kicks and works, and taskiq's own `Receiver` listening in the test's event loop:
the loop `taskiq worker` runs, without the CLI's process pool. Results go to taskiq's
in-memory result backend, which works because the worker is in this process.

The broker's aiobotocore session records the parameters of every SQS call it makes
(`before-parameter-build`), so a test can say what went over the wire: `DelaySeconds`,
`MessageGroupId`, `MessageDeduplicationId`, batches, visibility changes. What the endpoint
holds is read with the test's own client (the three approximate counts)."""

import asyncio
import contextlib
import os
import time
import uuid

import botocore.session
import pytest
from taskiq import Context, TaskiqDepends
from taskiq.brokers.inmemory_broker import InmemoryResultBackend
from taskiq.middlewares import SmartRetryMiddleware
from taskiq.receiver import Receiver
from taskiq_aio_sqs import SQS_APPROXIMATE_RECEIVE_COUNT_LABEL, SQSBroker, SQSQueue

ENDPOINT = os.environ["QUEEN_SQS_ENDPOINT"]  # no default: a fixed port could be anyone's
CLIENT_OPTIONS = dict(
    endpoint_url=ENDPOINT,
    region_name="us-east-1",
    aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
    aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
)
COUNTS = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


class Queues:
    """The queues of one test, named under one prefix, read with a client of the test's own."""

    def __init__(self):
        self.prefix = f"tq{uuid.uuid4().hex[:8]}"
        self.client = botocore.session.get_session().create_client("sqs", **CLIENT_OPTIONS)

    def create(self, suffix, fifo=False):
        name = f"{self.prefix}-{suffix}" + (".fifo" if fifo else "")
        attributes = {"FifoQueue": "true"} if fifo else {}
        self.client.create_queue(QueueName=name, Attributes=attributes)
        return name

    def url(self, name):
        return self.client.get_queue_url(QueueName=name)["QueueUrl"]

    def counts(self, name):
        """(visible, in flight, delayed) as the endpoint reports them."""
        got = self.client.get_queue_attributes(QueueUrl=self.url(name), AttributeNames=list(COUNTS))
        return tuple(int(got["Attributes"][k]) for k in COUNTS)

    def delete_all(self):
        for url in self.client.list_queues(QueueNamePrefix=self.prefix).get("QueueUrls", []):
            self.client.delete_queue(QueueUrl=url)


@pytest.fixture
def queues():
    q = Queues()
    yield q
    q.delete_all()


def make_broker(queue_name, calls, **options):
    """An SQSBroker on the endpoint whose SQS calls are appended to `calls` as
    (operation, parameters) before they are sent.

    The listener polls in 1 s receives until its wait_time_seconds budget is spent and only
    then looks at whether it should stop, so a worker takes up to that long to stop: a
    budget of 1 s (one 1 s long poll per round) keeps each test's shutdown short."""
    options.setdefault("wait_time_seconds", 1)
    broker = SQSBroker(queue_name, **CLIENT_OPTIONS, **options)

    def record(model, params, **_):
        calls.append((model.name, dict(params)))

    # Registered on the session before startup, so the broker's clients inherit it.
    broker._session.register("before-parameter-build.sqs", record)
    return broker.with_result_backend(InmemoryResultBackend(max_stored_results=-1))


def sent(calls, operation="SendMessage"):
    return [params for op, params in calls if op == operation]


@contextlib.asynccontextmanager
async def started(broker):
    await broker.startup()
    try:
        yield broker
    finally:
        await broker.shutdown()


@contextlib.asynccontextmanager
async def worker(broker, max_async_tasks=4):
    """taskiq's Receiver listening on the (started) broker until the block ends; yields
    its task so waits can notice a worker that died."""
    receiver = Receiver(broker, run_startup=False, max_async_tasks=max_async_tasks)
    finish = asyncio.Event()
    listening = asyncio.create_task(receiver.listen(finish))
    try:
        yield listening
    finally:
        finish.set()
        await asyncio.wait_for(listening, 20)


async def eventually(predicate, seconds, what, listening=None, interval=0.05):
    deadline = time.monotonic() + seconds
    while True:
        if predicate():
            return
        if listening is not None and listening.done():
            error = None if listening.cancelled() else listening.exception()
            raise AssertionError(f"the worker stopped ({error!r}) while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {what}")
        await asyncio.sleep(interval)


def run(scenario, seconds=90):
    return asyncio.run(asyncio.wait_for(scenario, seconds))


def test_a_kicked_task_is_sent_worked_and_deleted_and_its_result_returned(queues):
    name = queues.create("main")
    calls = []
    broker = make_broker(name, calls)

    @broker.task
    async def add(a, b):
        return a + b

    async def scenario():
        async with started(broker):
            task = await add.kiq(2, 40)
            await eventually(lambda: queues.counts(name) == (1, 0, 0), 10, "the message visible in the queue", interval=0.2)
            async with worker(broker):
                result = await task.wait_result(timeout=30)
            assert not result.is_err, result.error
            assert result.return_value == 42
            await eventually(lambda: queues.counts(name) == (0, 0, 0), 10, "the queue empty (message deleted)", interval=0.2)

    run(scenario())
    ops = [op for op, _ in calls]
    assert {"GetQueueUrl", "SendMessage", "ReceiveMessage", "DeleteMessage"} <= set(ops), ops
    (send,) = sent(calls)
    assert send["QueueUrl"] == queues.url(name) and "DelaySeconds" not in send


def test_thirty_tasks_kicked_in_batches_each_run_once(queues):
    name = queues.create("batch")
    calls = []
    broker = make_broker(
        name, calls, enable_batching=True, batch_size=10, batch_timeout=0.3,
        max_number_of_messages=10, visibility_timeout=10,
    )
    seen = []

    @broker.task
    async def record(i):
        seen.append(i)
        return i * i

    async def scenario():
        async with started(broker):
            tasks = [await record.kiq(i) for i in range(30)]
            async with worker(broker, max_async_tasks=5) as listening:
                await eventually(lambda: len(seen) >= 30, 60, "30 tasks to run", listening)
                await eventually(lambda: queues.counts(name) == (0, 0, 0), 15, "the queue empty", listening, 0.2)
            for i, task in enumerate(tasks):
                result = await task.get_result()
                assert not result.is_err and result.return_value == i * i

    run(scenario())
    # Every message deleted (counts 0 above) and each task run exactly once.
    assert sorted(seen) == list(range(30))
    batches = sent(calls, "SendMessageBatch")
    assert sent(calls) == [], "batching sends nothing one by one"
    assert sum(len(b["Entries"]) for b in batches) == 30 and max(len(b["Entries"]) for b in batches) > 1
    receives = sent(calls, "ReceiveMessage")
    assert receives and all(r["MaxNumberOfMessages"] == 10 and r["VisibilityTimeout"] == 10 for r in receives)


def test_a_failing_task_is_retried_with_a_delay_until_it_succeeds(queues):
    name = queues.create("flaky")
    calls = []
    broker = make_broker(name, calls).with_middlewares(
        SmartRetryMiddleware(default_retry_count=5, default_delay=1, use_jitter=False),
    )
    attempts = {"flaky": [], "doomed": []}

    @broker.task(retry_on_error=True, max_retries=5)
    async def flaky(key, context: Context = TaskiqDepends()):
        attempts["flaky"].append((time.monotonic(), context.message.labels.get("_retries")))
        n = len(attempts["flaky"])
        if n < 3:
            raise RuntimeError(f"attempt {n} fails")
        return f"{key} ok after {n}"

    @broker.task(retry_on_error=True, max_retries=3)
    async def doomed():
        attempts["doomed"].append((time.monotonic(), None))
        raise ValueError("never works")

    async def scenario():
        async with started(broker):
            ok = await flaky.kiq("k")
            bad = await doomed.kiq()
            async with worker(broker) as listening:
                good = await ok.wait_result(timeout=30)
                failed = await bad.wait_result(timeout=30)
                await eventually(lambda: queues.counts(name) == (0, 0, 0), 15, "the queue empty", listening, 0.2)
            return good, failed

    good, failed = run(scenario())
    assert not good.is_err and good.return_value == "k ok after 3"
    assert [str(r) for _, r in attempts["flaky"]] == ["None", "1", "2"]
    # SmartRetryMiddleware re-kicks with a delay label; the broker sends it as DelaySeconds.
    times = [t for t, _ in attempts["flaky"]]
    assert all(b - a >= 0.9 for a, b in zip(times, times[1:])), f"retries {times} came sooner than their 1 s delay"
    assert failed.is_err and "never works" in str(failed.error)
    assert len(attempts["doomed"]) == 3, "max_retries=3: three attempts, then the error is the result"
    delays = sorted(str(p.get("DelaySeconds")) for p in sent(calls))
    assert delays == ["1", "1", "1", "1", "None", "None"], delays


def test_a_delayed_task_is_not_run_before_its_delay(queues):
    name = queues.create("later")
    calls = []
    broker = make_broker(name, calls)
    ran = {}

    @broker.task
    async def stamp(key):
        ran[key] = time.monotonic()

    async def scenario():
        async with started(broker):
            kicked = time.monotonic()
            await stamp.kicker().with_labels(delay=3).kiq("late")
            await eventually(lambda: queues.counts(name) == (0, 0, 1), 2.5, "the message counted as delayed", interval=0.2)
            async with worker(broker) as listening:
                await stamp.kiq("now")
                await eventually(lambda: "late" in ran and "now" in ran, 20, "both tasks", listening)
            return kicked

    kicked = run(scenario())
    assert ran["now"] - kicked < 2.5, "an undelayed task is not held back"
    assert ran["late"] - kicked >= 2.9, f"ran {ran['late'] - kicked:.2f}s after it was kicked with a 3 s delay"
    assert [p.get("DelaySeconds") for p in sent(calls)] == [3, None]


def test_a_fifo_queue_keeps_each_groups_order_and_drops_a_repeated_task_id(queues):
    name = queues.create("orders", fifo=True)
    calls = []
    broker = make_broker(name, calls, use_task_id_for_deduplication=True, max_number_of_messages=10)
    order = []

    @broker.task
    async def step(group, i):
        order.append((group, i))

    async def scenario():
        async with started(broker):
            for i in range(5):
                for group in ("a", "b"):
                    await step.kicker().with_labels(group_id=group).kiq(group, i)
            repeated = uuid.uuid4().hex
            for _ in range(2):
                await step.kicker().with_task_id(repeated).with_labels(group_id="c").kiq("c", 0)
            await eventually(lambda: queues.counts(name) == (11, 0, 0), 10, "11 messages (the repeat dropped)", interval=0.2)
            # One task at a time, so the run order is the delivery order.
            async with worker(broker, max_async_tasks=1) as listening:
                await eventually(lambda: len(order) >= 11, 30, "11 tasks", listening)
                await eventually(lambda: queues.counts(name) == (0, 0, 0), 15, "the queue empty", listening, 0.2)
            return repeated

    repeated = run(scenario())
    for group, n in (("a", 5), ("b", 5), ("c", 1)):
        assert [i for g, i in order if g == group] == list(range(n)), order
    sends = sent(calls)
    assert len(sends) == 12
    assert all(p["MessageGroupId"] in ("a", "b", "c") and p["MessageDeduplicationId"] for p in sends)
    assert [p["MessageDeduplicationId"] for p in sends[-2:]] == [repeated, repeated]


def test_a_task_labelled_with_a_second_queue_is_sent_and_worked_there(queues):
    main = queues.create("main")
    side = queues.create("side")
    calls = []
    broker = make_broker(main, calls).with_queues(SQSQueue(name=side, wait_time_seconds=1))

    @broker.task(queue=side)
    async def where():
        return "side"

    async def scenario():
        async with started(broker):
            task = await where.kiq()
            await eventually(lambda: queues.counts(side) == (1, 0, 0), 10, "the message in the second queue", interval=0.2)
            assert queues.counts(main) == (0, 0, 0)
            async with worker(broker):
                result = await task.wait_result(timeout=30)
            assert result.return_value == "side"
            await eventually(lambda: queues.counts(side) == (0, 0, 0), 10, "the second queue empty", interval=0.2)

    run(scenario())
    assert [p["QueueUrl"] for p in sent(calls)] == [queues.url(side)]
    assert {p["QueueUrl"] for p in sent(calls, "ReceiveMessage")} == {queues.url(main), queues.url(side)}
    assert [p["QueueUrl"] for p in sent(calls, "DeleteMessage")] == [queues.url(side)]


def test_heartbeats_keep_a_long_task_invisible_past_its_visibility_timeout(queues):
    """A 2 s visibility timeout and a 5 s task: the broker's heartbeat extends the
    visibility every 0.5 s. Were an extension not honoured, the message would come back
    and this worker (two task slots) would start it again with receive count 2."""
    name = queues.create("slow")
    calls = []
    broker = make_broker(
        name, calls, visibility_timeout=2, enable_heartbeat=True, heartbeat_interval=0.5,
        expose_message_metadata=True,
    )
    starts = []

    @broker.task
    async def slow(context: Context = TaskiqDepends()):
        starts.append(context.message.labels.get(SQS_APPROXIMATE_RECEIVE_COUNT_LABEL))
        await asyncio.sleep(5)
        return "done"

    async def scenario():
        async with started(broker):
            task = await slow.kiq()
            async with worker(broker, max_async_tasks=2) as listening:
                result = await task.wait_result(timeout=30)
                await eventually(lambda: queues.counts(name) == (0, 0, 0), 10, "the queue empty", listening, 0.2)
            return result

    result = run(scenario())
    assert result.return_value == "done"
    assert starts == ["1"], f"started with receive counts {starts}"
    extensions = sent(calls, "ChangeMessageVisibility")
    assert len(extensions) >= 6 and all(p["VisibilityTimeout"] == 2 for p in extensions)
