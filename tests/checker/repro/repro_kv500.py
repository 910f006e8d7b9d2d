# A broker answering 500 to the queue-record read makes SendMessage answer 500 InternalError
# (a broker outage should be 503 ServiceUnavailable). Starts its own broker, a tiny proxy that
# fails GET /api/v1/kv/* while FAIL is set, and a host pointed at the proxy.
import http.client, http.server, os, subprocess, sys, threading, time, re, tempfile, socketserver
import boto3, botocore.config as bc
BIN = sys.argv[1]
d = tempfile.mkdtemp()
tok = "repro-token-0123456789abcdef"
br = subprocess.Popen([BIN, "broker", "--listen", "127.0.0.1:0", "--data-dir", d + "/b"], env={**os.environ, "QUEEN_SQS_BROKER_TOKEN": tok}, stderr=open(d + "/b.log", "w"))
while not re.search(r":(\d+) ", open(d + "/b.log").read() + " "): time.sleep(0.1)
bport = int(re.search(r"127\.0\.0\.1:(\d+)", open(d + "/b.log").read()).group(1))
FAIL = [False]
class P(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def go(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if FAIL[0] and self.command == "GET" and self.path.startswith("/api/v1/kv/"):
            self.send_response(500); self.send_header("content-length", "2"); self.end_headers(); self.wfile.write(b"{}"); return
        c = http.client.HTTPConnection("127.0.0.1", bport, timeout=60)
        c.request(self.command, self.path, body, {k: v for k, v in self.headers.items() if k.lower() != "host"})
        r = c.getresponse(); data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"): self.send_header(k, v)
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_DELETE = go
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
px = S(("127.0.0.1", 0), P); threading.Thread(target=px.serve_forever, daemon=True).start()
env = {**os.environ, "QUEEN_URL": f"http://127.0.0.1:{px.server_address[1]}", "QUEEN_SQS_CREDENTIALS": f"test:test:{tok}", "QUEEN_SQS_HANDLE_SECRET": "repro-secret-0123456789abcdef0123"}
host = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir", d + "/h"], env=env, stderr=open(d + "/h.log", "w"))
while "endpoint on" not in open(d + "/h.log").read(): time.sleep(0.2)
ep = re.search(r"endpoint on (http://[0-9.:]+)", open(d + "/h.log").read()).group(1)
sqs = boto3.client("sqs", endpoint_url=ep, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test", config=bc.Config(retries={"total_max_attempts": 1}))
for name in ("r-kv500", "r-kv500.fifo"):
    attrs = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
    u = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
    time.sleep(1.2)  # past the host's 1 s queue-record cache
    FAIL[0] = True
    kw = {"MessageGroupId": "g", "MessageDeduplicationId": "d1"} if name.endswith(".fifo") else {}
    for op, f, a in (("SendMessage", sqs.send_message, dict(QueueUrl=u, MessageBody="x", **kw)), ("ReceiveMessage", sqs.receive_message, dict(QueueUrl=u))):
        try:
            f(**a); print(name, op, "ok")
        except sqs.exceptions.ClientError as e:
            print(name, op, e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"].get("QueryErrorCode") or e.response["Error"]["Code"])
    FAIL[0] = False
host.kill(); br.kill()
