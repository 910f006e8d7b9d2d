"""amazon-sqs-extended-client 1.0.1 as its README uses it, against the endpoint, with
moto's S3 server as the bucket: payloads over 256 KiB go to S3 and come back, the
receipt handles it rewrites (S3 pointer markers + our handle) work with DeleteMessage,
ChangeMessageVisibility and their batches, and deletes remove the S3 object."""

import json
import time

from conftest import keys

POINTER = "software.amazon.payloadoffloading.PayloadS3Pointer"
LEGACY_POINTER = "com.amazon.sqs.javamessaging.MessageS3Pointer"
LARGE = ("0123456789abcdef\u00e9" * 20000)[:300_000]  # > 256 KiB once UTF-8 encoded


def peek_raw(plain, url):
    """The message as it sits in SQS (the pointer, not the payload), released again."""
    (m,) = plain.receive_message(QueueUrl=url, WaitTimeSeconds=2, MessageAttributeNames=["All"])["Messages"]
    plain.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    return m


def depth(plain, url):
    a = plain.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(a["ApproximateNumberOfMessages"]), int(a["ApproximateNumberOfMessagesNotVisible"])


def test_large_payload_goes_through_s3_and_back(ext, plain, s3, bucket, queue):
    attrs = {"kind": {"DataType": "String", "StringValue": "big"}}
    # (A copy: the library adds its reserved attribute to the dict it is given.)
    ext.send_message(QueueUrl=queue, MessageBody=LARGE, MessageAttributes=dict(attrs))
    (key,) = keys(s3, bucket)
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode() == LARGE

    raw = peek_raw(plain, queue)
    cls, pointer = json.loads(raw["Body"])
    assert (cls, pointer) == (POINTER, {"s3BucketName": bucket, "s3Key": key})
    assert raw["MessageAttributes"]["ExtendedPayloadSize"]["StringValue"] == str(len(LARGE.encode()))
    assert raw["MessageAttributes"]["kind"]["StringValue"] == "big"

    (m,) = ext.receive_message(QueueUrl=queue, WaitTimeSeconds=2, MessageAttributeNames=["All"])["Messages"]
    assert m["Body"] == LARGE
    assert m["MessageAttributes"] == attrs  # the reserved attribute is taken out
    assert m["ReceiptHandle"].startswith(f"-..s3BucketName..-{bucket}-..s3BucketName..--..s3Key..-{key}-..s3Key..-")

    # The rewritten handle works for visibility: hold, then release, then it comes back.
    ext.change_message_visibility(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=60)
    assert depth(plain, queue) == (0, 1)
    ext.change_message_visibility(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    (again,) = ext.receive_message(QueueUrl=queue, WaitTimeSeconds=2, AttributeNames=["ApproximateReceiveCount"])[
        "Messages"
    ]
    assert again["Body"] == LARGE and again["Attributes"]["ApproximateReceiveCount"] == "3"

    ext.delete_payload_from_s3 = True
    ext.delete_message(QueueUrl=queue, ReceiptHandle=again["ReceiptHandle"])
    assert keys(s3, bucket) == []
    assert depth(plain, queue) == (0, 0)


def test_delete_keeps_the_s3_object_unless_asked(ext, plain, s3, bucket, queue):
    ext.send_message(QueueUrl=queue, MessageBody=LARGE)
    (m,) = ext.receive_message(QueueUrl=queue, WaitTimeSeconds=2)["Messages"]
    ext.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
    assert depth(plain, queue) == (0, 0)
    assert len(keys(s3, bucket)) == 1  # delete_payload_from_s3 defaults to False


def test_small_messages_stay_in_sqs_unless_always_through_s3(ext, plain, s3, bucket, queue):
    ext.send_message(QueueUrl=queue, MessageBody="small")
    assert keys(s3, bucket) == []
    assert peek_raw(plain, queue)["Body"] == "small"
    (m,) = ext.receive_message(QueueUrl=queue, WaitTimeSeconds=2)["Messages"]
    assert "-..s3Key..-" not in m["ReceiptHandle"]
    ext.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])

    ext.always_through_s3 = True
    ext.send_message(QueueUrl=queue, MessageBody="small via s3")
    (key,) = keys(s3, bucket)
    assert json.loads(peek_raw(plain, queue)["Body"])[1]["s3Key"] == key
    (m,) = ext.receive_message(QueueUrl=queue, WaitTimeSeconds=2)["Messages"]
    assert m["Body"] == "small via s3"
    ext.delete_payload_from_s3 = True
    ext.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
    assert keys(s3, bucket) == []


def test_batches_with_rewritten_handles(ext, plain, s3, bucket, queue):
    bodies = {"big1": LARGE, "big2": LARGE[::-1], "small": "tiny"}
    r = ext.send_message_batch(QueueUrl=queue, Entries=[{"Id": k, "MessageBody": v} for k, v in bodies.items()])
    assert sorted(e["Id"] for e in r["Successful"]) == sorted(bodies)
    assert len(keys(s3, bucket)) == 2

    got = []
    deadline = time.monotonic() + 5
    while len(got) < 3 and time.monotonic() < deadline:
        got += ext.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    assert sorted(m["Body"] for m in got) == sorted(bodies.values())
    pointed = [m for m in got if "-..s3Key..-" in m["ReceiptHandle"]]
    assert len(pointed) == 2

    vis = ext.change_message_visibility_batch(
        QueueUrl=queue,
        Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 60} for i, m in enumerate(got)],
    )
    assert len(vis["Successful"]) == 3 and not vis.get("Failed")
    ext.delete_payload_from_s3 = True
    d = ext.delete_message_batch(
        QueueUrl=queue, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
    )
    assert len(d["Successful"]) == 3 and not d.get("Failed")
    assert keys(s3, bucket) == []
    assert depth(plain, queue) == (0, 0)


def test_legacy_attribute_and_pointer(ext, plain, s3, bucket, queue):
    ext.use_legacy_attribute = True
    ext.send_message(QueueUrl=queue, MessageBody=LARGE)
    raw = peek_raw(plain, queue)
    assert json.loads(raw["Body"])[0] == LEGACY_POINTER
    assert "SQSLargePayloadSize" in raw["MessageAttributes"]
    (m,) = ext.receive_message(QueueUrl=queue, WaitTimeSeconds=2)["Messages"]
    assert m["Body"] == LARGE
    ext.delete_payload_from_s3 = True
    ext.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
    assert keys(s3, bucket) == [] and depth(plain, queue) == (0, 0)


def test_sqs_traffic_reached_the_endpoint_not_the_stand_in(ext, queue):
    # moto serves SQS too: make sure the queue exists here and not there.
    import boto3
    from conftest import S3_ENDPOINT

    moto_sqs = boto3.client("sqs", endpoint_url=S3_ENDPOINT, region_name="us-east-1")
    assert queue.rsplit("/", 1)[1] not in " ".join(moto_sqs.list_queues().get("QueueUrls", []))
    assert ext.get_queue_url(QueueName=queue.rsplit("/", 1)[1])["QueueUrl"] == queue
