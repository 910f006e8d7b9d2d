"""Celery 5.7 over kombu's SQS transport against the endpoint: results, retries,
group and chord, acks_late against a worker crash, and a FIFO queue, with a worker
subprocess (conftest.Worker) doing the work."""

import os

import pytest
from celery import chord, group
from conftest import Worker

from tasksapp import add, always_fails, flaky, late_crash, lines, record_fifo, tsum

T = 30  # seconds to wait for a result


def test_results_and_the_queues_on_the_endpoint(worker, sqs):
    results = [add.delay(i, 100) for i in range(10)]
    assert [r.get(timeout=T) for r in results] == [i + 100 for i in range(10)]
    assert all(r.state == "SUCCESS" for r in results)
    prefix = os.environ["CELERY_QUEUE_PREFIX"]
    names = [u.rsplit("/", 1)[1] for u in sqs.list_queues(QueueNamePrefix=prefix)["QueueUrls"]]
    assert f"{prefix}work" in names and f"{prefix}orders.fifo" in names
    a = sqs.get_queue_attributes(QueueUrl=sqs.get_queue_url(QueueName=f"{prefix}work")["QueueUrl"], AttributeNames=["All"])
    # kombu creates the queue with its visibility_timeout transport option.
    assert a["Attributes"]["VisibilityTimeout"] == "4"


def test_retries_then_success_and_retries_exhausted(worker):
    r = flaky.delay("a", 2)
    assert r.get(timeout=T) == 3
    assert lines("flaky-a") == ["0", "1", "2"]
    bad = always_fails.delay("b")
    with pytest.raises(ValueError, match="no luck"):
        bad.get(timeout=T)
    assert bad.state == "FAILURE"
    assert lines("fails-b") == ["0", "1"]  # max_retries=1: the first run and one retry


def test_group_and_chord(worker):
    g = group(add.s(i, i) for i in range(6))()
    assert g.get(timeout=T) == [0, 2, 4, 6, 8, 10]
    # The file-system backend has no native chord join: celery polls it with its
    # chord_unlock task, retried over the broker until the header is done.
    c = chord(add.s(i, 1) for i in range(5))(tsum.s())
    assert c.get(timeout=T) == sum(i + 1 for i in range(5))


def test_acks_late_task_survives_a_worker_crash():
    # acks_late: the message is deleted only after the task ran, so a worker that dies
    # mid-task leaves it in the queue and it comes back after the visibility timeout.
    first = Worker("crash1").start()
    r = late_crash.delay("late")
    assert first.wait_exit() != 0
    assert lines("crash-late") == ["run"]
    second = Worker("crash2").start()
    try:
        assert r.get(timeout=T) == 2
        assert lines("crash-late") == ["run", "run"]
    finally:
        second.stop()


def test_fifo_queue_keeps_order_per_group(worker, sqs):
    results = []
    for seq in range(8):
        for g in ("x", "y"):
            results.append(record_fifo.apply_async((g, seq), MessageGroupId=f"group-{g}"))
    assert sorted(r.get(timeout=T) for r in results) == sorted(list(range(8)) * 2)
    assert lines("fifo-x") == [str(i) for i in range(8)]
    assert lines("fifo-y") == [str(i) for i in range(8)]
