"""SNS notifications verify as AWS documents it ("Verifying the signatures of Amazon SNS
messages"), checked by code that is not ours: `cryptography` following AWS's algorithm for
SignatureVersion 1 (SHA1withRSA) and 2 (SHA256withRSA), and the published validator
`sns-message-validator` (PyPI) with its certificate-URL pattern pointed at this endpoint.
The certificate is fetched from SigningCertURL with no credentials, as a subscriber would."""

import base64
import json
import re

import pytest
import requests
from conftest import queue_arn, receive_all
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from sns_message_validator import SNSMessageValidator
from sns_message_validator.exceptions import SignatureVerificationFailureException

NOTIFICATION_FIELDS = ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type")


def canonical(message):
    return "".join(f"{k}\n{message[k]}\n" for k in NOTIFICATION_FIELDS if k in message)


def notification(sns, sqs, make_topic, make_queue, version, subject=None):
    arn = make_topic(attributes={"SignatureVersion": version})
    url = make_queue()
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn(sqs, url), ReturnSubscriptionArn=True)
    kwargs = {"Subject": subject} if subject else {}
    sns.publish(
        TopicArn=arn,
        Message='a "signed" message\nover two lines',
        MessageAttributes={"n": {"DataType": "Number", "StringValue": "7"}},
        **kwargs,
    )
    (m,) = receive_all(sqs, url, 1)
    return json.loads(m["Body"])


@pytest.mark.parametrize("version", ["1", "2"])
@pytest.mark.parametrize("subject", [None, "a subject"])
def test_a_notification_verifies_with_the_certificate_at_its_url(sns, sqs, make_topic, make_queue, endpoint, version, subject):
    n = notification(sns, sqs, make_topic, make_queue, version, subject)
    assert n["SignatureVersion"] == version
    assert n["SigningCertURL"].startswith(endpoint + "/SimpleNotificationService-")
    got = requests.get(n["SigningCertURL"], timeout=10)
    assert got.status_code == 200, got.text
    cert = x509.load_pem_x509_certificate(got.content)
    digest = hashes.SHA1() if version == "1" else hashes.SHA256()
    signature = base64.b64decode(n["Signature"])
    text = canonical(n).encode()
    cert.public_key().verify(signature, text, padding.PKCS1v15(), digest)
    with pytest.raises(InvalidSignature):
        cert.public_key().verify(signature, text.replace(b"signed", b"Signed"), padding.PKCS1v15(), digest)


def test_a_published_validator_accepts_a_notification_pointed_at_this_endpoint(sns, sqs, make_topic, make_queue, endpoint):
    n = notification(sns, sqs, make_topic, make_queue, "1", subject="validated")
    validator = SNSMessageValidator(cert_url_regex="^" + re.escape(endpoint) + "/SimpleNotificationService-")
    validator.validate_message(n)
    forged = dict(n, Message="not what was published")
    with pytest.raises(SignatureVerificationFailureException):
        validator.validate_message(forged)


def test_the_unsubscribe_url_unsubscribes_with_a_plain_get(sns, sqs, make_topic, make_queue):
    n = notification(sns, sqs, make_topic, make_queue, "1")
    got = requests.get(n["UnsubscribeURL"], timeout=10)
    assert got.status_code == 200, got.text
    assert "<UnsubscribeResponse" in got.text
    subs = sns.list_subscriptions_by_topic(TopicArn=n["TopicArn"])["Subscriptions"]
    assert subs == []
