"""A Celery worker as a subprocess against the endpoint (scripts/frameworks.sh starts the
endpoint), one run directory and one queue-name prefix per session; the queues the run
created are deleted at the end."""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import boto3
import pytest

HERE = pathlib.Path(__file__).resolve().parent
RUN_DIR = pathlib.Path(tempfile.mkdtemp(prefix="celery-suite-"))
(RUN_DIR / "results").mkdir()
os.environ["CELERY_SUITE_DIR"] = str(RUN_DIR)
os.environ["CELERY_QUEUE_PREFIX"] = f"cel{uuid.uuid4().hex[:8]}-"
sys.path.insert(0, str(HERE))


class Worker:
    """`celery worker -P solo`: one process, so a task's os._exit is the worker's death."""

    def __init__(self, name):
        self.log = RUN_DIR / f"worker-{name}.log"
        self.proc = None

    def start(self):
        cmd = [
            os.path.join(os.path.dirname(sys.executable), "celery"),
            "-A", "tasksapp", "worker", "-P", "solo", "-Q", "work,orders.fifo",
            "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "INFO",
            "-n", f"w{uuid.uuid4().hex[:6]}@%h",
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, cwd=HERE, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while b" ready." not in self.log.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)
        return self

    def wait_exit(self, timeout=30):
        return self.proc.wait(timeout=timeout)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()  # warm shutdown: the current task finishes, nothing is lost
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def sqs():
    return boto3.client("sqs", endpoint_url=os.environ["QUEEN_SQS_ENDPOINT"], region_name="us-east-1")


@pytest.fixture(scope="session", autouse=True)
def cleanup(sqs):
    yield
    prefix = os.environ["CELERY_QUEUE_PREFIX"]
    for url in sqs.list_queues(QueueNamePrefix=prefix).get("QueueUrls", []):
        sqs.delete_queue(QueueUrl=url)
    shutil.rmtree(RUN_DIR, ignore_errors=True)


@pytest.fixture
def worker():
    w = Worker("main").start()
    yield w
    w.stop()
