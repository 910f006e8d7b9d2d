"""The processes a checker run starts: the embedded broker alone (`queen-sqs-host broker`) and
the host (`queen-sqs-host serve`), each on a port it picked (port 0: the kernel's choice,
read back from the start line), each checked to be the process answering on that port (the
pid listening, by `ss -ltnp`). A host can be killed with SIGKILL and restarted on the same
port and data directory. Only processes started here are ever signalled, by their pid.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request


def listening_pids(port: int) -> set[int]:
    try:
        out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True,
                             text=True, timeout=10).stdout
    except Exception:
        return set()
    return {int(p) for p in re.findall(r"pid=(\d+)", out)}


def wait_line(path: str, pattern: str, proc: subprocess.Popen, timeout: float) -> re.Match:
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    while time.monotonic() < deadline:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = rx.search(line)
                    if m:
                        return m
        except FileNotFoundError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    tail = ""
    try:
        tail = open(path, errors="replace").read()[-2000:]
    except OSError:
        pass
    raise RuntimeError(f"no line /{pattern}/ in {path} within {timeout}s (exit {proc.poll()}):\n{tail}")


def http_ok(url: str, timeout=2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200
    except Exception:
        return False


class BrokerProc:
    """`queen-sqs-host broker --listen 127.0.0.1:0 --data-dir D` with a bearer token."""

    def __init__(self, binary: str, data_dir: str, token: str, log: str):
        self.binary, self.data_dir, self.token, self.log = binary, data_dir, token, log
        self.proc = None
        self.port = None

    def start(self):
        os.makedirs(self.data_dir, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUEEN_")}
        env["QUEEN_SQS_BROKER_TOKEN"] = self.token
        with open(self.log, "ab") as lf:
            self.proc = subprocess.Popen(
                [self.binary, "broker", "--listen", "127.0.0.1:0", "--data-dir", self.data_dir],
                stdout=lf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        m = wait_line(self.log, r"broker listening on http://127\.0\.0\.1:(\d+)", self.proc, 60)
        self.port = int(m.group(1))
        for _ in range(100):
            if http_ok(f"http://127.0.0.1:{self.port}/health"):
                break
            time.sleep(0.1)
        pids = listening_pids(self.port)
        if self.proc.pid not in pids:
            raise RuntimeError(f"port {self.port} is answered by pids {pids}, not the broker we started ({self.proc.pid})")
        return self.port

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class HostProc:
    """`queen-sqs-host serve`, restartable on the port it first got."""

    def __init__(self, binary: str, data_dir: str, env: dict, log: str):
        self.binary, self.data_dir, self.env, self.log = binary, data_dir, env, log
        self.proc = None
        self.port = 0
        self.starts = 0

    def start(self, timeout=120):
        os.makedirs(self.data_dir, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUEEN_")}
        env.update(self.env)
        # Each start appends to the log; the start line is looked for after this offset.
        offset = os.path.getsize(self.log) if os.path.exists(self.log) else 0
        with open(self.log, "ab") as lf:
            lf.write(f"--- start {self.starts + 1}\n".encode())
            self.proc = subprocess.Popen(
                [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", self.data_dir],
                stdout=lf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.starts += 1
        deadline = time.monotonic() + timeout
        port = None
        while time.monotonic() < deadline:
            with open(self.log, errors="replace") as f:
                f.seek(offset)
                m = re.search(r"endpoint on http://127\.0\.0\.1:(\d+)", f.read())
            if m:
                port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        if port is None:
            tail = open(self.log, errors="replace").read()[-3000:]
            raise RuntimeError(f"the host did not start (exit {self.proc.poll()}):\n{tail}")
        self.port = port
        while time.monotonic() < deadline and not http_ok(f"http://127.0.0.1:{port}/healthz"):
            time.sleep(0.1)
        pids = listening_pids(port)
        if self.proc.pid not in pids:
            raise RuntimeError(f"port {port} is answered by pids {pids}, not the host we started ({self.proc.pid})")
        return port

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
