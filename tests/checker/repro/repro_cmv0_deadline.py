# ChangeMessageVisibility(0) racing the visibility deadline: a message then exists twice
# (received again after a successful DeleteMessage of its latest delivery).
from common import sqs, call
import time, uuid
u = sqs.create_queue(QueueName="r-cmv0dl-" + uuid.uuid4().hex[:6], Attributes={"VisibilityTimeout": "2"})["QueueUrl"]
dups = 0
for i in range(24):
    sqs.send_message_batch(QueueUrl=u, Entries=[{"Id": str(k), "MessageBody": f"r{i}-m{k}"} for k in range(8)])
    t = time.monotonic()
    ms = sqs.receive_message(QueueUrl=u, MaxNumberOfMessages=10, VisibilityTimeout=2).get("Messages", [])
    time.sleep(max(0, t + 1.80 + 0.02 * (i % 12) - time.monotonic()))  # 1.80..2.02 s: across the deadline
    call(sqs.change_message_visibility_batch, QueueUrl=u, Entries=[{"Id": str(k), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0} for k, m in enumerate(ms)])
    seen = {}
    for _ in range(4):
        for x in sqs.receive_message(QueueUrl=u, MaxNumberOfMessages=10, WaitTimeSeconds=1, VisibilityTimeout=20).get("Messages", []):
            seen[x["Body"]] = seen.get(x["Body"], 0) + 1
            sqs.delete_message(QueueUrl=u, ReceiptHandle=x["ReceiptHandle"])
    extra = {b: n for b, n in seen.items() if n > 1}
    if extra:
        dups += 1
        print(f"round {i} (CMV(0) at {1.80 + 0.02 * (i % 12):.2f}s of a 2 s timeout): received after deleting: {extra}")
print("rounds with a message received again after its delete:", dups, "of 24")
