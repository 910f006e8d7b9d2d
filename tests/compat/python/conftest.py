"""Fixtures for the real-client suites: boto3 clients pointed at the endpoint, unique
names, queues/topics cleaned up after each test, AWS's MD5 algorithms, and a raw SigV4
signer for the requests boto3 will not send (Query protocol, bad input)."""

import hashlib
import json
import os
import struct
import time
import uuid

import boto3
import pytest
import urllib3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

# No default: a fixed port could be answered by any server (issue 21 item 10).
ENDPOINT = os.environ.get("QUEEN_SQS_ENDPOINT")
if not ENDPOINT:
    raise pytest.UsageError(
        "QUEEN_SQS_ENDPOINT is not set: the suites run against the endpoint a script started and checked (scripts/compat.sh and the lanes set it); there is no default port"
    )
REGION = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
ACCESS_KEY = os.environ.get("AWS_ACCESS_KEY_ID", "test")
SECRET_KEY = os.environ.get("AWS_SECRET_ACCESS_KEY", "test")

# One attempt only: a retry would hide the first answer, and the clock-skew test must not
# be corrected by botocore behind our back.
NO_RETRY = Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=30)


def make_client(service, access_key=ACCESS_KEY, secret_key=SECRET_KEY, config=NO_RETRY):
    return boto3.client(
        service,
        endpoint_url=ENDPOINT,
        region_name=REGION,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        config=config,
    )


def uname(prefix):
    """A name unique to this test run (queue and topic names allow [A-Za-z0-9_-])."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def endpoint():
    return ENDPOINT


@pytest.fixture(scope="session")
def sqs():
    return make_client("sqs")


@pytest.fixture(scope="session")
def sns():
    return make_client("sns")


@pytest.fixture
def make_queue(sqs):
    """Creates a uniquely named queue (suffix `.fifo` when fifo=True) and deletes it after."""
    created = []

    def _make(prefix="q", fifo=False, attributes=None, tags=None):
        name = uname(prefix) + (".fifo" if fifo else "")
        attrs = dict(attributes or {})
        if fifo:
            attrs.setdefault("FifoQueue", "true")
        kwargs = {"QueueName": name, "Attributes": attrs}
        if tags:
            kwargs["tags"] = tags
        url = sqs.create_queue(**kwargs)["QueueUrl"]
        created.append(url)
        return url

    yield _make
    for url in created:
        try:
            sqs.delete_queue(QueueUrl=url)
        except Exception:
            pass


@pytest.fixture
def make_topic(sns):
    created = []

    def _make(prefix="t", fifo=False, attributes=None):
        name = uname(prefix) + (".fifo" if fifo else "")
        attrs = dict(attributes or {})
        if fifo:
            attrs.setdefault("FifoTopic", "true")
        arn = sns.create_topic(Name=name, Attributes=attrs)["TopicArn"]
        created.append(arn)
        return arn

    yield _make
    for arn in created:
        try:
            sns.delete_topic(TopicArn=arn)
        except Exception:
            pass


def queue_arn(sqs, url):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def receive_all(sqs, url, want, wait_total=5.0, **kwargs):
    """Receives until `want` messages arrived or the time is up; returns them in order."""
    got = []
    deadline = time.monotonic() + wait_total
    while len(got) < want and time.monotonic() < deadline:
        left = max(0, min(2, int(deadline - time.monotonic())))
        r = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=min(10, want - len(got)),
            WaitTimeSeconds=left,
            **kwargs,
        )
        got.extend(r.get("Messages", []))
    return got


def drain(sqs, url, want, wait_total=4.0, **kwargs):
    """Everything deliverable within the time, deleted as read (so FIFO groups advance)."""
    got = []
    deadline = time.monotonic() + wait_total
    while time.monotonic() < deadline:
        r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, **kwargs)
        for m in r.get("Messages", []):
            got.append(m)
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        if len(got) >= want and not r.get("Messages"):
            break
    return got


# --- AWS's MD5 algorithms, written from the SQS developer guide's description. ---


def md5_of_body(body):
    return hashlib.md5(body.encode("utf-8")).hexdigest()


def _len_prefixed(b):
    return struct.pack(">I", len(b)) + b


def md5_of_attributes(attrs):
    """MD5 over the attributes sorted by name: each is length-prefixed name, length-prefixed
    data type, one transport byte (1 string, 2 binary), length-prefixed value."""
    buf = b""
    for name in sorted(attrs):
        a = attrs[name]
        buf += _len_prefixed(name.encode("utf-8"))
        buf += _len_prefixed(a["DataType"].encode("utf-8"))
        if "BinaryValue" in a:
            v = a["BinaryValue"]
            buf += b"\x02" + _len_prefixed(v if isinstance(v, bytes) else bytes(v))
        else:
            buf += b"\x01" + _len_prefixed(a["StringValue"].encode("utf-8"))
    return hashlib.md5(buf).hexdigest()


# --- Raw signed requests, for what boto3 will not send. ---


def sign(method, url, body=b"", headers=None, service="sqs", access_key=ACCESS_KEY, secret_key=SECRET_KEY):
    """A botocore-signed AWSRequest's (url, headers, body), ready for `requests`."""
    req = AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
    SigV4Auth(Credentials(access_key, secret_key), service, REGION).add_auth(req)
    prepared = req.prepare()
    return prepared.url, dict(prepared.headers), prepared.body


_HTTP = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5, read=30))


def post(url, body, headers):
    """One POST; answers urllib3's response (`.status`, `.headers`, `.data`)."""
    return _HTTP.request("POST", url, body=body, headers=headers, redirect=False)


def raw_json(action, payload, target_action=None, raw_body=None, service="sqs", close=False):
    """A JSON 1.0 request with a valid signature; `raw_body` overrides the JSON encoding.
    `close` asks for a connection of its own (never returned to the pool), for a request
    the server may answer before reading it whole and then close under the client."""
    body = raw_body if raw_body is not None else json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": f"AmazonSQS.{target_action or action}",
    }
    if close:
        headers["Connection"] = "close"
    url, h, b = sign("POST", ENDPOINT + "/", body, headers, service)
    return post(url, b, h)


def raw_query(params, path="/", service="sqs"):
    """A Query-protocol POST (form body) with a valid signature."""
    from urllib.parse import urlencode

    body = urlencode(params).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    url, h, b = sign("POST", ENDPOINT + path, body, headers, service)
    return post(url, b, h)


def assert_alive(sqs):
    """The endpoint still answers a valid request after a bad one."""
    assert "ResponseMetadata" in sqs.list_queues(MaxResults=1)
