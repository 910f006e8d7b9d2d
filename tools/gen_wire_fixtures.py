#!/usr/bin/env python3
"""Regenerate the SQS fixtures that only the last query-protocol SQS model can give:
- tests/data/wire/sqs_query_forms.json: the form bodies botocore's Query serializer produces
  for tests/data/wire/query_inputs.json's SQS inputs;
- tests/data/wire/sqs_query_errors.json: the `error` facts (legacy code, status, fault) of
  that model's exception shapes, which the current JSON model no longer carries.
Current botocore speaks JSON to SQS, so this runs once, offline:

    pip download botocore==1.31.60 --no-deps -d /tmp/bc && cd /tmp/bc && unzip -o -q botocore-*.whl
    python3 tools/gen_wire_fixtures.py /tmp/bc/botocore/data/sqs/2012-11-05/service-2.json
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def main():
    model = sys.argv[1]
    with open(model, encoding="utf-8") as f:
        old = json.load(f)
    if old["metadata"].get("protocol") != "query":
        sys.exit(f"{model} is not a query-protocol model")
    errors = {name: s.get("error") for name, s in sorted(old["shapes"].items())
              if s.get("exception")}
    with open(os.path.join(ROOT, "tests/data/wire/sqs_query_errors.json"), "w",
              encoding="utf-8") as f:
        json.dump({"source": "botocore 1.31.60 data/sqs/2012-11-05/service-2.json",
                   "errors": errors}, f, indent=1)
        f.write("\n")
    with open(os.path.join(ROOT, "tests/data/wire/query_inputs.json"), encoding="utf-8") as f:
        cases = json.load(f)["sqs"]
    req = {"cmd": "serialize", "service": "sqs", "model": model, "cases": cases}
    oracle = os.path.join(ROOT, "tests/compat/wire/oracle.py")
    out = subprocess.run([sys.executable, oracle], input=json.dumps(req), text=True,
                         capture_output=True, check=True).stdout
    bodies = json.loads(out)
    fixtures = [dict(case, body=body) for case, body in zip(cases, bodies)]
    with open(os.path.join(ROOT, "tests/data/wire/sqs_query_forms.json"), "w",
              encoding="utf-8") as f:
        json.dump(fixtures, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
