"""The official Queen Python client (queen-mq 2.6.0) against the broker behind the endpoint.

QUEEN_URL names the broker (run.sh starts one) and QUEEN_SQS_BROKER_TOKEN the bearer token
its HTTP port wants (the embedded broker's; unset for the engine, which runs with auth off).
Each test uses its own queue names so the
suite can run against a broker that already holds data. QUEEN_SQS_COMPAT_BROKER=engine says
it is queen-engine 1.3.0, which (as the README's broker table says) answers no push/pop
`offset`, no `deliveryAttempt`, and refuses the KV `check` op: there the tests assert that
shape instead.
"""

import asyncio
import os
import time
import urllib.error
import urllib.request
import uuid

import pytest

from queen import Queen

# No default: a fixed port could be answered by any server (issue 21 item 10).
URL = os.environ.get("QUEEN_URL")
if not URL:
    raise pytest.UsageError("QUEEN_URL is not set: this suite runs against the broker a script started (scripts/compat.sh sets it)")
TOKEN = os.environ.get("QUEEN_SQS_BROKER_TOKEN") or None
ENGINE = os.environ.get("QUEEN_SQS_COMPAT_BROKER") == "engine"


def run(coro):
    return asyncio.run(coro)


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


async def client() -> Queen:
    return Queen(URL, retry_attempts=1, bearer_token=TOKEN)


def status_of(path: str, token=None) -> int:
    req = urllib.request.Request(URL + path)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.mark.skipif(TOKEN is None, reason="the broker runs without a token (the engine)")
def test_the_broker_port_wants_its_bearer_token():
    assert status_of("/health") == 200
    assert status_of("/api/v1/resources/queues") == 401
    assert status_of("/api/v1/resources/queues", "not-" + TOKEN) == 401
    assert status_of("/api/v1/resources/queues", TOKEN) == 200


def test_configure_push_pop_ack():
    async def body():
        q = await client()
        name = unique("py-basic")
        created = await q.queue(name).config({"lease_time": 30, "retry_limit": 2}).create()
        assert created["configured"] is True
        assert created["options"]["leaseTime"] == 30
        pushed = await q.queue(name).partition("p1").push([{"data": {"n": 1}}, {"data": {"n": 2}}])
        assert [r["status"] for r in pushed] == ["queued", "queued"]
        if ENGINE:
            assert all("offset" not in r for r in pushed), pushed
        else:
            assert [r["offset"] for r in pushed] == [0, 1]
        msgs = await q.queue(name).partition("p1").batch(2).wait(False).pop()
        assert [m["data"]["n"] for m in msgs] == [1, 2]
        assert msgs[0]["transactionId"] == pushed[0]["transaction_id"]
        assert msgs[0].get("deliveryAttempt") == (None if ENGINE else 1)
        res = await q.ack(msgs)
        assert res["success"] is True, res
        again = await q.queue(name).partition("p1").batch(2).wait(False).pop()
        assert again == []
        await q.close()

    run(body())


def test_duplicate_push_reports_original():
    async def body():
        q = await client()
        name = unique("py-dup")
        first = await q.queue(name).push({"data": 1, "transactionId": "same-key"})
        dup = await q.queue(name).push({"data": 2, "transactionId": "same-key"})
        assert dup[0]["status"] == "duplicate"
        assert dup[0]["message_id"] == first[0]["message_id"]
        await q.close()

    run(body())


def test_nack_redelivers_and_long_poll_wakes():
    async def body():
        q = await client()
        name = unique("py-retry")
        await q.queue(name).push({"data": {"x": 1}})
        [m] = await q.queue(name).batch(1).wait(False).pop()
        res = await q.ack(m, "retry")
        assert res["success"] is True, res
        [m2] = await q.queue(name).batch(1).wait(False).pop()
        assert m2["id"] == m["id"]
        assert m2.get("deliveryAttempt") == (None if ENGINE else 2)
        await q.ack(m2)
        # A parked pop returns as soon as a push arrives.
        started = time.monotonic()

        async def later():
            await asyncio.sleep(0.3)
            await q.queue(name).push({"data": {"x": 2}})

        pushing = asyncio.ensure_future(later())
        got = await q.queue(name).batch(1).wait(True).timeout_millis(10000).pop()
        await pushing
        assert [g["data"]["x"] for g in got] == [2]
        assert time.monotonic() - started < 3
        await q.close()

    run(body())


def test_lease_renewal():
    async def body():
        q = await client()
        name = unique("py-lease")
        await q.queue(name).push({"data": 1})
        [m] = await q.queue(name).batch(1).wait(False).pop()
        renewed = await q.renew(m)
        assert renewed["success"] is True, renewed
        assert renewed["renewed"] == 1
        assert renewed["newExpiresAt"]
        await q.ack(m)
        gone = await q.renew(m)
        assert gone["success"] is False
        await q.close()

    run(body())


def test_transaction_moves_message_with_kv_gate():
    async def body():
        q = await client()
        src, dst = unique("py-src"), unique("py-dst")
        await q.queue(src).push({"data": {"job": 7}})
        [m] = await q.queue(src).batch(1).wait(False).pop()
        gate = unique("gate")
        tx = (
            q.transaction()
            .once("pytest", gate, forever=True)
            .queue(dst)
            .push({"data": {"moved": m["data"]}})
            .ack(m)
        )
        tx.timer(dst).key("t1").payload({"late": True}).after_ms(60000).schedule()
        result = await tx.commit()
        assert result["success"] is True, result
        types = [r["type"] for r in result["results"]]
        assert types == ["push", "ack", "kv", "timer"]
        [moved] = await q.queue(dst).batch(1).wait(False).pop()
        assert moved["data"] == {"moved": {"job": 7}}
        # The same gate again: the bundle rolls back and the verdict is returned, not raised.
        await q.queue(src).push({"data": {"job": 8}})
        [m2] = await q.queue(src).batch(1).wait(False).pop()
        lost = await q.transaction().once("pytest", gate, forever=True).queue(dst).push({"data": 9}).ack(m2).commit()
        assert lost["success"] is False
        assert lost["reason"] == "kv_precondition"
        assert lost["failedIndex"] == 2
        assert lost["kvReason"] == "exists"
        assert not lost
        await q.close()

    run(body())


def test_kv_surface():
    async def body():
        q = await client()
        ns = "pytest"
        key = unique("k")
        put = await q.kv.put(ns, key, {"v": 1}, forever=True, expect=0)
        assert put["applied"] is True
        got = await q.kv.get(ns, key)
        assert got["found"] is True and got["value"] == {"v": 1}
        stale = await q.kv.put(ns, key, {"v": 2}, forever=True, expect=put["version"] + 12345)
        assert not stale and stale["reason"] == "version"
        again = await q.kv.put_if_absent(ns, key, 3, ttl_seconds=30)
        assert not again and again["reason"] == "exists"
        if ENGINE:
            with pytest.raises(Exception, match="check"):
                await q.kv.check(ns, key, expect=put["version"])
        else:
            assert (await q.kv.check(ns, key, expect=put["version"]))["applied"] is True
        n1 = await q.kv.incr(ns, key + ":n", delta=5, max=6, ttl_seconds=60)
        n2 = await q.kv.incr(ns, key + ":n", delta=5, max=6, ttl_seconds=60)
        assert n1["value"] == 5 and n2["applied"] is False and n2["reason"] == "limit"
        many = await q.kv.get_many(ns, [key, key + ":none"])
        assert [r["key"] for r in many["rows"]] == [key]
        assert many["missing"] == [key + ":none"]
        for i in range(3):
            await q.kv.put(ns, f"{key}:p:{i}", i, forever=True)
        page = await q.kv.get_prefix(ns, f"{key}:p:", limit=2)
        assert [r["key"] for r in page["rows"]] == [f"{key}:p:0", f"{key}:p:1"]
        assert page["truncated"] is True
        rows = await q.kv.list_all(ns, f"{key}:p:", limit=2)
        assert len(rows) == 3
        deleted = await q.kv.delete(ns, key)
        assert deleted["applied"] is True
        assert (await q.kv.get(ns, key))["found"] is False
        await q.close()

    run(body())


def test_timers_surface():
    async def body():
        q = await client()
        name = unique("py-timer")
        s = await q.timers.schedule(name, "sqs.a", {"hello": "later"}, delay_ms=200, partition="p")
        assert s["ok"] is True and s["status"] == "scheduled"
        r = await q.timers.schedule(name, "sqs.b", {"x": 1}, delay_ms=60000)
        assert r["ok"] is True
        listed = await q.timers.list(name)
        assert [row["timerKey"] for row in listed["rows"]] == ["sqs.a", "sqs.b"]
        peek = await q.timers.peek(name, "sqs.b")
        assert peek["found"] is True
        cancelled = await q.timers.cancel(name, "sqs.b")
        assert cancelled["ok"] is True and cancelled["status"] == "cancelled"
        absent = await q.timers.cancel(name, "sqs.b", txn="whatever")
        assert not absent and absent["status"] == "absent"
        got = await q.queue(name).partition("p").batch(1).wait(True).timeout_millis(5000).pop()
        assert len(got) == 1
        assert got[0]["id"] == s["messageId"]
        assert got[0]["data"] == {"hello": "later"}
        await q.close()

    run(body())


def test_delete_queue():
    async def body():
        q = await client()
        name = unique("py-del")
        await q.queue(name).push({"data": 1})
        res = await q.queue(name).delete()
        assert res["deleted"] is True
        res = await q.queue(name).delete()
        assert res["deleted"] is False and res["existed"] is False
        await q.close()

    run(body())
