"""The Query-era suite's fixtures: the same ones the current boto3 suite uses
(tests/compat/python/conftest.py), loaded under another module name so both conftests
can exist, with the Query guard (query_guard.py, passed as `-p query_guard`)."""

import importlib.util
import pathlib

_path = pathlib.Path(__file__).resolve().parent.parent / "python" / "conftest.py"
_spec = importlib.util.spec_from_file_location("compat_python_conftest", _path)
shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shared)

# Fixtures are found by name in a conftest's globals.
endpoint = shared.endpoint
sqs = shared.sqs
sns = shared.sns
make_queue = shared.make_queue
make_topic = shared.make_topic
