"""SNS `http` subscriptions with a real receiver (issue 24), through boto3: the confirmation
POSTed to the receiver and the notifications after it verify with code that is not ours
(`cryptography` following AWS's algorithm for SignatureVersion 1 and 2, and the published
`sns-message-validator` with its certificate-URL pattern pointed at this endpoint); the
subscriber confirms with a plain GET of SubscribeURL, as a webhook does.

Who makes the POSTs: our host's delivery loop. A runtime without one (`wasmtime serve`,
jco) is given QUEEN_SQS_DELIVERY_TOKEN by its lane, and the test calls the delivery route
itself while it waits, as an operator's periodic call would. The proxy-wasm gateway makes
no calls beyond its broker, so these tests do not run there (docs/divergences.md)."""

import base64
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from sns_message_validator import SNSMessageValidator
from sns_message_validator.exceptions import SignatureVerificationFailureException

if os.environ.get("QUEEN_SQS_COMPAT_RUNTIME") == "gateway":
    pytestmark = pytest.mark.skip(reason="the proxy-wasm gateway makes no calls beyond its broker")

ROUTE = "/_queen-sqs/sns/deliveries"
TOKEN = os.environ.get("QUEEN_SQS_DELIVERY_TOKEN")

SIGNED_FIELDS = {
    "Notification": ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"),
    "SubscriptionConfirmation": ("Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"),
}


class Receiver:
    """A subscriber on a free loopback port: records every POST, answers 200."""

    def __init__(self):
        self.got = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with outer.lock:
                    outer.got.append((dict((k.lower(), v) for k, v in self.headers.items()), body.decode()))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def of_kind(self, kind):
        with self.lock:
            return [(h, b) for h, b in self.got if h.get("x-amz-sns-message-type") == kind]

    def wait_for(self, kind, n, endpoint, timeout=30):
        deadline = time.time() + timeout
        while True:
            if TOKEN:
                requests.post(endpoint + ROUTE, headers={"x-queen-sqs-delivery-token": TOKEN}, timeout=60)
            got = self.of_kind(kind)
            if len(got) >= n:
                return got
            assert time.time() < deadline, f"{len(got)} of {n} {kind} POSTs in {timeout} s"
            time.sleep(0.1)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.server.shutdown()


def verify(doc):
    """Verifies `doc`'s signature with the certificate at its SigningCertURL, as AWS documents."""
    cert = x509.load_pem_x509_certificate(requests.get(doc["SigningCertURL"], timeout=10).content)
    digest = hashes.SHA1() if doc["SignatureVersion"] == "1" else hashes.SHA256()
    text = "".join(f"{k}\n{doc[k]}\n" for k in SIGNED_FIELDS[doc["Type"]] if k in doc).encode()
    signature = base64.b64decode(doc["Signature"])
    cert.public_key().verify(signature, text, padding.PKCS1v15(), digest)
    with pytest.raises(InvalidSignature):
        cert.public_key().verify(signature, text + b"x", padding.PKCS1v15(), digest)


@pytest.mark.parametrize("version", ["1", "2"])
def test_the_confirmation_and_the_notifications_verify_and_a_get_confirms(sns, make_topic, endpoint, receiver, version):
    arn = make_topic(attributes={"SignatureVersion": version})
    answer = sns.subscribe(TopicArn=arn, Protocol="http", Endpoint=receiver.url("/hook"))
    assert answer["SubscriptionArn"] == "pending confirmation"
    ((headers, body),) = receiver.wait_for("SubscriptionConfirmation", 1, endpoint)
    confirmation = json.loads(body)
    assert headers["x-amz-sns-topic-arn"] == arn
    assert confirmation["Type"] == "SubscriptionConfirmation" and confirmation["TopicArn"] == arn
    verify(confirmation)
    # Confirmed by a plain GET, as a webhook confirms (no credentials).
    got = requests.get(confirmation["SubscribeURL"], timeout=10)
    assert got.status_code == 200, got.text
    (sub,) = sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
    assert sub["Protocol"] == "http" and sub["SubscriptionArn"].startswith(arn + ":")
    sns.publish(TopicArn=arn, Message='a "signed" message\nover two lines', Subject="subject")
    ((headers, body),) = receiver.wait_for("Notification", 1, endpoint)
    notification = json.loads(body)
    assert headers["x-amz-sns-subscription-arn"] == sub["SubscriptionArn"]
    assert notification["Message"] == 'a "signed" message\nover two lines'
    assert notification["SignatureVersion"] == version
    verify(notification)


def test_a_published_validator_accepts_what_is_posted(sns, make_topic, endpoint, receiver):
    arn = make_topic()
    sub = sns.subscribe(TopicArn=arn, Protocol="http", Endpoint=receiver.url("/v"), ReturnSubscriptionArn=True)
    assert sub["SubscriptionArn"].startswith(arn + ":")
    ((_, body),) = receiver.wait_for("SubscriptionConfirmation", 1, endpoint)
    confirmation = json.loads(body)
    validator = SNSMessageValidator(cert_url_regex="^" + re.escape(endpoint) + "/SimpleNotificationService-")
    validator.validate_message(confirmation)
    sns.confirm_subscription(TopicArn=arn, Token=confirmation["Token"])
    sns.publish(TopicArn=arn, Message="validated")
    ((_, body),) = receiver.wait_for("Notification", 1, endpoint)
    notification = json.loads(body)
    validator.validate_message(notification)
    with pytest.raises(SignatureVerificationFailureException):
        validator.validate_message(dict(notification, Message="not what was published"))
