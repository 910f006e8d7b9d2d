"""Fixtures for the cluster tests: boto3 clients for each facade replica, the engine node
behind replica 1 (to SIGKILL and restart), readiness probes, and a figures file the lane
prints at the end.

scripts/cluster-lane.sh starts the cluster and passes it in the environment:

    CLUSTER_REPLICA_1, CLUSTER_REPLICA_2   the facade replicas' base URLs
    CLUSTER_DIR                            the lane's scratch directory (engine pid files,
                                           logs; figures.txt is written here)
    CLUSTER_ENGINE_SCRIPT                  scripts/queen-engine.sh
    CLUSTER_ENGINE_1_NAME, _PORT, _DB      engine node 1 as `queen-engine.sh start` knows it
    CLUSTER_ENGINE_1_EXTRA_ENV             its mesh settings (QUEEN_ENGINE_EXTRA_ENV)
    QUEEN_TEST_PG_PORT                     the throwaway PostgreSQL's port
"""

import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid

import boto3
import pytest
from botocore.config import Config

REPLICA_1 = os.environ.get("CLUSTER_REPLICA_1", "")
REPLICA_2 = os.environ.get("CLUSTER_REPLICA_2", "")
CLUSTER_DIR = os.environ.get("CLUSTER_DIR", "")
ENGINE_SCRIPT = os.environ.get(
    "CLUSTER_ENGINE_SCRIPT",
    os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "queen-engine.sh"),
)
REGION = "us-east-1"

# Every test is bounded: SIGALRM fails it if it runs longer than this (the lane also runs
# pytest under `timeout`).
TEST_TIMEOUT_S = int(os.environ.get("CLUSTER_TEST_TIMEOUT_S", "120"))


def pytest_collection_modifyitems(config, items):
    """Outside the lane (no cluster in the environment) only the front's own tests run."""
    if REPLICA_1 and REPLICA_2 and CLUSTER_DIR:
        return
    skip = pytest.mark.skip(reason="needs the cluster: run scripts/cluster-lane.sh")
    for item in items:
        if "test_00_front" not in item.nodeid:
            item.add_marker(skip)


class TimeLimitExceeded(Exception):
    pass


@pytest.fixture(autouse=True)
def _bounded():
    def on_alarm(signum, frame):
        raise TimeLimitExceeded(f"test ran longer than {TEST_TIMEOUT_S}s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_TIMEOUT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def client(url, read_timeout=30):
    """An SQS client for one replica: one attempt per call (a retry would hide the 503s the
    kill test counts), a pool large enough for the load threads."""
    return boto3.client(
        "sqs",
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            connect_timeout=5,
            read_timeout=read_timeout,
            max_pool_connections=64,
        ),
    )


@pytest.fixture(scope="session")
def r1():
    return client(REPLICA_1)


@pytest.fixture(scope="session")
def r2():
    return client(REPLICA_2)


def uname(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_queue(r1, r2):
    """Creates a queue through replica 1 (`attributes` as CreateQueue takes them) and
    deletes it afterwards through whichever replica answers."""
    created = []

    def _make(prefix="cl", attributes=None):
        url = r1.create_queue(QueueName=uname(prefix), Attributes=dict(attributes or {}))["QueueUrl"]
        created.append(url)
        return url

    yield _make
    for url in created:
        for c in (r2, r1):
            try:
                c.delete_queue(QueueUrl=url)
                break
            except Exception:
                pass


def http_status(url, timeout=5.0):
    """GET url's status code; 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception:
        return 0


def wait_status(url, want, within_s):
    """Polls url until it answers `want`; returns the seconds it took, or None."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < within_s:
        if http_status(url, timeout=3) == want:
            return time.monotonic() - t0
        time.sleep(0.1)
    return None


def _alive(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line.split(":", 1)[1]
    except FileNotFoundError:
        return False
    return True


class EngineNode:
    """Engine node 1 as scripts/queen-engine.sh started it (pid file in CLUSTER_DIR)."""

    def __init__(self):
        self.name = os.environ.get("CLUSTER_ENGINE_1_NAME", "node1")
        self.port = os.environ.get("CLUSTER_ENGINE_1_PORT", "")
        self.db = os.environ.get("CLUSTER_ENGINE_1_DB", "cluster")
        self.extra_env = os.environ.get("CLUSTER_ENGINE_1_EXTRA_ENV", "")

    def pid(self):
        with open(os.path.join(CLUSTER_DIR, f"{self.name}.pid")) as f:
            return int(f.read().strip())

    def alive(self):
        try:
            return _alive(self.pid())
        except (OSError, ValueError):
            return False

    def kill9(self):
        """SIGKILL, and wait until the process is gone (at most 5 s)."""
        pid = self.pid()
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(pid), f"engine {self.name} (pid {pid}) survived SIGKILL"

    def restart(self):
        """Starts the node again on the same database and port (same mesh settings); returns
        once its /health answers. Answers the seconds that took."""
        env = dict(os.environ)
        env["QUEEN_ENGINE_EXTRA_ENV"] = self.extra_env
        t0 = time.monotonic()
        proc = subprocess.run(
            [ENGINE_SCRIPT, "start", CLUSTER_DIR, self.name, str(self.port), self.db],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert proc.returncode == 0, f"engine restart failed: {proc.stdout}\n{proc.stderr}"
        return time.monotonic() - t0


@pytest.fixture
def engine1():
    """Engine node 1; whatever the test did, it is running again afterwards and replica 1 is
    ready (so one failed test does not take the rest down)."""
    node = EngineNode()
    yield node
    if not node.alive():
        node.restart()
    wait_status(REPLICA_1 + "/readyz", 200, 20)


_figures_lock = threading.Lock()


def figure(line):
    """One line for the lane's closing note: printed now and appended to figures.txt."""
    print(line, flush=True)
    with _figures_lock:
        try:
            with open(os.path.join(CLUSTER_DIR, "figures.txt"), "a") as f:
                f.write(line + "\n")
        except OSError:
            pass


def error_code(exc):
    """(HTTP status, error code) of a botocore ClientError; (0, class name) for a transport
    error (connection refused, timeout)."""
    resp = getattr(exc, "response", None)
    if resp:
        return (
            resp.get("ResponseMetadata", {}).get("HTTPStatusCode", 0),
            resp.get("Error", {}).get("Code", "?"),
        )
    return 0, type(exc).__name__
