#!/usr/bin/env python3
"""botocore as the oracle for the wire layer's Rust tests (src/wire/tests/).

Reads one JSON request on stdin, writes one JSON answer on stdout:

  {"cmd": "models"}
      SQS's and SNS's operation names and exception shapes (with their `error` facts).
  {"cmd": "serialize", "service": "sns", "cases": [{"action", "input"}], "model": PATH?}
      The form body botocore's own Query serializer sends for each input (an input is in the
      JSON protocol's shape: blobs as base64 strings). `model` overrides the service model,
      which is how SQS fixtures are made from the query-era SQS model.
  {"cmd": "parse", "service": "sqs"|"sns", "protocol": "query"|"json",
   "cases": [{"action", "status", "headers", "body"}]}
      What botocore's response parser makes of each response. SQS over Query is parsed
      against the current SQS model rewritten as a query model with the query-era names of
      tools/gen_wire_model.py (its overlay is checked against the real query-era model by
      `gen_wire_model.py --check-query-era`).

Needs python3 and botocore (`pip install botocore`).
"""
import base64
import gzip
import json
import os
import sys

import botocore
from botocore import parsers, serialize
from botocore.awsrequest import prepare_request_dict, create_request_object
from botocore.model import ServiceModel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
import gen_wire_model  # noqa: E402

VERSIONS = {"sqs": "2012-11-05", "sns": "2010-03-31"}


def raw_model(service):
    return gen_wire_model.load_model(service, VERSIONS[service])


def sqs_as_query_model():
    m = raw_model("sqs")
    m = dict(m)
    m["shapes"] = gen_wire_model.apply_overlay(m, gen_wire_model.SQS_QUERY_NAMES)
    m["metadata"] = dict(m["metadata"], protocol="query", protocols=["query"],
                         xmlNamespace="http://queue.amazonaws.com/doc/2012-11-05/")
    ops = {}
    for name, op in m["operations"].items():
        op = dict(op)
        if "output" in op:
            op["output"] = dict(op["output"], resultWrapper=name + "Result")
        ops[name] = op
    m["operations"] = ops
    return m


def blobs_to_bytes(value, shape):
    """JSON-protocol input (base64 strings) -> what a botocore caller passes (bytes)."""
    if value is None:
        return None
    t = shape.type_name
    if t == "blob":
        return base64.b64decode(value)
    if t == "structure":
        return {k: blobs_to_bytes(v, shape.members[k]) if k in shape.members else v
                for k, v in value.items()}
    if t == "list":
        return [blobs_to_bytes(v, shape.member) for v in value]
    if t == "map":
        return {k: blobs_to_bytes(v, shape.value) for k, v in value.items()}
    return value


def jsonable(value):
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def cmd_models(_req):
    out = {}
    for service in VERSIONS:
        m = raw_model(service)
        out[service + "_ops"] = sorted(m["operations"])
        out[service + "_errors"] = {
            name: s.get("error") for name, s in m["shapes"].items() if s.get("exception")
        }
    return out


def cmd_serialize(req):
    if req.get("model"):
        with open(req["model"], encoding="utf-8") as f:
            model = ServiceModel(json.load(f))
    else:
        model = ServiceModel(raw_model(req["service"]))
    ser = serialize.create_serializer("query")
    out = []
    for case in req["cases"]:
        op = model.operation_model(case["action"])
        params = blobs_to_bytes(case["input"], op.input_shape)
        d = ser.serialize_to_request(params, op)
        prepare_request_dict(d, endpoint_url="https://example.com")
        body = create_request_object(d).prepare().body
        out.append(body.decode() if isinstance(body, bytes) else body)
    return out


def cmd_parse(req):
    service = req["service"]
    if req["protocol"] == "json":
        model = ServiceModel(raw_model(service))
    elif service == "sqs":
        model = ServiceModel(sqs_as_query_model())
    else:
        model = ServiceModel(raw_model(service))
    parser = parsers.create_parser(req["protocol"])
    out = []
    for case in req["cases"]:
        op = model.operation_model(case["action"])
        headers = {k.lower(): v for k, v in case["headers"].items()}
        resp = {"status_code": case["status"], "headers": headers,
                "body": case["body"].encode()}
        parsed = parser.parse(resp, op.output_shape)
        out.append(jsonable(parsed))
    return out


def main():
    req = json.load(sys.stdin)
    handler = {"models": cmd_models, "serialize": cmd_serialize, "parse": cmd_parse}[req["cmd"]]
    json.dump(handler(req), sys.stdout)


if __name__ == "__main__":
    main()
