#!/usr/bin/env python3
"""Writes tests/data/sigv4/vectors.json: requests signed by botocore's own SigV4 signer,
each with the verdict our verifier must reach at a fixed "now".

Needs botocore (pip install botocore). Run from anywhere: python3 tools/sigv4_vectors.py
The output is committed; the Rust test reads it and needs no Python.
"""
import datetime
import hashlib
import json
import os
import sys
import uuid
from unittest import mock

import botocore
import botocore.auth
import botocore.session
from botocore.auth import SigV4Auth, SigV4QueryAuth, _host_from_url
from botocore.awsrequest import AWSRequest, AWSResponse
from botocore.credentials import Credentials

AKID = "AKIDQUEENSQSTEST"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYQUEENSQSKEY"
NOW = datetime.datetime(2026, 11, 30, 12, 0, 0, tzinfo=datetime.timezone.utc)
NOW_UNIX = int(NOW.timestamp())
CREDS = Credentials(AKID, SECRET)

vectors = []


def at(minutes):
    return NOW + datetime.timedelta(minutes=minutes)


def frozen(when):
    # botocore reads the clock through this one function.
    return mock.patch.object(botocore.auth, "get_current_datetime", lambda: when.replace(tzinfo=None))


def split_url(url):
    rest = url.split("://", 1)[1]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else "/"


def as_text(body):
    if body is None:
        return ""
    if isinstance(body, bytes):
        return body.decode("utf-8")
    return body


def record(name, prepared_url, method, headers, body, expect, now=NOW_UNIX, **extra):
    hs = [[k.lower(), as_text(v)] for k, v in headers]
    if not any(k == "host" for k, _ in hs):
        # The HTTP client adds Host; botocore signed the value _host_from_url derives.
        hs.append(["host", _host_from_url(prepared_url)])
    v = {
        "name": name,
        "method": method,
        "path_and_query": split_url(prepared_url),
        "headers": hs,
        "body": as_text(body),
        "now": now,
        "expect": expect,
    }
    v.update(extra)
    vectors.append(v)
    return v


def sign(method, url, body, headers, service, region="us-east-1", when=NOW, context=None, signer=SigV4Auth,
         creds=CREDS, **kw):
    req = AWSRequest(method=method, url=url, data=body, headers=dict(headers))
    if context:
        req.context.update(context)
    with frozen(when):
        signer(creds, service, region, **kw).add_auth(req)
    p = req.prepare()
    return p.url, p.method, list(p.headers.items()), p.body


OK_SQS = {"ok": True, "service": "sqs", "region": "us-east-1"}


def ok(service="sqs", region="us-east-1"):
    return {"ok": True, "service": service, "region": region}


def err(code, status, contains=None):
    e = {"ok": False, "code": code, "status": status}
    if contains:
        e["message_contains"] = contains
    return e


JSON_HEADERS = {
    "X-Amz-Target": "AmazonSQS.SendMessage",
    "Content-Type": "application/x-amz-json-1.0",
}
JSON_BODY = json.dumps({
    "QueueUrl": "http://localhost:9324/000000000000/my-queue",
    "MessageBody": "héllo wörld\r\n",
    "MessageAttributes": {"event": {"DataType": "String", "StringValue": "order.created"}},
}, ensure_ascii=False)
QUERY_HEADERS = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
QUERY_BODY = ("Action=SendMessage&Version=2012-11-05"
              "&QueueUrl=http%3A%2F%2Flocalhost%3A9324%2F000000000000%2Fmy-queue&MessageBody=hello%20world")
SNS_BODY = ("Action=Publish&Version=2010-03-31"
            "&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A000000000000%3Aorders&Message=%7B%22x%22%3A1%7D")


def captured_client_request(service, call):
    """A request exactly as a botocore client sends it, captured before it leaves."""
    seen = {}

    def before_send(request, **_):
        seen["r"] = request
        r = AWSResponse(request.url, 200, {}, None)
        r._content = b"{}" if service == "sqs" else b"<PublishResponse/>"
        return r

    s = botocore.session.get_session()
    c = s.create_client(service, region_name="us-east-1", endpoint_url="http://localhost:9324",
                        aws_access_key_id=AKID, aws_secret_access_key=SECRET)
    c.meta.events.register("before-send", before_send)
    # A fixed invocation id keeps the generated file stable between runs.
    fixed_id = uuid.UUID("00000000-0000-4000-8000-000000000001")
    with frozen(NOW), mock.patch.object(uuid, "uuid4", lambda: fixed_id):
        try:
            call(c)
        except Exception:
            pass  # the fake answer need not parse; the request is what we want
    r = seen["r"]
    return r.url, r.method, list(r.headers.items()), r.body


def main():
    # --- valid -----------------------------------------------------------------------
    url, m, h, b = captured_client_request(
        "sqs", lambda c: c.send_message(QueueUrl="http://localhost:9324/000000000000/my-queue",
                                        MessageBody="from the real client"))
    record("client_sqs_json_send_message", url, m, h, b, ok())

    url, m, h, b = captured_client_request(
        "sns", lambda c: c.publish(TopicArn="arn:aws:sns:us-east-1:000000000000:orders", Message="hi"))
    record("client_sns_query_publish", url, m, h, b, ok("sns"))

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs")
    json_valid = record("header_sqs_json", url, m, h, b, ok())

    url, m, h, b = sign("POST", "http://localhost:9324/", QUERY_BODY, QUERY_HEADERS, "sqs")
    record("header_sqs_query", url, m, h, b, ok())

    url, m, h, b = sign("POST", "http://localhost:9324/", SNS_BODY, QUERY_HEADERS, "sns")
    record("header_sns_query", url, m, h, b, ok("sns"))

    url, m, h, b = sign("POST", "http://localhost:9324/000000000000/my-queue",
                        "Action=ReceiveMessage&Version=2012-11-05&MaxNumberOfMessages=10", QUERY_HEADERS, "sqs")
    record("header_queue_url_path", url, m, h, b, ok())

    url, m, h, b = sign("POST", "http://sqs.local:8080/", JSON_BODY, JSON_HEADERS, "sqs", region="eu-west-3")
    record("header_other_region_and_port", url, m, h, b, ok("sqs", "eu-west-3"))

    url, m, h, b = sign("POST", "https://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs",
                        context={"payload_signing_enabled": False})
    assert dict(h).get("X-Amz-Content-SHA256") == "UNSIGNED-PAYLOAD"
    # Refused: the body must be signed (docs/hardening.md, issue 10).
    unsigned = record("header_unsigned_payload", url, m, h, b,
                      err("SignatureDoesNotMatch", 403, "UNSIGNED-PAYLOAD"))

    sha = hashlib.sha256(JSON_BODY.encode()).hexdigest()
    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY,
                        dict(JSON_HEADERS, **{"X-Amz-Content-SHA256": sha}), "sqs")
    hashed = record("header_explicit_content_sha256", url, m, h, b, ok())

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY,
                        dict(JSON_HEADERS, **{"X-Custom-Note": "  spaced    out\tvalue  "}), "sqs")
    record("header_value_whitespace_is_trimmed_and_collapsed", url, m, h, b, ok())

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs",
                        creds=Credentials(AKID, SECRET, "FQoGZXIvYXdzEXAMPLESESSIONTOKEN"))
    record("header_with_session_token", url, m, h, b, ok())

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs", when=at(-14))
    record("header_14_minutes_old", url, m, h, b, ok())
    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs", when=at(14))
    record("header_14_minutes_ahead", url, m, h, b, ok())

    url, m, h, b = sign("GET", "http://localhost:9324/?Action=ListQueues&Version=2012-11-05&QueueNamePrefix=my%20q",
                        None, {}, "sqs")
    record("header_get_with_query", url, m, h, b, ok())

    presign_url = ("http://localhost:9324/?Action=ReceiveMessage&Version=2012-11-05"
                   "&QueueUrl=http%3A%2F%2Flocalhost%3A9324%2F000000000000%2Fmy-queue&WaitTimeSeconds=0")
    url, m, h, b = sign("GET", presign_url, None, {}, "sqs", signer=SigV4QueryAuth, expires=300)
    presigned = record("presigned_get", url, m, h, b, ok())

    url, m, h, b = sign("GET", presign_url, None, {}, "sns", region="ap-southeast-2", signer=SigV4QueryAuth,
                        expires=300, creds=Credentials(AKID, SECRET, "SESSIONTOKEN/with+chars="))
    record("presigned_get_sns_with_token", url, m, h, b, ok("sns", "ap-southeast-2"))

    url, m, h, b = sign("GET", presign_url, None, {}, "sqs", signer=SigV4QueryAuth, expires=300, when=at(-4))
    record("presigned_4_minutes_into_5", url, m, h, b, ok())

    # --- refused ---------------------------------------------------------------------
    v = dict(json_valid, name="tampered_body", body=json_valid["body"].replace("order.created", "order.deleted"),
             expect=err("SignatureDoesNotMatch", 403, "does not match"))
    vectors.append(v)

    v = dict(json_valid, name="tampered_signed_header",
             headers=[[k, "AmazonSQS.DeleteQueue" if k == "x-amz-target" else val] for k, val in json_valid["headers"]],
             expect=err("SignatureDoesNotMatch", 403, "does not match"))
    vectors.append(v)

    v = dict(json_valid, name="unsigned_header_may_change",
             headers=json_valid["headers"] + [["x-not-signed", "anything"]], expect=ok())
    vectors.append(v)

    v = dict(hashed, name="content_sha256_does_not_match_body", body=hashed["body"].replace("wörld", "world"),
             expect=err("SignatureDoesNotMatch", 403, "x-amz-content-sha256"))
    vectors.append(v)

    v = dict(unsigned, name="unsigned_payload_body_may_change", body=unsigned["body"].replace("wörld", "world"),
             expect=err("SignatureDoesNotMatch", 403, "UNSIGNED-PAYLOAD"))
    vectors.append(v)

    v = dict(presigned, name="presigned_tampered_query",
             path_and_query=presigned["path_and_query"].replace("WaitTimeSeconds=0", "WaitTimeSeconds=20"),
             expect=err("SignatureDoesNotMatch", 403, "does not match"))
    vectors.append(v)

    v = dict(presigned, name="presigned_expired", now=NOW_UNIX + 301,
             expect=err("SignatureDoesNotMatch", 403, "expired"))
    vectors.append(v)

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs", when=at(-16))
    record("header_16_minutes_old", url, m, h, b, err("SignatureDoesNotMatch", 403, "Signature expired"))
    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs", when=at(16))
    record("header_16_minutes_ahead", url, m, h, b, err("SignatureDoesNotMatch", 403, "not yet current"))

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "s3")
    record("wrong_service_s3", url, m, h, b, err("SignatureDoesNotMatch", 403, "correct service"))

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs",
                        creds=Credentials("AKIDNOBODYKNOWS", SECRET))
    record("unknown_access_key", url, m, h, b, err("InvalidClientTokenId", 403))

    url, m, h, b = sign("POST", "http://localhost:9324/", JSON_BODY, JSON_HEADERS, "sqs",
                        creds=Credentials(AKID, "not-the-secret"))
    record("wrong_secret", url, m, h, b, err("SignatureDoesNotMatch", 403, "does not match"))

    v = dict(json_valid, name="missing_authorization",
             headers=[[k, val] for k, val in json_valid["headers"] if k != "authorization"],
             expect=err("MissingAuthenticationToken", 403))
    vectors.append(v)

    def with_auth(name, auth, expect, base=json_valid):
        vectors.append(dict(base, name=name, expect=expect,
                            headers=[[k, auth if k == "authorization" else val] for k, val in base["headers"]]))

    auth = dict(json_valid["headers"])["authorization"]
    with_auth("garbled_no_signature", auth.split(", Signature=")[0], err("IncompleteSignature", 400))
    with_auth("garbled_not_sigv4", "Bearer abc.def", err("IncompleteSignature", 400))
    with_auth("garbled_credential", auth.replace("/aws4_request", ""), err("IncompleteSignature", 400))
    with_auth("scope_date_differs", auth.replace("Credential=%s/20261130" % AKID, "Credential=%s/20261129" % AKID),
              err("SignatureDoesNotMatch", 403, "Date in Credential scope"))
    with_auth("host_not_signed", auth.replace("SignedHeaders=content-type;host;", "SignedHeaders=content-type;"),
              err("SignatureDoesNotMatch", 403, "Host"))
    vectors.append(dict(json_valid, name="no_x_amz_date",
                        headers=[[k, val] for k, val in json_valid["headers"] if k != "x-amz-date"],
                        expect=err("IncompleteSignature", 400, "X-Amz-Date")))

    # Every derived vector must really differ from the one it was derived from.
    seen = set()
    for v in vectors:
        key = json.dumps([v["method"], v["path_and_query"], v["headers"], v["body"], v["now"]])
        assert key not in seen, "vector %s is identical to an earlier one" % v["name"]
        seen.add(key)

    out = {
        "generated_by": "tools/sigv4_vectors.py",
        "botocore": botocore.__version__,
        "credentials": [{"access_key_id": AKID, "secret_access_key": SECRET}],
        "vectors": vectors,
    }
    dest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "sigv4", "vectors.json")
    with open(dest, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(vectors)} vectors to {os.path.normpath(dest)}", file=sys.stderr)


if __name__ == "__main__":
    main()
