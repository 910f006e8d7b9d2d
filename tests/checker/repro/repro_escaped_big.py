# A valid message under MaximumMessageSize=1 MiB whose JSON form passes 2 MiB is refused 413.
from common import sqs, call
import uuid
u = sqs.create_queue(QueueName="r-escaped-" + uuid.uuid4().hex[:6], Attributes={"MaximumMessageSize": "1048576"})["QueueUrl"]
for label, body in (("1,040,000 x '\"'", '"' * 1_040_000), ("524,000 x 'é' (1,048,000 bytes)", "é" * 524_000), ("1,040,000 x 'a'", "a" * 1_040_000)):
    r = call(sqs.send_message, QueueUrl=u, MessageBody=body)
    print(label, "->", r if isinstance(r, tuple) else "ok")
