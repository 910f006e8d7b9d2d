"""boto3 1.28.80 / botocore 1.31.80, the last release whose SQS client speaks the Query
protocol (form-encoded requests, XML answers), against the endpoint: what an application
pinned to that boto3 does. query_guard.py fails the run if any request was not Query."""

import json
import time
import uuid

import botocore
import pytest
from conftest import shared

md5_of_body = shared.md5_of_body
md5_of_attributes = shared.md5_of_attributes
queue_arn = shared.queue_arn
uname = shared.uname

ATTRS = {
    "s": {"DataType": "String", "StringValue": "a < b & c > \"d\" 'e'"},
    "n": {"DataType": "Number", "StringValue": "-12.500"},
    "b": {"DataType": "Binary", "BinaryValue": bytes(range(256))},
    "c": {"DataType": "Number.int", "StringValue": "7"},
    "u": {"DataType": "String.utf8", "StringValue": "h\u00e9llo \u2603 \U0001f600"},
}
# XML-hostile and whitespace-significant: the Query answer is XML, so each must survive
# escaping, and \r must not be normalised to \n by the client's XML parser.
BODY = "<msg a=\"1\">&amp; \u00e9\u2603\U0001f600\t\r\n  trailing ]]> </msg>  "


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_botocore_is_the_query_release():
    assert botocore.__version__ == "1.31.80"
    import boto3

    assert boto3.__version__ == "1.28.80"
    model = boto3.session.Session().client("sqs", region_name="us-east-1").meta.service_model
    assert model.protocol == "query"


def test_send_receive_delete_with_typed_attributes(sqs, make_queue):
    url = make_queue()
    sent = sqs.send_message(QueueUrl=url, MessageBody=BODY, MessageAttributes=ATTRS)
    assert sent["MD5OfMessageBody"] == md5_of_body(BODY)
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes(ATTRS)
    uuid.UUID(sent["MessageId"])

    r = sqs.receive_message(
        QueueUrl=url, WaitTimeSeconds=2, AttributeNames=["All"], MessageAttributeNames=["All"]
    )
    (m,) = r["Messages"]
    assert m["Body"] == BODY
    assert m["MD5OfBody"] == md5_of_body(BODY)
    assert m["MessageAttributes"] == ATTRS
    assert m["MD5OfMessageAttributes"] == md5_of_attributes(ATTRS)
    a = m["Attributes"]
    assert a["ApproximateReceiveCount"] == "1"
    # SenderId is not answered (nothing records the sender; src/sqs/receive.rs).
    assert abs(int(a["SentTimestamp"]) / 1000 - time.time()) < 60
    assert int(a["ApproximateFirstReceiveTimestamp"]) >= int(a["SentTimestamp"])

    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert "Messages" not in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)


def test_attribute_name_prefix_filter(sqs, make_queue):
    url = make_queue()
    attrs = {
        "order.id": {"DataType": "String", "StringValue": "1"},
        "order.kind": {"DataType": "String", "StringValue": "k"},
        "other": {"DataType": "String", "StringValue": "x"},
    }
    sqs.send_message(QueueUrl=url, MessageBody="b", MessageAttributes=attrs)
    (m,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, MessageAttributeNames=["order.*"])["Messages"]
    assert set(m["MessageAttributes"]) == {"order.id", "order.kind"}
    assert "Attributes" not in m or "SentTimestamp" not in m["Attributes"]


def test_batches_with_partial_failures(sqs, make_queue):
    url = make_queue()
    r = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "ok1", "MessageBody": "one", "MessageAttributes": {"k": ATTRS["s"]}},
            {"Id": "big", "MessageBody": "bad \u0000 body"},
            {"Id": "ok2", "MessageBody": "two", "DelaySeconds": 0},
        ],
    )
    assert sorted(e["Id"] for e in r["Successful"]) == ["ok1", "ok2"]
    ok1 = next(e for e in r["Successful"] if e["Id"] == "ok1")
    assert ok1["MD5OfMessageBody"] == md5_of_body("one")
    assert ok1["MD5OfMessageAttributes"] == md5_of_attributes({"k": ATTRS["s"]})
    (failed,) = r["Failed"]
    assert failed["Id"] == "big" and failed["SenderFault"] is True
    assert failed["Code"] == "InvalidMessageContents"

    got = shared.receive_all(sqs, url, 2, VisibilityTimeout=30)
    assert sorted(m["Body"] for m in got) == ["one", "two"]
    vis = sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "ReceiptHandle": got[0]["ReceiptHandle"], "VisibilityTimeout": 60},
            {"Id": "bad", "ReceiptHandle": "not-a-handle", "VisibilityTimeout": 60},
        ],
    )
    assert [e["Id"] for e in vis["Successful"]] == ["a"]
    assert [(e["Id"], e["Code"]) for e in vis["Failed"]] == [("bad", "ReceiptHandleIsInvalid")]
    deleted = sqs.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
    )
    assert sorted(e["Id"] for e in deleted["Successful"]) == ["d0", "d1"]
    assert deleted.get("Failed", []) == []


@pytest.mark.parametrize(
    "entries,code",
    [
        ([], "AWS.SimpleQueueService.EmptyBatchRequest"),
        ([{"Id": f"i{i}", "MessageBody": "b"} for i in range(11)], "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"),
        ([{"Id": "same", "MessageBody": "b"}] * 2, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"),
    ],
)
def test_batch_request_errors_have_the_legacy_codes(sqs, make_queue, entries, code):
    url = make_queue()
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert error_of(e) == (code, 400)


def test_fifo_group_order_dedup_and_sequence_numbers(sqs, make_queue):
    url = make_queue(fifo=True)
    ids = []
    for i in range(4):
        r = sqs.send_message(QueueUrl=url, MessageBody=f"m{i}", MessageGroupId="g", MessageDeduplicationId=f"d{i}")
        ids.append(r["MessageId"])
        assert r["SequenceNumber"].isdigit()
    again = sqs.send_message(QueueUrl=url, MessageBody="m0 again", MessageGroupId="g", MessageDeduplicationId="d0")
    assert again["MessageId"] == ids[0]

    r = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2, AttributeNames=["All"], ReceiveRequestAttemptId="att-1"
    )
    bodies = [m["Body"] for m in r["Messages"]]
    assert bodies == ["m0", "m1", "m2", "m3"]
    for m in r["Messages"]:
        assert m["Attributes"]["MessageGroupId"] == "g"
        assert m["Attributes"]["MessageDeduplicationId"].startswith("d")
    seqs = [int(m["Attributes"]["SequenceNumber"]) for m in r["Messages"]]
    assert seqs == sorted(seqs)
    # The group is held while its messages are in flight.
    assert "Messages" not in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    for m in r["Messages"]:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def test_fifo_content_based_dedup_and_missing_group_error(sqs, make_queue):
    url = make_queue(fifo=True, attributes={"ContentBasedDeduplication": "true"})
    a = sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    b = sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    assert a["MessageId"] == b["MessageId"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="no group")
    assert error_of(e) == ("MissingParameter", 400)
    got = shared.drain(sqs, url, 1, wait_total=2)
    assert [m["Body"] for m in got] == ["same"]


def test_queue_attributes_redrive_tags_and_listing(sqs, make_queue):
    prefix = uname("qa")
    dlq = make_queue(prefix)
    url = make_queue(
        prefix,
        attributes={"VisibilityTimeout": "45", "DelaySeconds": "1", "ReceiveMessageWaitTimeSeconds": "2"},
        tags={"team": "x", "cost": "1"},
    )
    policy = json.dumps({"deadLetterTargetArn": queue_arn(sqs, dlq), "maxReceiveCount": "3"})
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": policy, "MessageRetentionPeriod": "3600"})
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["VisibilityTimeout"] == "45"
    assert a["DelaySeconds"] == "1"
    assert a["ReceiveMessageWaitTimeSeconds"] == "2"
    assert a["MessageRetentionPeriod"] == "3600"
    assert json.loads(a["RedrivePolicy"]) == {"deadLetterTargetArn": queue_arn(sqs, dlq), "maxReceiveCount": 3}
    assert a["QueueArn"].endswith(":" + url.rsplit("/", 1)[1])
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "x", "cost": "1"}
    sqs.untag_queue(QueueUrl=url, TagKeys=["cost"])
    sqs.tag_queue(QueueUrl=url, Tags={"env": "test"})
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "x", "env": "test"}
    listed = sqs.list_queues(QueueNamePrefix=prefix)["QueueUrls"]
    assert sorted(listed) == sorted([url, dlq])
    srcs = sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"]
    assert srcs == [url]
    assert sqs.get_queue_url(QueueName=url.rsplit("/", 1)[1])["QueueUrl"] == url


def test_errors_are_client_errors_with_the_models_exception_classes(sqs, make_queue):
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as e:
        sqs.get_queue_url(QueueName=uname("absent"))
    assert error_of(e) == ("AWS.SimpleQueueService.NonExistentQueue", 400)

    url = make_queue()
    with pytest.raises(sqs.exceptions.InvalidAttributeName) as e:
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["NoSuchAttribute"])
    assert error_of(e) == ("InvalidAttributeName", 400)

    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid) as e:
        sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage")
    assert error_of(e) == ("ReceiptHandleIsInvalid", 400)

    with pytest.raises(botocore.exceptions.ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="b", DelaySeconds=901)
    assert error_of(e) == ("InvalidParameterValue", 400)

    name = url.rsplit("/", 1)[1]
    with pytest.raises(sqs.exceptions.QueueNameExists) as e:
        sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "99"})
    assert error_of(e) == ("QueueAlreadyExists", 400)

    sqs.purge_queue(QueueUrl=url)
    with pytest.raises(sqs.exceptions.PurgeQueueInProgress) as e:
        sqs.purge_queue(QueueUrl=url)
    assert error_of(e)[1] == 403


def test_visibility_change_and_redelivery(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="v")
    (m,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, VisibilityTimeout=30)["Messages"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    (again,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, AttributeNames=["ApproximateReceiveCount"])[
        "Messages"
    ]
    assert again["MessageId"] == m["MessageId"]
    assert again["Attributes"]["ApproximateReceiveCount"] == "2"
    assert again["ReceiptHandle"] != m["ReceiptHandle"]
    # The first handle names a lease that is gone: as on AWS the call may succeed, but it
    # must not delete the message now held under the second handle.
    try:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    except botocore.exceptions.ClientError as e:
        assert e.response["Error"]["Code"] == "ReceiptHandleIsInvalid"
    held = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])
    assert held["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "1"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])
    assert "Messages" not in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)


def test_sns_to_sqs_over_query(sns, sqs, make_topic, make_queue):
    topic = make_topic()
    raw_q, env_q = make_queue("raw"), make_queue("env")
    for q, raw in ((raw_q, "true"), (env_q, "false")):
        sns.subscribe(
            TopicArn=topic,
            Protocol="sqs",
            Endpoint=queue_arn(sqs, q),
            Attributes={"RawMessageDelivery": raw, "FilterPolicy": json.dumps({"kind": ["a"]})},
        )
    kept = sns.publish(
        TopicArn=topic, Message=BODY, Subject="s", MessageAttributes={"kind": {"DataType": "String", "StringValue": "a"}}
    )
    sns.publish(TopicArn=topic, Message="filtered out", MessageAttributes={"kind": {"DataType": "String", "StringValue": "b"}})
    (raw,) = shared.drain(sqs, raw_q, 1, wait_total=3, MessageAttributeNames=["All"])
    assert raw["Body"] == BODY
    assert raw["MessageAttributes"]["kind"]["StringValue"] == "a"
    (env,) = shared.drain(sqs, env_q, 1, wait_total=3)
    note = json.loads(env["Body"])
    assert note["Type"] == "Notification" and note["MessageId"] == kept["MessageId"]
    assert note["Message"] == BODY and note["Subject"] == "s"
    assert note["MessageAttributes"]["kind"] == {"Type": "String", "Value": "a"}

    batch = sns.publish_batch(
        TopicArn=topic,
        PublishBatchRequestEntries=[
            {"Id": "1", "Message": "b1", "MessageAttributes": {"kind": {"DataType": "String", "StringValue": "a"}}},
            {"Id": "2", "Message": "b2", "MessageAttributes": {"kind": {"DataType": "String", "StringValue": "a"}}},
        ],
    )
    assert sorted(e["Id"] for e in batch["Successful"]) == ["1", "2"]
    got = shared.drain(sqs, raw_q, 2, wait_total=3)
    assert sorted(m["Body"] for m in got) == ["b1", "b2"]

    with pytest.raises(sns.exceptions.NotFoundException) as e:
        sns.publish(TopicArn=topic + "-absent", Message="x")
    assert error_of(e) == ("NotFound", 404)
    with pytest.raises(sns.exceptions.InvalidParameterException) as e:
        sns.subscribe(TopicArn=topic, Protocol="carrier-pigeon", Endpoint="x")
    assert error_of(e) == ("InvalidParameter", 400)
