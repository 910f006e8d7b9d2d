"""The `aws` CLI (v1, AWS JSON 1.0 for SQS, Query for SNS) as a subprocess, its JSON
output parsed."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ENDPOINT, md5_of_body, uname


def aws_binary():
    beside = os.path.join(os.path.dirname(sys.executable), "aws")
    return beside if os.path.exists(beside) else shutil.which("aws")


def aws(*args, check=True):
    env = dict(os.environ)
    env.update(
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_MAX_ATTEMPTS="1",
        AWS_PAGER="",
    )
    proc = subprocess.run(
        [aws_binary(), "--endpoint-url", ENDPOINT, "--output", "json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    if check:
        assert proc.returncode == 0, (args, proc.returncode, proc.stderr)
        return json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc


@pytest.fixture
def cli_queue():
    urls = []

    def _make(prefix="cli"):
        name = uname(prefix)
        url = aws("sqs", "create-queue", "--queue-name", name, "--attributes", "VisibilityTimeout=5")["QueueUrl"]
        urls.append(url)
        return name, url

    yield _make
    for url in urls:
        aws("sqs", "delete-queue", "--queue-url", url, check=False)


def test_cli_is_installed():
    assert aws_binary(), "aws CLI not found next to the interpreter or on PATH"
    out = subprocess.run([aws_binary(), "--version"], capture_output=True, text=True)
    assert "aws-cli/1." in (out.stdout + out.stderr)


def test_queue_lifecycle(cli_queue):
    name, url = cli_queue()
    assert url.endswith("/000000000000/" + name)
    assert url in aws("sqs", "list-queues", "--queue-name-prefix", name)["QueueUrls"]
    assert aws("sqs", "get-queue-url", "--queue-name", name)["QueueUrl"] == url
    got = aws("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "All")["Attributes"]
    assert got["VisibilityTimeout"] == "5"
    assert got["QueueArn"].endswith(":" + name)
    aws("sqs", "delete-queue", "--queue-url", url)
    assert "QueueUrls" not in aws("sqs", "list-queues", "--queue-name-prefix", name)


def test_send_receive_delete(cli_queue):
    _, url = cli_queue()
    body = "from the cli \u00e9"
    sent = aws(
        "sqs",
        "send-message",
        "--queue-url",
        url,
        "--message-body",
        body,
        "--message-attributes",
        json.dumps({"kind": {"DataType": "String", "StringValue": "cli"}}),
    )
    assert sent["MD5OfMessageBody"] == md5_of_body(body)
    got = aws(
        "sqs",
        "receive-message",
        "--queue-url",
        url,
        "--attribute-names",
        "All",
        "--message-attribute-names",
        "All",
        "--wait-time-seconds",
        "2",
        "--max-number-of-messages",
        "10",
    )
    (m,) = got["Messages"]
    assert m["MessageId"] == sent["MessageId"]
    assert m["Body"] == body
    assert m["MessageAttributes"]["kind"]["StringValue"] == "cli"
    assert m["Attributes"]["ApproximateReceiveCount"] == "1"
    aws("sqs", "delete-message", "--queue-url", url, "--receipt-handle", m["ReceiptHandle"])
    again = aws("sqs", "receive-message", "--queue-url", url, "--wait-time-seconds", "1")
    assert not again.get("Messages")


def test_purge(cli_queue):
    _, url = cli_queue()
    for i in range(3):
        aws("sqs", "send-message", "--queue-url", url, "--message-body", f"m{i}")
    assert aws("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "ApproximateNumberOfMessages")[
        "Attributes"
    ] == {"ApproximateNumberOfMessages": "3"}
    aws("sqs", "purge-queue", "--queue-url", url)
    assert aws("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "ApproximateNumberOfMessages")[
        "Attributes"
    ] == {"ApproximateNumberOfMessages": "0"}


def test_missing_queue_is_an_error():
    proc = aws("sqs", "get-queue-url", "--queue-name", uname("missing"), check=False)
    assert proc.returncode != 0
    assert "AWS.SimpleQueueService.NonExistentQueue" in proc.stderr or "QueueDoesNotExist" in proc.stderr, proc.stderr


def test_sns_topic_subscribe_publish(cli_queue):
    topic_name = uname("clitopic")
    arn = aws("sns", "create-topic", "--name", topic_name)["TopicArn"]
    try:
        assert arn.endswith(":" + topic_name)
        assert arn in [t["TopicArn"] for t in aws("sns", "list-topics")["Topics"]]
        _, url = cli_queue("clisub")
        qarn = aws("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "QueueArn")["Attributes"][
            "QueueArn"
        ]
        sub = aws(
            "sns",
            "subscribe",
            "--topic-arn",
            arn,
            "--protocol",
            "sqs",
            "--notification-endpoint",
            qarn,
            "--attributes",
            "RawMessageDelivery=true",
            "--return-subscription-arn",
        )
        assert sub["SubscriptionArn"].startswith(arn + ":")
        pub = aws("sns", "publish", "--topic-arn", arn, "--message", "hello via cli")
        assert pub["MessageId"]
        got = aws("sqs", "receive-message", "--queue-url", url, "--wait-time-seconds", "2")
        assert [m["Body"] for m in got["Messages"]] == ["hello via cli"]
    finally:
        aws("sns", "delete-topic", "--topic-arn", arn, check=False)
