"""A pytest plugin that proves the suite spoke the Query protocol.

botocore 1.31.80 is the last release whose SQS model is `query`; a later botocore would
silently switch these tests to JSON. Every request boto3 sends is seen here (botocore's
`before-send` event) and its Content-Type recorded; at the end of the session the run
fails unless SQS and SNS requests were sent and every one was a form-encoded Query
request.
"""

import botocore
import botocore.session

EXPECTED_BOTOCORE = "1.31.80"
FORM = "application/x-www-form-urlencoded"
seen = {"sqs": {"form": 0, "other": 0}, "sns": {"form": 0, "other": 0}}
_create_client = botocore.session.Session.create_client


def _recorder(service):
    def record(request, **_kwargs):
        ctype = request.headers.get("Content-Type", b"")
        ctype = ctype.decode() if isinstance(ctype, bytes) else ctype
        seen[service]["form" if ctype.startswith(FORM) else "other"] += 1

    return record


def _create_client_recording(self, service_name, *args, **kwargs):
    client = _create_client(self, service_name, *args, **kwargs)
    if service_name in seen:
        client.meta.events.register("before-send", _recorder(service_name))
    return client


botocore.session.Session.create_client = _create_client_recording


def pytest_report_header(config):
    return f"query_guard: botocore {botocore.__version__} (expected {EXPECTED_BOTOCORE})"


def pytest_sessionfinish(session, exitstatus):
    problems = []
    if botocore.__version__ != EXPECTED_BOTOCORE:
        problems.append(f"botocore is {botocore.__version__}, not {EXPECTED_BOTOCORE}")
    for service, counts in seen.items():
        if counts["other"]:
            problems.append(f"{counts['other']} {service} requests were not Query (form) requests")
    if not seen["sqs"]["form"]:
        problems.append("no SQS Query request was sent")
    print(f"\nquery_guard: Query requests sent: sqs {seen['sqs']['form']}, sns {seen['sns']['form']}")
    if problems and session.testscollected:
        print("query_guard FAILED: " + "; ".join(problems))
        session.exitstatus = 1
