# A valid 1 MiB-class message to a queue with DelaySeconds > 0 is refused.
from common import sqs, call
import uuid
u = sqs.create_queue(QueueName="r-bigdelay-" + uuid.uuid4().hex[:6], Attributes={"MaximumMessageSize": "1048576", "DelaySeconds": "3"})["QueueUrl"]
for n in (700_000, 1_000_000, 1_048_576):
    r = call(sqs.send_message, QueueUrl=u, MessageBody="x" * n)
    print(n, "->", r if isinstance(r, tuple) else "ok " + r["MessageId"])
