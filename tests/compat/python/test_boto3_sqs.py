"""boto3's SQS client (AWS JSON 1.0) against the endpoint: every action family, with the
modelled exception classes an application catches."""

import base64
import json
import threading
import time
import uuid

import pytest
from conftest import ENDPOINT, drain, md5_of_attributes, md5_of_body, queue_arn, receive_all, uname

ACCOUNT = "000000000000"


def attrs(sqs, url, *names):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(names) or ["All"])["Attributes"]


# --- queues ---------------------------------------------------------------------------


def test_create_get_url_and_list_by_prefix(sqs, make_queue):
    prefix = uname("lst")
    a = make_queue(prefix + "-a")
    b = make_queue(prefix + "-b")
    assert a.startswith(ENDPOINT + f"/{ACCOUNT}/"), a
    name_a = a.rsplit("/", 1)[1]
    assert sqs.get_queue_url(QueueName=name_a)["QueueUrl"] == a
    listed = sqs.list_queues(QueueNamePrefix=prefix)["QueueUrls"]
    assert sorted(listed) == sorted([a, b])
    assert "QueueUrls" not in sqs.list_queues(QueueNamePrefix=uname("nothing-here"))


def test_list_queues_pages(sqs, make_queue):
    prefix = uname("page")
    urls = {make_queue(f"{prefix}-{i}") for i in range(3)}
    first = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2)
    assert len(first["QueueUrls"]) == 2
    assert first.get("NextToken")
    second = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2, NextToken=first["NextToken"])
    assert len(second["QueueUrls"]) == 1
    assert not second.get("NextToken")
    assert set(first["QueueUrls"]) | set(second["QueueUrls"]) == urls


def test_get_and_set_attributes(sqs, make_queue):
    url = make_queue(attributes={"VisibilityTimeout": "5", "DelaySeconds": "0"})
    got = attrs(sqs, url)
    name = url.rsplit("/", 1)[1]
    assert got["QueueArn"] == f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}"
    assert got["VisibilityTimeout"] == "5"
    assert got["ApproximateNumberOfMessages"] == "0"
    assert got["ApproximateNumberOfMessagesNotVisible"] == "0"
    assert got["ApproximateNumberOfMessagesDelayed"] == "0"
    assert int(got["CreatedTimestamp"]) > 1_600_000_000
    assert got["MaximumMessageSize"] == "1048576"  # AWS's default
    # `All` is AWS's set: our own attributes are answered only when named.
    assert not [k for k in got if k.startswith("queen.")]
    assert list(attrs(sqs, url, "queen.partitions")) == ["queen.partitions"]

    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "7", "MaximumMessageSize": "1024"})
    got = attrs(sqs, url, "VisibilityTimeout", "MaximumMessageSize")
    assert got == {"VisibilityTimeout": "7", "MaximumMessageSize": "1024"}


def test_fixed_and_unknown_attributes_are_invalid_attribute_name(sqs, make_queue):
    url = make_queue()
    with pytest.raises(sqs.exceptions.InvalidAttributeName):
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"FifoQueue": "true"})
    with pytest.raises(sqs.exceptions.InvalidAttributeName):
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"queen.partitions": "8"})
    with pytest.raises(sqs.exceptions.InvalidAttributeName):
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["NoSuchAttribute"])
    with pytest.raises(sqs.exceptions.InvalidAttributeName):
        sqs.create_queue(QueueName=uname("bad"), Attributes={"NoSuchAttribute": "1"})


def test_create_is_idempotent_unless_attributes_differ(sqs, make_queue):
    url = make_queue(attributes={"VisibilityTimeout": "9"})
    name = url.rsplit("/", 1)[1]
    assert sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "9"})["QueueUrl"] == url
    assert sqs.create_queue(QueueName=name)["QueueUrl"] == url
    with pytest.raises(sqs.exceptions.QueueNameExists):
        sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "10"})


def test_delete_queue_then_recently_deleted(sqs):
    name = uname("del")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.delete_queue(QueueUrl=url)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName=name)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message(QueueUrl=url, MessageBody="x")
    with pytest.raises(sqs.exceptions.QueueDeletedRecently):
        sqs.create_queue(QueueName=name)


# --- messages -------------------------------------------------------------------------

MSG_ATTRS = {
    "event": {"DataType": "String", "StringValue": "order.created"},
    "amount": {"DataType": "Number", "StringValue": "12.50"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff binary"},
    "note": {"DataType": "String.custom", "StringValue": "h\u00e9llo \u2603"},
}
TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"


def test_send_receive_delete_with_attributes_and_md5s(sqs, make_queue):
    url = make_queue()
    body = 'the body {"json": true}  \u00e9\u2603 trailing  '
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageAttributes=MSG_ATTRS,
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE}},
    )
    assert sent["MD5OfMessageBody"] == md5_of_body(body)
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes(MSG_ATTRS)
    assert sent["MD5OfMessageSystemAttributes"] == md5_of_attributes(
        {"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE}}
    )
    uuid.UUID(sent["MessageId"])

    r = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=10,
        WaitTimeSeconds=2,
        MessageAttributeNames=["All"],
        MessageSystemAttributeNames=["All"],
    )
    (m,) = r["Messages"]
    assert m["MessageId"] == sent["MessageId"]
    assert m["Body"] == body
    assert m["MD5OfBody"] == md5_of_body(body)
    assert m["MD5OfMessageAttributes"] == md5_of_attributes(MSG_ATTRS)
    assert m["MessageAttributes"]["blob"]["BinaryValue"] == MSG_ATTRS["blob"]["BinaryValue"]
    assert m["MessageAttributes"]["event"] == MSG_ATTRS["event"]
    assert m["MessageAttributes"]["amount"] == MSG_ATTRS["amount"]
    assert m["MessageAttributes"]["note"] == MSG_ATTRS["note"]
    assert m["Attributes"]["AWSTraceHeader"] == TRACE
    assert m["Attributes"]["ApproximateReceiveCount"] == "1"
    assert abs(int(m["Attributes"]["SentTimestamp"]) / 1000 - time.time()) < 60

    assert attrs(sqs, url, "ApproximateNumberOfMessagesNotVisible")["ApproximateNumberOfMessagesNotVisible"] == "1"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages")
    got = attrs(sqs, url, "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
    assert got == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


def test_receive_filters_message_attribute_names(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="b", MessageAttributes=MSG_ATTRS)
    (m,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, MessageAttributeNames=["event"])["Messages"]
    assert set(m["MessageAttributes"]) == {"event"}
    assert m["MD5OfMessageAttributes"] == md5_of_attributes({"event": MSG_ATTRS["event"]})


def test_empty_receive_omits_the_messages_key(sqs, make_queue):
    # AWS answers an empty receive without a `Messages` member, and the common idiom
    # `if "Messages" in r: r["Messages"][0]` relies on it.
    url = make_queue()
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    assert "Messages" not in r, r.get("Messages")


# --- batches --------------------------------------------------------------------------


def test_send_batch_with_a_partial_failure(sqs, make_queue):
    url = make_queue()
    r = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "ok1", "MessageBody": "one", "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}},
            {"Id": "bad", "MessageBody": "bad \u0000 body"},
            {"Id": "ok2", "MessageBody": "two"},
        ],
    )
    ok = {e["Id"]: e for e in r["Successful"]}
    assert set(ok) == {"ok1", "ok2"}
    assert ok["ok1"]["MD5OfMessageBody"] == md5_of_body("one")
    assert ok["ok1"]["MD5OfMessageAttributes"] == md5_of_attributes({"k": {"DataType": "String", "StringValue": "v"}})
    (failed,) = r["Failed"]
    assert failed["Id"] == "bad" and failed["SenderFault"] is True and failed["Code"]
    bodies = sorted(m["Body"] for m in receive_all(sqs, url, 2))
    assert bodies == ["one", "two"]


def test_delete_and_visibility_batches(sqs, make_queue):
    url = make_queue(attributes={"VisibilityTimeout": "30"})
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{i}"} for i in range(4)])
    msgs = receive_all(sqs, url, 4)
    assert len(msgs) == 4
    forged = base64.urlsafe_b64encode(b"not a handle this endpoint minted").decode()

    # Release two and try to release a forged one: two successes, one per-entry failure.
    r = sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "ReceiptHandle": msgs[0]["ReceiptHandle"], "VisibilityTimeout": 0},
            {"Id": "b", "ReceiptHandle": msgs[1]["ReceiptHandle"], "VisibilityTimeout": 0},
            {"Id": "f", "ReceiptHandle": forged, "VisibilityTimeout": 0},
        ],
    )
    assert sorted(e["Id"] for e in r["Successful"]) == ["a", "b"]
    assert [(e["Id"], e["Code"]) for e in r["Failed"]] == [("f", "ReceiptHandleIsInvalid")]

    r = sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "c", "ReceiptHandle": msgs[2]["ReceiptHandle"]},
            {"Id": "d", "ReceiptHandle": msgs[3]["ReceiptHandle"]},
            {"Id": "f", "ReceiptHandle": forged},
        ],
    )
    assert sorted(e["Id"] for e in r["Successful"]) == ["c", "d"]
    assert [(e["Id"], e["Code"]) for e in r["Failed"]] == [("f", "ReceiptHandleIsInvalid")]

    again = receive_all(sqs, url, 2, MessageSystemAttributeNames=["ApproximateReceiveCount"])
    assert sorted(m["Body"] for m in again) == sorted([msgs[0]["Body"], msgs[1]["Body"]])
    assert [m["Attributes"]["ApproximateReceiveCount"] for m in again] == ["2", "2"]


@pytest.mark.parametrize("op", ["send", "delete", "visibility"])
def test_batch_request_errors(sqs, make_queue, op):
    url = make_queue()

    def call(entries):
        if op == "send":
            return sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": i, "MessageBody": "x"} for i in entries])
        if op == "delete":
            return sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": i, "ReceiptHandle": "h"} for i in entries])
        return sqs.change_message_visibility_batch(
            QueueUrl=url, Entries=[{"Id": i, "ReceiptHandle": "h", "VisibilityTimeout": 0} for i in entries]
        )

    with pytest.raises(sqs.exceptions.EmptyBatchRequest):
        call([])
    with pytest.raises(sqs.exceptions.TooManyEntriesInBatchRequest):
        call([f"e{i}" for i in range(11)])
    with pytest.raises(sqs.exceptions.BatchEntryIdsNotDistinct):
        call(["same", "same"])


# --- visibility -----------------------------------------------------------------------


def test_visibility_timeout_expiry_redelivers(sqs, make_queue):
    url = make_queue(attributes={"VisibilityTimeout": "1"})
    sqs.send_message(QueueUrl=url, MessageBody="again")
    (m1,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, MessageSystemAttributeNames=["All"])["Messages"]
    assert not sqs.receive_message(QueueUrl=url).get("Messages")
    time.sleep(1.5)
    (m2,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, MessageSystemAttributeNames=["All"])["Messages"]
    assert m2["MessageId"] == m1["MessageId"]
    assert m2["Attributes"]["ApproximateReceiveCount"] == "2"
    assert m2["ReceiptHandle"] != m1["ReceiptHandle"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m2["ReceiptHandle"])


def test_change_visibility_zero_releases_and_extend_holds(sqs, make_queue):
    url = make_queue(attributes={"VisibilityTimeout": "30"})
    sqs.send_message(QueueUrl=url, MessageBody="v")
    (m,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2)["Messages"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    (m,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, VisibilityTimeout=1)["Messages"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=20)
    time.sleep(1.5)
    assert not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages")
    # The handle still addresses the extended lease.
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert attrs(sqs, url, "ApproximateNumberOfMessagesNotVisible")["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_change_visibility_after_the_visibility_ended_succeeds_and_changes_nothing(sqs, make_queue):
    # As SQS answers (LocalStack's AWS recording of the same call): 200, the message stays visible.
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="x")
    (m,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, VisibilityTimeout=1)["Messages"]
    time.sleep(1.5)
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=10)
    (again,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2)["Messages"]
    assert again["MessageId"] == m["MessageId"]
    # The old handle, while the newer delivery holds the message: its delete deletes
    # nothing ("the message will not be deleted") and its change answers success.
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=10)
    # The newer delivery's visibility ends; its late delete deletes the visible message and
    # a change by its handle is then refused.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"], VisibilityTimeout=1)
    time.sleep(1.5)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])
    with pytest.raises(sqs.exceptions.ClientError) as e:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"], VisibilityTimeout=10)
    assert e.value.response["Error"]["Code"] in ("InvalidParameterValue", "InvalidParameterValueException")
    assert not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages")


# --- long poll and delays -------------------------------------------------------------


def test_long_poll_returns_promptly_on_send(sqs, make_queue):
    url = make_queue()
    threading.Timer(1.0, lambda: sqs.send_message(QueueUrl=url, MessageBody="late")).start()
    t0 = time.monotonic()
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10)
    took = time.monotonic() - t0
    assert [m["Body"] for m in r.get("Messages", [])] == ["late"]
    assert 0.8 < took < 5, took


def test_long_poll_on_empty_queue_waits(sqs, make_queue):
    url = make_queue()
    t0 = time.monotonic()
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
    took = time.monotonic() - t0
    assert not r.get("Messages")
    assert 0.8 < took < 4, took


def test_per_message_delay(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=2)
    assert attrs(sqs, url, "ApproximateNumberOfMessagesDelayed")["ApproximateNumberOfMessagesDelayed"] == "1"
    assert not sqs.receive_message(QueueUrl=url).get("Messages")
    msgs = receive_all(sqs, url, 1, wait_total=6)
    assert [m["Body"] for m in msgs] == ["later"]
    assert attrs(sqs, url, "ApproximateNumberOfMessagesDelayed")["ApproximateNumberOfMessagesDelayed"] == "0"


def test_queue_delay(sqs, make_queue):
    url = make_queue(attributes={"DelaySeconds": "2"})
    t0 = time.monotonic()
    sqs.send_message(QueueUrl=url, MessageBody="queue-delayed")
    assert not sqs.receive_message(QueueUrl=url).get("Messages")
    msgs = receive_all(sqs, url, 1, wait_total=6)
    assert [m["Body"] for m in msgs] == ["queue-delayed"]
    assert time.monotonic() - t0 > 1.5


# --- FIFO -----------------------------------------------------------------------------


def test_fifo_order_per_group(sqs, make_queue):
    url = make_queue(fifo=True)
    for i in range(5):
        for g in ("A", "B"):
            sqs.send_message(QueueUrl=url, MessageBody=f"{g}{i}", MessageGroupId=g, MessageDeduplicationId=f"{g}-{i}")
    seen = {"A": [], "B": []}
    seqs = {"A": [], "B": []}
    deadline = time.monotonic() + 10
    while sum(map(len, seen.values())) < 10 and time.monotonic() < deadline:
        r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, MessageSystemAttributeNames=["All"])
        for m in r.get("Messages", []):
            g = m["Attributes"]["MessageGroupId"]
            seen[g].append(m["Body"])
            seqs[g].append(int(m["Attributes"]["SequenceNumber"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert seen == {g: [f"{g}{i}" for i in range(5)] for g in "AB"}
    for g in "AB":
        assert seqs[g] == sorted(seqs[g]) and len(set(seqs[g])) == 5


def test_fifo_dedup_id_gives_same_message_id_and_one_delivery(sqs, make_queue):
    url = make_queue(fifo=True)
    a = sqs.send_message(QueueUrl=url, MessageBody="once", MessageGroupId="g", MessageDeduplicationId="d1")
    b = sqs.send_message(QueueUrl=url, MessageBody="once", MessageGroupId="g", MessageDeduplicationId="d1")
    assert a["MessageId"] == b["MessageId"]
    (m,) = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2)["Messages"]
    assert m["MessageId"] == a["MessageId"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages")


def test_fifo_content_based_dedup(sqs, make_queue):
    url = make_queue(fifo=True, attributes={"ContentBasedDeduplication": "true"})
    a = sqs.send_message(QueueUrl=url, MessageBody="same body", MessageGroupId="g")
    b = sqs.send_message(QueueUrl=url, MessageBody="same body", MessageGroupId="g")
    c = sqs.send_message(QueueUrl=url, MessageBody="other body", MessageGroupId="g")
    assert a["MessageId"] == b["MessageId"] != c["MessageId"]
    bodies = []
    for _ in range(4):
        r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for m in r.get("Messages", []):
            bodies.append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        if len(bodies) >= 2:
            break
    assert bodies == ["same body", "other body"]


def test_fifo_batch_of_one_claim_is_one_gesture(sqs, make_queue):
    url = make_queue(fifo=True)
    sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": str(i), "MessageBody": f"g{i}", "MessageGroupId": "g", "MessageDeduplicationId": f"d{i}"} for i in range(4)],
    )
    first = receive_all(sqs, url, 4, wait_total=4)
    assert [m["Body"] for m in first] == ["g0", "g1", "g2", "g3"]
    # The error-path gesture of every consumer library: release everything just received.
    r = sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0} for i, m in enumerate(first)],
    )
    assert sorted(e["Id"] for e in r["Successful"]) == ["0", "1", "2", "3"]
    assert not r.get("Failed")
    second = receive_all(sqs, url, 4, wait_total=4)
    assert [m["Body"] for m in second] == ["g0", "g1", "g2", "g3"]
    # Deletes out of order, in one batch: all succeed and nothing is redelivered.
    r = sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[{"Id": str(i), "ReceiptHandle": second[i]["ReceiptHandle"]} for i in (2, 0, 3, 1)],
    )
    assert sorted(e["Id"] for e in r["Successful"]) == ["0", "1", "2", "3"]
    assert not r.get("Failed")
    assert not sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages")


def test_standard_queue_in_flight_is_not_bounded_by_its_width(sqs, make_queue):
    # Messages in flight are held by visibility timers, not lanes: one lane, all three at once.
    url = make_queue(attributes={"queen.partitions": "1"})
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["queen.partitions"])["Attributes"]["queen.partitions"] == "1"
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"w{i}"} for i in range(3)])
    r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, VisibilityTimeout=30)
    assert sorted(m["Body"] for m in r["Messages"]) == ["w0", "w1", "w2"]
    sqs.send_message(QueueUrl=url, MessageBody="w3")
    (m,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2)["Messages"]
    assert m["Body"] == "w3", "the lane is not blocked by the three in flight"


# --- dead letters and move tasks ------------------------------------------------------


def test_redrive_to_dead_letter_queue_and_move_back(sqs, make_queue):
    dlq = make_queue("dlq")
    dlq_arn = queue_arn(sqs, dlq)
    src = make_queue(
        "src",
        attributes={
            "VisibilityTimeout": "30",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "2"}),
        },
    )
    src_name = src.rsplit("/", 1)[1]
    sent = sqs.send_message(QueueUrl=src, MessageBody="poison")
    for _ in range(2):
        (m,) = sqs.receive_message(QueueUrl=src, WaitTimeSeconds=2, VisibilityTimeout=1)["Messages"]
        time.sleep(1.2)  # let the lease lapse: that is a failed delivery
    # The third receive moves it instead of delivering it.
    assert not sqs.receive_message(QueueUrl=src, WaitTimeSeconds=1).get("Messages")

    (copy,) = receive_all(sqs, dlq, 1, MessageAttributeNames=["All"], MessageSystemAttributeNames=["All"])
    assert copy["Body"] == "poison"
    surfaced = {**copy.get("Attributes", {})}
    surfaced.update({k: v.get("StringValue") for k, v in copy.get("MessageAttributes", {}).items()})
    assert copy["MessageId"] == sent["MessageId"]  # its own id, as SQS keeps it
    assert copy["Attributes"]["DeadLetterQueueSourceArn"] == queue_arn(sqs, src)
    # `All` answers what AWS answers; our extensions come only when named.
    assert not [k for k in surfaced if k.startswith("queen.")], surfaced
    sqs.change_message_visibility(QueueUrl=dlq, ReceiptHandle=copy["ReceiptHandle"], VisibilityTimeout=0)
    (again,) = receive_all(
        sqs, dlq, 1, MessageSystemAttributeNames=["All", "queen.originalMessageId", "queen.sourceQueue"]
    )
    assert again["Attributes"].get("queen.originalMessageId") == sent["MessageId"]
    assert src_name in again["Attributes"].get("queen.sourceQueue", "")
    sqs.change_message_visibility(QueueUrl=dlq, ReceiptHandle=again["ReceiptHandle"], VisibilityTimeout=0)

    assert sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"] == [src]

    task = sqs.start_message_move_task(SourceArn=dlq_arn)
    assert task["TaskHandle"]
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        if attrs(sqs, src, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"] == "1":
            break
        time.sleep(0.3)
    assert attrs(sqs, src, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"] == "1"
    assert attrs(sqs, dlq, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"] == "0"
    tasks = sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"]
    assert tasks and tasks[0]["SourceArn"] == dlq_arn
    assert tasks[0]["Status"] in ("RUNNING", "COMPLETED")


def test_queue_naming_itself_as_dead_letter_target_is_accepted_as_on_sqs(sqs, make_queue):
    # SQS accepts it (LocalStack's AWS-validated test_set_empty_redrive_policy); the queue
    # then keeps delivering its messages (docs/divergences.md).
    url = make_queue()
    arn = queue_arn(sqs, url)
    sqs.set_queue_attributes(
        QueueUrl=url,
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": "1"})},
    )
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]
    assert arn in got["RedrivePolicy"]
    sqs.send_message(QueueUrl=url, MessageBody="m")
    for n in (1, 2):
        # AttributeNames, which Query-era botocore (the query_boto3 suite) knows too.
        ms = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0, WaitTimeSeconds=1,
                                 AttributeNames=["ApproximateReceiveCount"]).get("Messages", [])
        assert [m["Body"] for m in ms] == ["m"], n
        assert ms[0]["Attributes"]["ApproximateReceiveCount"] == str(n)


# --- purge, tags, permissions ---------------------------------------------------------


def test_purge_and_purge_in_progress(sqs, make_queue):
    url = make_queue()
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": "p"} for i in range(3)])
    (held,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2)["Messages"]
    sqs.purge_queue(QueueUrl=url)
    assert not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages")
    got = attrs(sqs, url, "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
    assert got == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}
    with pytest.raises(sqs.exceptions.PurgeQueueInProgress):
        sqs.purge_queue(QueueUrl=url)
    # The queue still works after a purge.
    sqs.send_message(QueueUrl=url, MessageBody="after")
    assert [m["Body"] for m in receive_all(sqs, url, 1)] == ["after"]
    # A handle minted before the purge addresses nothing: AWS's delete contract is success
    # for a stale handle, and what must not happen is an error class other than that one.
    try:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=held["ReceiptHandle"])
    except sqs.exceptions.ReceiptHandleIsInvalid:
        pass


def test_tags(sqs, make_queue):
    url = make_queue(tags={"team": "core", "env": "test"})
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "core", "env": "test"}
    sqs.tag_queue(QueueUrl=url, Tags={"owner": "me", "env": "prod"})
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "core", "env": "prod", "owner": "me"}
    sqs.untag_queue(QueueUrl=url, TagKeys=["team", "absent"])
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"env": "prod", "owner": "me"}
    sqs.untag_queue(QueueUrl=url, TagKeys=["env", "owner"])
    assert not sqs.list_queue_tags(QueueUrl=url).get("Tags")


def test_permissions_are_accepted(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(QueueUrl=url, Label="l1", AWSAccountIds=[ACCOUNT], Actions=["SendMessage"])
    sqs.remove_permission(QueueUrl=url, Label="l1")
    missing = url.rsplit("/", 1)[0] + "/" + uname("missing")
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.add_permission(QueueUrl=missing, Label="l1", AWSAccountIds=[ACCOUNT], Actions=["SendMessage"])


# --- errors with the modelled classes -------------------------------------------------


def test_queue_does_not_exist_for_foreign_and_traversal_urls(sqs, make_queue):
    url = make_queue()
    name = url.rsplit("/", 1)[1]
    for bad in (
        f"{ENDPOINT}/111111111111/{name}",
        f"{ENDPOINT}/{ACCOUNT}/../{ACCOUNT}/{name}",
        f"{ENDPOINT}/{ACCOUNT}/{name}/..",
        f"{ENDPOINT}/{ACCOUNT}/%2e%2e",
    ):
        with pytest.raises(sqs.exceptions.QueueDoesNotExist) as e:
            sqs.send_message(QueueUrl=bad, MessageBody="x")
        assert e.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_deleted_queue_does_not_exist(sqs):
    url = sqs.create_queue(QueueName=uname("gone"))["QueueUrl"]
    sqs.delete_queue(QueueUrl=url)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.receive_message(QueueUrl=url)


def test_forged_receipt_handle_is_invalid(sqs, make_queue):
    url = make_queue()
    other = make_queue()
    sqs.send_message(QueueUrl=other, MessageBody="x")
    (m,) = sqs.receive_message(QueueUrl=other, WaitTimeSeconds=2)["Messages"]
    for handle in ("forged", base64.b64encode(b"x" * 100).decode(), m["ReceiptHandle"][:-4] + "AAAA"):
        with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid):
            sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    # A genuine handle minted for another queue is not this queue's.
    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid):
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
