"""Fixtures for the SQS extended client suite: the extended client on the endpoint, a
plain boto3 SQS client to see what really went over SQS, an S3 client on the S3 stand-in
(moto's server, started by scripts/frameworks.sh; real S3 is not reachable here), and a
bucket and queue per test, removed afterwards."""

import os
import uuid

import boto3
import botocore.session
import pytest
import sqs_extended_client  # noqa: F401  (registers the extension on boto3's SQS clients)
from botocore.config import Config

# No default: a fixed port could be answered by any server (issue 21 item 10).
ENDPOINT = os.environ.get("QUEEN_SQS_ENDPOINT")
if not ENDPOINT:
    raise pytest.UsageError(
        "QUEEN_SQS_ENDPOINT is not set: the suites run against the endpoint a script started and checked (scripts/compat.sh and the lanes set it); there is no default port"
    )
S3_ENDPOINT = os.environ["AWS_ENDPOINT_URL_S3"]  # the extended client's own S3 client reads it
ONE_TRY = Config(retries={"total_max_attempts": 1, "mode": "standard"})


def _client(service, endpoint):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", config=ONE_TRY)


@pytest.fixture
def s3():
    return _client("s3", S3_ENDPOINT)


@pytest.fixture
def plain():
    """Not extended: the same SQS calls without the library's rewriting. (The library
    replaces boto3's Session class, so this one is made from botocore directly.)"""
    return botocore.session.get_session().create_client(
        "sqs", endpoint_url=ENDPOINT, region_name="us-east-1", config=ONE_TRY
    )


@pytest.fixture
def bucket(s3):
    name = f"ext-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    yield name
    for obj in s3.list_objects_v2(Bucket=name).get("Contents", []):
        s3.delete_object(Bucket=name, Key=obj["Key"])
    s3.delete_bucket(Bucket=name)


@pytest.fixture
def ext(bucket):
    client = _client("sqs", ENDPOINT)
    assert client.s3_client.meta.endpoint_url == S3_ENDPOINT
    client.large_payload_support = bucket
    client.use_legacy_attribute = False
    return client


@pytest.fixture
def queue(ext):
    url = ext.create_queue(QueueName=f"ext-{uuid.uuid4().hex[:12]}")["QueueUrl"]
    assert url.startswith(ENDPOINT)
    yield url
    ext.delete_queue(QueueUrl=url)


def keys(s3, bucket):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))
