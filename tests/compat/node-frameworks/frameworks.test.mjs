// sqs-consumer 14 and sqs-producer 8 as their READMEs use them (Producer.create /
// Consumer.create with an SQSClient), against the endpoint: handlers, batch handlers,
// heartbeats, FIFO, and a handler's failure bringing its message back.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { Consumer } from "sqs-consumer";
import { Producer } from "sqs-producer";
import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { countingClient, deleteQueues, depth, makeQueue, runUntil, sleep, until } from "./support.mjs";

after(deleteQueues);

test("producer.send and queueSize, consumer.handleMessage acknowledges each", async () => {
  const sqs = countingClient();
  const url = await makeQueue(sqs, "fw-basic");
  const producer = Producer.create({ queueUrl: url, sqs, batchSize: 10 });
  const sent = await producer.send([
    "plain-one", // a bare string is its own batch entry id (the README's default)
    "plain-two",
    {
      id: "attrs",
      body: "with attributes",
      messageAttributes: {
        kind: { DataType: "String", StringValue: "order" },
        qty: { DataType: "Number", StringValue: "3" },
        raw: { DataType: "Binary", BinaryValue: Buffer.from([0, 1, 254, 255]) },
      },
    },
    { id: "late", body: "delayed", delaySeconds: 2 },
  ]);
  assert.equal(sent.length, 4);
  assert.ok(sent.every((r) => r.MessageId && r.MD5OfMessageBody), JSON.stringify(sent));
  assert.equal(await producer.queueSize(), 3, "three visible, one delayed");

  const seen = new Map();
  const consumer = Consumer.create({
    queueUrl: url,
    sqs,
    messageAttributeNames: ["All"],
    attributeNames: ["ApproximateReceiveCount"],
    waitTimeSeconds: 1,
    handleMessage: async (m) => {
      seen.set(m.Body, m);
      return m;
    },
  });
  const errors = await runUntil(consumer, () => seen.size === 4, "four messages");
  assert.deepEqual(errors, []);
  const a = seen.get("with attributes").MessageAttributes;
  assert.equal(a.kind.StringValue, "order");
  assert.equal(a.qty.StringValue, "3");
  assert.deepEqual([...a.raw.BinaryValue], [0, 1, 254, 255]);
  for (const m of seen.values()) assert.equal(m.Attributes.ApproximateReceiveCount, "1");
  assert.ok(sqs.counts.DeleteMessageCommand >= 4, JSON.stringify(sqs.counts));
  await until(async () => {
    const d = await depth(sqs, url);
    return d.visible + d.inFlight + d.delayed === 0;
  }, "the queue to be empty");
});

test("handleMessageBatch: only the returned messages are deleted, the rest come back", async () => {
  const sqs = countingClient();
  const url = await makeQueue(sqs, "fw-batch", { VisibilityTimeout: "2" });
  const producer = Producer.create({ queueUrl: url, sqs });
  const bodies = Array.from({ length: 24 }, (_, i) => `b${i}`);
  await producer.send(bodies.map((b) => ({ id: b, body: b })));

  const deliveries = new Map();
  let biggest = 0;
  const consumer = Consumer.create({
    queueUrl: url,
    sqs,
    batchSize: 10,
    waitTimeSeconds: 1,
    handleMessageBatch: async (msgs) => {
      biggest = Math.max(biggest, msgs.length);
      for (const m of msgs) deliveries.set(m.Body, (deliveries.get(m.Body) || 0) + 1);
      // Acknowledge the even ones at once, the odd ones only on their second delivery.
      return msgs.filter((m) => Number(m.Body.slice(1)) % 2 === 0 || deliveries.get(m.Body) > 1);
    },
  });
  const errors = await runUntil(
    consumer,
    () => bodies.every((b) => deliveries.get(b) === (Number(b.slice(1)) % 2 === 0 ? 1 : 2)),
    "odd messages to come back once",
    20000,
  );
  assert.deepEqual(errors, []);
  assert.ok(biggest > 1 && biggest <= 10, `batch of ${biggest}`);
  assert.ok(sqs.counts.DeleteMessageBatchCommand >= 2, JSON.stringify(sqs.counts));
  await until(async () => (await depth(sqs, url)).inFlight + (await depth(sqs, url)).visible === 0, "empty");
  assert.ok([...deliveries.values()].every((n) => n <= 2), JSON.stringify([...deliveries]));
});

test("heartbeatInterval keeps a slow message invisible past its visibility timeout", async () => {
  const sqs = countingClient();
  const url = await makeQueue(sqs, "fw-heartbeat", { VisibilityTimeout: "2" });
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "slow" }));
  let stolen = 0;
  let done = 0;
  const consumer = Consumer.create({
    queueUrl: url,
    sqs,
    visibilityTimeout: 2,
    heartbeatInterval: 1,
    waitTimeSeconds: 1,
    attributeNames: ["ApproximateReceiveCount"],
    handleMessage: async (m) => {
      assert.equal(m.Attributes.ApproximateReceiveCount, "1");
      // Meanwhile another reader polls for 5 s, longer than twice the timeout.
      const end = Date.now() + 5000;
      while (Date.now() < end) {
        const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
        stolen += (r.Messages || []).length;
      }
      done += 1;
      return m;
    },
  });
  const errors = await runUntil(consumer, () => done === 1, "the slow handler", 15000);
  assert.deepEqual(errors, []);
  assert.equal(stolen, 0, "the message was received by another reader mid-processing");
  assert.ok(sqs.counts.ChangeMessageVisibilityCommand >= 3, JSON.stringify(sqs.counts));
  await until(async () => (await depth(sqs, url)).inFlight === 0, "the delete");
  assert.equal((await depth(sqs, url)).visible, 0);
});

test("a handler that throws: processing_error, the message comes back and is then handled", async () => {
  const sqs = countingClient();
  const url = await makeQueue(sqs, "fw-error");
  const producer = Producer.create({ queueUrl: url, sqs });
  await producer.send(["fine", "poison"]);
  const handled = [];
  const failures = [];
  const counts = {};
  const consumer = Consumer.create({
    queueUrl: url,
    sqs,
    waitTimeSeconds: 1,
    terminateVisibilityTimeout: true, // hand a failed message back at once (ChangeMessageVisibility 0)
    attributeNames: ["ApproximateReceiveCount"],
    handleMessage: async (m) => {
      counts[m.Body] = m.Attributes.ApproximateReceiveCount;
      if (m.Body === "poison" && m.Attributes.ApproximateReceiveCount === "1") throw new Error("boom");
      handled.push(m.Body);
      return m;
    },
  });
  consumer.on("processing_error", (err, m) => failures.push([err.message, m.Body]));
  const errors = await runUntil(consumer, () => handled.length === 2, "both messages handled");
  assert.deepEqual(errors, []);
  assert.deepEqual(handled.sort(), ["fine", "poison"]);
  assert.equal(failures.length, 1);
  assert.match(failures[0][0], /boom/);
  assert.equal(failures[0][1], "poison");
  assert.equal(counts.poison, "2");
  assert.ok(sqs.counts.ChangeMessageVisibilityCommand >= 1, JSON.stringify(sqs.counts));
  await until(async () => (await depth(sqs, url)).inFlight === 0, "the deletes");
});

test("handleMessageTimeout: timeout_error, and the message is not deleted", async () => {
  const sqs = countingClient();
  const url = await makeQueue(sqs, "fw-timeout", { VisibilityTimeout: "30" });
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "too slow" }));
  const timeouts = [];
  const consumer = Consumer.create({
    queueUrl: url,
    sqs,
    waitTimeSeconds: 1,
    handleMessageTimeout: 300,
    handleMessage: async (m) => {
      await sleep(1000);
      return m;
    },
  });
  consumer.on("timeout_error", (err, m) => timeouts.push(m.Body));
  await runUntil(consumer, () => timeouts.length === 1, "the timeout");
  await sleep(1200); // the handler's own promise settles; nothing may delete the message
  assert.deepEqual(timeouts, ["too slow"]);
  assert.equal(sqs.counts.DeleteMessageCommand || 0, 0);
  assert.equal((await depth(sqs, url)).inFlight, 1);
});

test("FIFO: producer groupId/deduplicationId, per-group order, duplicates dropped", async () => {
  const sqs = countingClient();
  const url = await makeQueue(sqs, "fw-fifo", { FifoQueue: "true" });
  const producer = Producer.create({ queueUrl: url, sqs });
  const msgs = [];
  for (const g of ["a", "b"]) {
    for (let i = 0; i < 6; i++) msgs.push({ id: `${g}${i}`, body: `${g}${i}`, groupId: g, deduplicationId: `${g}-${i}` });
  }
  const sent = await producer.send(msgs);
  assert.equal(sent.length, 12);
  assert.ok(sent.every((r) => /^\d+$/.test(r.SequenceNumber)), JSON.stringify(sent[0]));
  // The same deduplication ids again: accepted, not enqueued twice.
  const again = await producer.send(msgs.slice(0, 3));
  assert.deepEqual(
    again.map((r) => r.MessageId),
    sent.slice(0, 3).map((r) => r.MessageId),
  );

  const order = { a: [], b: [] };
  const consumer = Consumer.create({
    queueUrl: url,
    sqs,
    batchSize: 4,
    waitTimeSeconds: 1,
    attributeNames: ["MessageGroupId"],
    suppressFifoWarning: true,
    handleMessage: async (m) => {
      order[m.Attributes.MessageGroupId].push(m.Body);
      return m;
    },
  });
  const errors = await runUntil(consumer, () => order.a.length + order.b.length >= 12, "twelve messages");
  await sleep(1500); // a duplicate, if any, would arrive now
  assert.deepEqual(errors, []);
  assert.deepEqual(order.a, ["a0", "a1", "a2", "a3", "a4", "a5"]);
  assert.deepEqual(order.b, ["b0", "b1", "b2", "b3", "b4", "b5"]);
});

test("producer: a batch entry SQS refuses is reported by id, the others are sent", async () => {
  const sqs = countingClient();
  const url = await makeQueue(sqs, "fw-prod-err");
  const producer = Producer.create({ queueUrl: url, sqs });
  let err;
  try {
    await producer.send([
      { id: "good", body: "good" },
      { id: "bad", body: "bad \u0000 body" },
    ]);
  } catch (e) {
    err = e;
  }
  assert.ok(err, "send should have failed");
  assert.deepEqual(err.failedMessages, ["bad"]);
  assert.equal(await producer.queueSize(), 1);
  // The producer's own validation, before any request.
  await assert.rejects(() => producer.send([{ id: "x", body: "b", delaySeconds: 901 }]), /delaySeconds/);
});
