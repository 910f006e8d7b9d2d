"""The Celery app the suite's worker runs: kombu's SQS transport on the endpoint
(QUEEN_SQS_ENDPOINT, as kombu documents for a custom endpoint: host and port in the
broker URL, `is_secure` off), results in a file-system backend (no server; `rpc://` does
not work over SQS). Side effects go to files under CELERY_SUITE_DIR so the test can see
how often, and in what order, the worker ran each task."""

import os
import pathlib
from urllib.parse import urlsplit

from celery import Celery

# No default: a fixed port could be answered by any server (scripts/frameworks.sh sets it).
ENDPOINT = urlsplit(os.environ["QUEEN_SQS_ENDPOINT"])
KEY = os.environ.get("AWS_ACCESS_KEY_ID", "test")
SECRET = os.environ.get("AWS_SECRET_ACCESS_KEY", "test")
DIR = pathlib.Path(os.environ["CELERY_SUITE_DIR"])
PREFIX = os.environ["CELERY_QUEUE_PREFIX"]  # one per run: every queue this run creates
FIFO_QUEUE = "orders.fifo"

app = Celery("tasksapp")
app.conf.update(
    broker_url=f"sqs://{KEY}:{SECRET}@{ENDPOINT.hostname}:{ENDPOINT.port}",
    broker_transport_options={
        "region": "us-east-1",
        "is_secure": False,
        "queue_name_prefix": PREFIX,
        # A crashed worker's unacknowledged message comes back after this many seconds.
        "visibility_timeout": 4,
        "wait_time_seconds": 1,
        "polling_interval": 0.1,
    },
    broker_connection_retry_on_startup=True,
    result_backend=f"file://{DIR / 'results'}",
    task_default_queue="work",
    task_routes={"tasksapp.record_fifo": {"queue": FIFO_QUEUE}},
    worker_prefetch_multiplier=1,
    worker_hijack_root_logger=False,
)


def note(name, line):
    """Appends one line to a side-effect file (a worker runs one task at a time)."""
    with open(DIR / name, "a") as f:
        f.write(f"{line}\n")


def lines(name):
    path = DIR / name
    return path.read_text().splitlines() if path.exists() else []


@app.task
def add(x, y):
    return x + y


@app.task
def tsum(values):
    return sum(values)


@app.task(bind=True, max_retries=5)
def flaky(self, key, failures):
    """Fails `failures` times, then answers how many attempts it took."""
    note(f"flaky-{key}", self.request.retries)
    if self.request.retries < failures:
        raise self.retry(countdown=1, exc=RuntimeError(f"attempt {self.request.retries} fails"))
    return self.request.retries + 1


@app.task(bind=True, max_retries=1)
def always_fails(self, key):
    note(f"fails-{key}", self.request.retries)
    raise self.retry(countdown=0, exc=ValueError("no luck"))


@app.task(acks_late=True)
def late_crash(key):
    """Kills the worker process on its first run (as a power cut would), before it is
    acknowledged; answers how many runs it took."""
    first = not lines(f"crash-{key}")
    note(f"crash-{key}", "run")
    if first:
        os._exit(1)
    return len(lines(f"crash-{key}"))


@app.task
def record_fifo(group, seq):
    note(f"fifo-{group}", seq)
    return seq
