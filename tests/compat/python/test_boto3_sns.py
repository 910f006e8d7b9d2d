"""boto3's SNS client (Query and XML) against the endpoint, deliveries read back with the
SQS client: topics, subscriptions, fan-out, filter policies, envelopes, FIFO, batches."""

import base64
import json
import time

import pytest
from botocore.exceptions import ClientError
from conftest import drain, queue_arn, receive_all, uname

ACCOUNT = "000000000000"
SIGNED_FIELDS = ("Signature", "SigningCertURL", "UnsubscribeURL")


def subscribe(sns, sqs, topic_arn, queue_url, **attributes):
    return sns.subscribe(
        TopicArn=topic_arn,
        Protocol="sqs",
        Endpoint=queue_arn(sqs, queue_url),
        Attributes={k: v for k, v in attributes.items()},
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]


# --- topics ---------------------------------------------------------------------------


def test_topic_crud_and_attributes(sns, make_topic):
    arn = make_topic()
    name = arn.rsplit(":", 1)[1]
    assert arn == f"arn:aws:sns:us-east-1:{ACCOUNT}:{name}"
    listed = []
    kwargs = {}
    while True:
        page = sns.list_topics(**kwargs)
        listed += [t["TopicArn"] for t in page["Topics"]]
        if not page.get("NextToken"):
            break
        kwargs = {"NextToken": page["NextToken"]}
    assert arn in listed

    got = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert got["TopicArn"] == arn
    assert got["SubscriptionsPending"] == "0"
    assert got["SubscriptionsConfirmed"] == "0"
    sns.set_topic_attributes(TopicArn=arn, AttributeName="DisplayName", AttributeValue="Shown")
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"]["DisplayName"] == "Shown"

    sns.delete_topic(TopicArn=arn)
    sns.delete_topic(TopicArn=arn)  # idempotent
    with pytest.raises(sns.exceptions.NotFoundException) as e:
        sns.get_topic_attributes(TopicArn=arn)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert e.value.response["Error"]["Code"] == "NotFound"


def test_create_topic_is_idempotent(sns, make_topic):
    arn = make_topic(attributes={"DisplayName": "One"})
    name = arn.rsplit(":", 1)[1]
    assert sns.create_topic(Name=name)["TopicArn"] == arn
    assert sns.create_topic(Name=name, Attributes={"DisplayName": "One"})["TopicArn"] == arn
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.create_topic(Name=name, Attributes={"DisplayName": "Two"})


def test_fifo_topic_attribute_and_suffix_must_agree(sns, make_topic):
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.create_topic(Name=uname("nosuffix"), Attributes={"FifoTopic": "true"})
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.create_topic(Name=uname("suffix") + ".fifo")
    arn = make_topic(fifo=True)
    assert arn.endswith(".fifo")
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"]["FifoTopic"] == "true"


def test_topic_tags(sns, make_topic):
    arn = make_topic()
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "core"}, {"Key": "env", "Value": "test"}])
    tags = {t["Key"]: t["Value"] for t in sns.list_tags_for_resource(ResourceArn=arn)["Tags"]}
    assert tags == {"team": "core", "env": "test"}
    sns.untag_resource(ResourceArn=arn, TagKeys=["team"])
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "env", "Value": "test"}]
    missing = arn + "-missing"
    with pytest.raises(sns.exceptions.ResourceNotFoundException):
        sns.list_tags_for_resource(ResourceArn=missing)
    with pytest.raises(sns.exceptions.ResourceNotFoundException):
        sns.tag_resource(ResourceArn=missing, Tags=[{"Key": "k", "Value": "v"}])


# --- subscriptions --------------------------------------------------------------------


def test_subscribe_list_get_unsubscribe(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    url = make_queue()
    sub = subscribe(sns, sqs, arn, url)
    assert sub.startswith(arn + ":")
    by_topic = sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
    assert [(s["SubscriptionArn"], s["Protocol"], s["Endpoint"]) for s in by_topic] == [
        (sub, "sqs", queue_arn(sqs, url))
    ]
    all_subs = []
    kwargs = {}
    while True:
        page = sns.list_subscriptions(**kwargs)
        all_subs += [s["SubscriptionArn"] for s in page["Subscriptions"]]
        if not page.get("NextToken"):
            break
        kwargs = {"NextToken": page["NextToken"]}
    assert sub in all_subs

    got = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert got["TopicArn"] == arn and got["Protocol"] == "sqs"
    assert got.get("PendingConfirmation", "false") == "false"
    assert "FilterPolicyScope" not in got
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"]["SubscriptionsConfirmed"] == "1"

    sns.unsubscribe(SubscriptionArn=sub)
    assert sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"] == []
    sns.publish(TopicArn=arn, Message="nobody listens")
    assert not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages")


def test_subscribe_is_idempotent_and_refuses_different_attributes(sns, sqs, make_topic, make_queue):
    # Same attributes: the existing ARN. Different ones: InvalidParameter, as AWS answers
    # (the contract page marks this case unsettled and describes ignoring them instead).
    arn = make_topic()
    url = make_queue()
    a = subscribe(sns, sqs, arn, url, RawMessageDelivery="true")
    assert subscribe(sns, sqs, arn, url, RawMessageDelivery="true") == a
    with pytest.raises(sns.exceptions.InvalidParameterException):
        subscribe(sns, sqs, arn, url, RawMessageDelivery="false")
    assert sns.get_subscription_attributes(SubscriptionArn=a)["Attributes"]["RawMessageDelivery"] == "true"
    assert len(sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]) == 1


def test_confirm_subscription_is_invalid_parameter(sns, make_topic):
    arn = make_topic()
    with pytest.raises(sns.exceptions.InvalidParameterException) as e:
        sns.confirm_subscription(TopicArn=arn, Token="some-token")
    assert e.value.response["Error"]["Code"] == "InvalidParameter"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


@pytest.mark.parametrize("protocol,endpoint", [("http", "http://example.com/hook"), ("email", "a@example.com"), ("lambda", "arn:aws:lambda:us-east-1:000000000000:function:f")])
def test_non_sqs_protocol_is_refused(sns, make_topic, protocol, endpoint):
    arn = make_topic()
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.subscribe(TopicArn=arn, Protocol=protocol, Endpoint=endpoint)
    assert sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"] == []


def test_standard_topic_refuses_a_fifo_queue(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    url = make_queue(fifo=True)
    with pytest.raises(sns.exceptions.InvalidParameterException):
        subscribe(sns, sqs, arn, url)


def test_subscribe_to_missing_topic_is_not_found(sns, sqs, make_queue):
    url = make_queue()
    with pytest.raises(sns.exceptions.NotFoundException):
        subscribe(sns, sqs, f"arn:aws:sns:us-east-1:{ACCOUNT}:{uname('missing')}", url)


def test_invalid_filter_policy_is_refused_at_write(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    url = make_queue()
    sub = subscribe(sns, sqs, arn, url)
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue="{not json")
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.set_subscription_attributes(
            SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=json.dumps({"a": [{"numeric": ["<"]}]})
        )
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=json.dumps({"a": ["x"]}))
    got = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert json.loads(got["FilterPolicy"]) == {"a": ["x"]}
    assert got["FilterPolicyScope"] == "MessageAttributes"
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue="")
    assert "FilterPolicy" not in sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]


# --- publish and delivery -------------------------------------------------------------


def test_fan_out_to_three_queues_with_the_envelope(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    urls = [make_queue(f"fan{i}") for i in range(3)]
    for u in urls:
        subscribe(sns, sqs, arn, u)
    pub = sns.publish(
        TopicArn=arn,
        Message="fan-out body",
        Subject="the subject",
        MessageAttributes={
            "color": {"DataType": "String", "StringValue": "red"},
            "n": {"DataType": "Number", "StringValue": "3"},
            "bin": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
        },
    )
    for u in urls:
        (m,) = receive_all(sqs, u, 1)
        env = json.loads(m["Body"])
        assert env["Type"] == "Notification"
        assert env["MessageId"] == pub["MessageId"]
        assert env["TopicArn"] == arn
        assert env["Subject"] == "the subject"
        assert env["Message"] == "fan-out body"
        assert env["SignatureVersion"]
        assert env["Timestamp"].endswith("Z") and "T" in env["Timestamp"]
        for signed in SIGNED_FIELDS:  # verified in test_sns_signatures.py
            assert env[signed], signed
        assert env["MessageAttributes"]["color"] == {"Type": "String", "Value": "red"}
        assert env["MessageAttributes"]["n"] == {"Type": "Number", "Value": "3"}
        assert env["MessageAttributes"]["bin"]["Type"] == "Binary"
        assert base64.b64decode(env["MessageAttributes"]["bin"]["Value"]) == b"\x00\xff"
        assert not sqs.receive_message(QueueUrl=u).get("Messages")


def test_raw_delivery(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    url = make_queue()
    subscribe(sns, sqs, arn, url, RawMessageDelivery="true")
    sns.publish(TopicArn=arn, Message='{"raw": true}', MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}})
    (m,) = receive_all(sqs, url, 1, MessageAttributeNames=["All"])
    assert m["Body"] == '{"raw": true}'
    assert m["MessageAttributes"]["k"] == {"DataType": "String", "StringValue": "v"}


def test_message_structure_json(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    raw = make_queue("raw")
    env = make_queue("env")
    subscribe(sns, sqs, arn, raw, RawMessageDelivery="true")
    subscribe(sns, sqs, arn, env)
    sns.publish(TopicArn=arn, MessageStructure="json", Message=json.dumps({"default": "for everyone", "sqs": "for queues"}))
    assert [m["Body"] for m in receive_all(sqs, raw, 1)] == ["for queues"]
    (m,) = receive_all(sqs, env, 1)
    assert json.loads(m["Body"])["Message"] == "for queues"
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.publish(TopicArn=arn, MessageStructure="json", Message=json.dumps({"sqs": "no default"}))


def test_publish_to_missing_topic_is_not_found(sns):
    with pytest.raises(sns.exceptions.NotFoundException):
        sns.publish(TopicArn=f"arn:aws:sns:us-east-1:{ACCOUNT}:{uname('missing')}", Message="x")


# --- filter policies ------------------------------------------------------------------

ATTR_POLICY = {
    "color": ["red", "blue"],
    "size": [{"numeric": [">", 10, "<=", 20]}],
    "region": [{"prefix": "eu-"}],
    "tier": [{"anything-but": ["free"]}],
    "trace": [{"exists": True}],
}


def s(v):
    return {"DataType": "String", "StringValue": v}


def n(v):
    return {"DataType": "Number", "StringValue": str(v)}


MATCHING = {"color": s("red"), "size": n(15), "region": s("eu-west-1"), "tier": s("gold"), "trace": s("t")}


@pytest.mark.parametrize(
    "label,attributes,delivered",
    [
        ("all match", MATCHING, True),
        ("other listed color", {**MATCHING, "color": s("blue")}, True),
        ("color not listed", {**MATCHING, "color": s("green")}, False),
        ("size at upper bound", {**MATCHING, "size": n(20)}, True),
        ("size at lower bound", {**MATCHING, "size": n(10)}, False),
        ("prefix mismatch", {**MATCHING, "region": s("us-east-1")}, False),
        ("anything-but hit", {**MATCHING, "tier": s("free")}, False),
        ("exists missing", {k: v for k, v in MATCHING.items() if k != "trace"}, False),
        ("no attributes", {}, False),
    ],
)
def test_filter_policy_on_message_attributes(sns, sqs, make_topic, make_queue, label, attributes, delivered):
    arn = make_topic()
    url = make_queue()
    subscribe(sns, sqs, arn, url, FilterPolicy=json.dumps(ATTR_POLICY), RawMessageDelivery="true")
    sns.publish(TopicArn=arn, Message=label, MessageAttributes=attributes)
    got = [m["Body"] for m in receive_all(sqs, url, 1, wait_total=2 if not delivered else 4)]
    assert got == ([label] if delivered else []), label


def test_filter_policy_on_message_body(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    url = make_queue()
    policy = {"order": {"status": ["paid"], "total": [{"numeric": [">=", 100]}], "customer": {"tier": [{"prefix": "g"}]}}}
    subscribe(
        sns,
        sqs,
        arn,
        url,
        FilterPolicy=json.dumps(policy),
        FilterPolicyScope="MessageBody",
        RawMessageDelivery="true",
    )
    bodies = {
        "match": {"order": {"status": "paid", "total": 150, "customer": {"tier": "gold"}}},
        "array value matches": {"order": {"status": ["new", "paid"], "total": 100, "customer": {"tier": "green"}}},
        "wrong status": {"order": {"status": "new", "total": 150, "customer": {"tier": "gold"}}},
        "too small": {"order": {"status": "paid", "total": 99, "customer": {"tier": "gold"}}},
        "nested mismatch": {"order": {"status": "paid", "total": 150, "customer": {"tier": "silver"}}},
        "flat keys do not match nested": {"status": "paid", "total": 150},
    }
    for label, body in bodies.items():
        sns.publish(TopicArn=arn, Message=json.dumps({**body, "label": label}))
    sns.publish(TopicArn=arn, Message="not json at all")
    got = sorted(json.loads(m["Body"])["label"] for m in drain(sqs, url, 2, wait_total=3))
    assert got == ["array value matches", "match"]
    attrs = sns.get_subscription_attributes(
        SubscriptionArn=sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"][0]["SubscriptionArn"]
    )["Attributes"]
    assert attrs["FilterPolicyScope"] == "MessageBody"


# --- FIFO topics ----------------------------------------------------------------------


def test_fifo_topic_to_two_fifo_queues_keeps_group_order(sns, sqs, make_topic, make_queue):
    arn = make_topic(fifo=True)
    q1 = make_queue("f1", fifo=True)
    q2 = make_queue("f2", fifo=True)
    subscribe(sns, sqs, arn, q1, RawMessageDelivery="true")
    subscribe(sns, sqs, arn, q2, RawMessageDelivery="true")
    for i in range(4):
        for g in ("A", "B"):
            sns.publish(TopicArn=arn, Message=f"{g}{i}", MessageGroupId=g, MessageDeduplicationId=f"{g}-{i}")
    # A repeated deduplication id is suppressed.
    sns.publish(TopicArn=arn, Message="A0", MessageGroupId="A", MessageDeduplicationId="A-0")
    per_queue = []
    for q in (q1, q2):
        groups = {"A": [], "B": []}
        for m in drain(sqs, q, 8, wait_total=6, MessageSystemAttributeNames=["MessageGroupId"]):
            groups[m["Attributes"]["MessageGroupId"]].append(m["Body"])
        per_queue.append(groups)
    expected = {g: [f"{g}{i}" for i in range(4)] for g in "AB"}
    assert per_queue[0] == expected
    assert per_queue[1] == expected


def test_fifo_topic_requires_group_id(sns, make_topic):
    arn = make_topic(fifo=True)
    with pytest.raises(sns.exceptions.InvalidParameterException):
        sns.publish(TopicArn=arn, Message="x", MessageDeduplicationId="d")


# --- delete cascade -------------------------------------------------------------------


def test_delete_topic_cascades(sns, sqs, make_topic, make_queue):
    arn = make_topic()
    url = make_queue()
    sub = subscribe(sns, sqs, arn, url)
    sns.delete_topic(TopicArn=arn)
    with pytest.raises(sns.exceptions.NotFoundException) as e:
        sns.list_subscriptions_by_topic(TopicArn=arn)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    listed = []
    kwargs = {}
    while True:
        page = sns.list_subscriptions(**kwargs)
        listed += [x["SubscriptionArn"] for x in page["Subscriptions"]]
        if not page.get("NextToken"):
            break
        kwargs = {"NextToken": page["NextToken"]}
    assert sub not in listed
    with pytest.raises(sns.exceptions.NotFoundException):
        sns.get_subscription_attributes(SubscriptionArn=sub)
    # The queue itself is untouched.
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]


# --- PublishBatch ---------------------------------------------------------------------


def test_publish_batch_with_an_invalid_entry_fails_whole(sns, sqs, make_topic, make_queue):
    # SNS checks every entry before delivering any: one it refuses fails the request.
    arn = make_topic()
    url = make_queue()
    subscribe(sns, sqs, arn, url, RawMessageDelivery="true")
    with pytest.raises(ClientError) as e:
        sns.publish_batch(
            TopicArn=arn,
            PublishBatchRequestEntries=[
                {"Id": "one", "Message": "first"},
                {"Id": "bad", "Message": "not json", "MessageStructure": "json"},
                {"Id": "two", "Message": "second", "MessageAttributes": {"k": s("v")}},
            ],
        )
    assert e.value.response["Error"]["Code"] == "InvalidParameter"
    assert drain(sqs, url, 0) == []
    r = sns.publish_batch(
        TopicArn=arn,
        PublishBatchRequestEntries=[
            {"Id": "one", "Message": "first"},
            {"Id": "two", "Message": "second", "MessageAttributes": {"k": s("v")}},
        ],
    )
    assert sorted(e["Id"] for e in r["Successful"]) == ["one", "two"]
    assert r.get("Failed", []) == []
    assert sorted(m["Body"] for m in drain(sqs, url, 2)) == ["first", "second"]


def test_publish_batch_request_errors(sns, make_topic):
    arn = make_topic()
    with pytest.raises(sns.exceptions.EmptyBatchRequestException):
        sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[])
    with pytest.raises(sns.exceptions.TooManyEntriesInBatchRequestException):
        sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[{"Id": f"e{i}", "Message": "m"} for i in range(11)])
    with pytest.raises(sns.exceptions.BatchEntryIdsNotDistinctException):
        sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[{"Id": "same", "Message": "m"}] * 2)
    with pytest.raises(sns.exceptions.NotFoundException):
        sns.publish_batch(TopicArn=arn + "-missing", PublishBatchRequestEntries=[{"Id": "a", "Message": "m"}])
