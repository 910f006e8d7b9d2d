// @aws-sdk/client-sqs v3 (AWS JSON 1.0) against queen-sqs. The client checks the body MD5 on
// send and receive; the attribute MD5 is checked here with AWS's algorithm.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import {
  SQSClient,
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
  SendMessageCommand,
  SendMessageBatchCommand,
  ReceiveMessageCommand,
  DeleteMessageCommand,
  DeleteMessageBatchCommand,
  ChangeMessageVisibilityCommand,
  ChangeMessageVisibilityBatchCommand,
  PurgeQueueCommand,
  TagQueueCommand,
  UntagQueueCommand,
  ListQueueTagsCommand,
  ListDeadLetterSourceQueuesCommand,
} from "@aws-sdk/client-sqs";
import {
  ENDPOINT,
  REGION,
  CREDENTIALS,
  uniq,
  sleep,
  eventually,
  collect,
  rejects,
  md5Hex,
  md5OfMessageAttributes,
  otherAccountUrl,
} from "./support.mjs";

const sqs = new SQSClient({ endpoint: ENDPOINT, region: REGION, credentials: CREDENTIALS });
after(() => sqs.destroy());

const created = [];
after(async () => {
  for (const url of created) {
    await sqs.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => {});
  }
});

async function createQueue(prefix, Attributes = {}, extra = {}) {
  const name = prefix.endsWith(".fifo") ? uniq(prefix.slice(0, -5)) + ".fifo" : uniq(prefix);
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes, ...extra }));
  assert.ok(out.QueueUrl, "CreateQueue answers a QueueUrl");
  created.push(out.QueueUrl);
  return { name, url: out.QueueUrl };
}

async function attrs(url, names = ["All"]) {
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: names }));
  return out.Attributes || {};
}

function receiver(url, params = {}) {
  return async (max) =>
    (
      await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ["All"],
          MessageAttributeNames: ["All"],
          ...params,
        }),
      )
    ).Messages;
}

const ATTRS = {
  greeting: { DataType: "String", StringValue: "héllo wörld ✓" },
  amount: { DataType: "Number", StringValue: "12.50" },
  blob: { DataType: "Binary", BinaryValue: new Uint8Array([0, 1, 2, 254, 255]) },
  kind: { DataType: "String.custom", StringValue: "order" },
};

describe("queues", () => {
  test("create, GetQueueUrl, ListQueues, GetQueueAttributes All, delete", async () => {
    const { name, url } = await createQueue("v3-basic", { VisibilityTimeout: "7" });
    assert.match(url, new RegExp(`/\\d{12}/${name}$`));
    const got = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    assert.equal(got.QueueUrl, url);

    const listed = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }));
    assert.deepEqual(listed.QueueUrls, [url]);

    const a = await attrs(url);
    assert.equal(a.VisibilityTimeout, "7");
    assert.match(a.QueueArn, new RegExp(`^arn:aws:sqs:[^:]+:\\d{12}:${name}$`));
    for (const k of ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed", "CreatedTimestamp", "MaximumMessageSize", "MessageRetentionPeriod", "DelaySeconds", "ReceiveMessageWaitTimeSeconds"]) {
      assert.ok(k in a, `GetQueueAttributes All carries ${k}`);
    }

    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "9" } }));
    assert.equal((await attrs(url, ["VisibilityTimeout"])).VisibilityTimeout, "9");

    // Same attributes again: idempotent. A different supplied value: QueueNameExists.
    const again = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "9" } }));
    assert.equal(again.QueueUrl, url);
    const clash = await rejects(() =>
      sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "30" } })),
    );
    assert.equal(clash.name, "QueueNameExists");

    await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    const gone = await rejects(() => sqs.send(new GetQueueUrlCommand({ QueueName: name })));
    assert.equal(gone.name, "QueueDoesNotExist");
  });

  test("tags: create with tags, TagQueue, UntagQueue, ListQueueTags", async () => {
    const { url } = await createQueue("v3-tags", {}, { tags: { team: "core", env: "test" } });
    let t = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
    assert.deepEqual(t.Tags, { team: "core", env: "test" });
    await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { owner: "ana", env: "prod" } }));
    await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["team"] }));
    t = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
    assert.deepEqual(t.Tags, { owner: "ana", env: "prod" });
  });
});

describe("messages", () => {
  test("send / receive / delete with String, Number, Binary attributes and MD5s", async () => {
    const { url } = await createQueue("v3-msg", { VisibilityTimeout: "5" });
    const body = `{"order": 42, "note": "ünïcødé 🚀"}\n  trailing space `;
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageAttributes: ATTRS }));
    assert.ok(sent.MessageId);
    assert.equal(sent.MD5OfMessageBody, md5Hex(body));
    assert.equal(sent.MD5OfMessageAttributes, md5OfMessageAttributes(ATTRS));

    const [m, ...rest] = await collect(receiver(url), 1);
    assert.ok(m, "the message is received");
    assert.equal(rest.length, 0);
    assert.equal(m.MessageId, sent.MessageId);
    assert.equal(m.Body, body);
    assert.equal(m.MD5OfBody, md5Hex(body));
    assert.equal(m.MessageAttributes.greeting.StringValue, ATTRS.greeting.StringValue);
    assert.equal(m.MessageAttributes.greeting.DataType, "String");
    assert.equal(m.MessageAttributes.amount.StringValue, "12.50");
    assert.equal(m.MessageAttributes.amount.DataType, "Number");
    assert.equal(m.MessageAttributes.kind.DataType, "String.custom");
    assert.deepEqual(Buffer.from(m.MessageAttributes.blob.BinaryValue), Buffer.from(ATTRS.blob.BinaryValue));
    assert.equal(m.MD5OfMessageAttributes, md5OfMessageAttributes(ATTRS));
    assert.equal(m.Attributes.ApproximateReceiveCount, "1");
    assert.match(m.Attributes.SentTimestamp, /^\d{13}$/);

    // Only the attributes asked for come back.
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 }));
    const [m2] = await collect(receiver(url, { MessageAttributeNames: ["amount"] }), 1);
    assert.ok(m2, "released message is received again");
    assert.deepEqual(Object.keys(m2.MessageAttributes || {}), ["amount"]);

    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m2.ReceiptHandle }));
    const after = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
    assert.equal((after.Messages || []).length, 0, "deleted message is not redelivered");
    const a = await eventually(async () => {
      const x = await attrs(url, ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]);
      return x.ApproximateNumberOfMessages === "0" && x.ApproximateNumberOfMessagesNotVisible === "0" && x;
    }, 5000);
    assert.ok(a, "queue depth reaches zero after the delete");
  });

  test("depth attributes count visible and in-flight messages", async () => {
    const { url } = await createQueue("v3-depth", { VisibilityTimeout: "30" });
    for (let i = 0; i < 3; i++) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `m${i}` }));
    const visible = await eventually(async () => (await attrs(url)).ApproximateNumberOfMessages === "3", 5000);
    assert.ok(visible, "ApproximateNumberOfMessages reaches 3");
    const got = await collect(receiver(url), 1);
    assert.equal(got.length, 1);
    const a = await attrs(url);
    assert.equal(a.ApproximateNumberOfMessages, "2");
    assert.equal(a.ApproximateNumberOfMessagesNotVisible, "1");
  });
});

describe("batches", () => {
  test("SendMessageBatch with attributes, then DeleteMessageBatch and ChangeMessageVisibilityBatch with a partial failure", async () => {
    const { url } = await createQueue("v3-batch", { VisibilityTimeout: "20" });
    const entries = [0, 1, 2, 3].map((i) => ({
      Id: `e${i}`,
      MessageBody: `batch body ${i}`,
      MessageAttributes: { n: { DataType: "Number", StringValue: String(i) } },
    }));
    const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    assert.equal((out.Failed || []).length, 0);
    assert.deepEqual(out.Successful.map((s) => s.Id).sort(), ["e0", "e1", "e2", "e3"]);
    for (const s of out.Successful) {
      const e = entries.find((x) => x.Id === s.Id);
      assert.equal(s.MD5OfMessageBody, md5Hex(e.MessageBody));
      assert.equal(s.MD5OfMessageAttributes, md5OfMessageAttributes(e.MessageAttributes));
    }

    const msgs = await collect(receiver(url), 4);
    assert.equal(msgs.length, 4);
    assert.deepEqual(msgs.map((m) => m.Body).sort(), entries.map((e) => e.MessageBody).sort());

    // Change visibility: three real handles plus a forged one.
    const cv = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [
          ...msgs.slice(0, 3).map((m, i) => ({ Id: `c${i}`, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 30 })),
          { Id: "forged", ReceiptHandle: "bm90LWEtcmVhbC1oYW5kbGU", VisibilityTimeout: 30 },
        ],
      }),
    );
    assert.deepEqual((cv.Successful || []).map((s) => s.Id).sort(), ["c0", "c1", "c2"]);
    assert.equal(cv.Failed.length, 1);
    assert.equal(cv.Failed[0].Id, "forged");
    assert.equal(cv.Failed[0].Code, "ReceiptHandleIsInvalid");
    assert.equal(cv.Failed[0].SenderFault, true);

    // Delete: all four real handles plus a forged one.
    const del = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          ...msgs.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })),
          { Id: "forged", ReceiptHandle: "AAAAaGVsbG8gd29ybGQ" },
        ],
      }),
    );
    assert.deepEqual((del.Successful || []).map((s) => s.Id).sort(), ["d0", "d1", "d2", "d3"]);
    assert.equal(del.Failed.length, 1);
    assert.equal(del.Failed[0].Id, "forged");
    assert.equal(del.Failed[0].Code, "ReceiptHandleIsInvalid");
    const depth = await eventually(async () => {
      const a = await attrs(url);
      return a.ApproximateNumberOfMessages === "0" && a.ApproximateNumberOfMessagesNotVisible === "0";
    }, 5000);
    assert.ok(depth, "the batch delete emptied the queue");
  });

  test("SendMessageBatch partial failure: one invalid entry, the rest land", async () => {
    const { url } = await createQueue("v3-batchfail");
    const out = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "ok1", MessageBody: "fine" },
          { Id: "bad", MessageBody: "bad \u0000 body" },
          { Id: "ok2", MessageBody: "fine too" },
        ],
      }),
    );
    assert.deepEqual(out.Successful.map((s) => s.Id).sort(), ["ok1", "ok2"]);
    assert.equal(out.Failed.length, 1);
    assert.equal(out.Failed[0].Id, "bad");
    assert.equal(out.Failed[0].SenderFault, true);
    assert.equal(out.Failed[0].Code, "InvalidMessageContents");
    const got = await collect(receiver(url), 2);
    assert.deepEqual(got.map((m) => m.Body).sort(), ["fine", "fine too"]);
  });

  test("batch request errors are the SDK's exception classes", async () => {
    const { url } = await createQueue("v3-batcherr");
    const empty = await rejects(() => sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [] })));
    assert.equal(empty.name, "EmptyBatchRequest");
    const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `i${i}`, MessageBody: "x" }));
    const many = await rejects(() => sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: eleven })));
    assert.equal(many.name, "TooManyEntriesInBatchRequest");
    const dup = await rejects(() =>
      sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: "a", MessageBody: "1" }, { Id: "a", MessageBody: "2" }] })),
    );
    assert.equal(dup.name, "BatchEntryIdsNotDistinct");
    const emptyDel = await rejects(() => sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: [] })));
    assert.equal(emptyDel.name, "EmptyBatchRequest");
    const dupCv = await rejects(() =>
      sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: [
            { Id: "x", ReceiptHandle: "h1", VisibilityTimeout: 1 },
            { Id: "x", ReceiptHandle: "h2", VisibilityTimeout: 1 },
          ],
        }),
      ),
    );
    assert.equal(dupCv.name, "BatchEntryIdsNotDistinct");
    // Nothing was sent by any of the refused batches.
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
    assert.equal((got.Messages || []).length, 0);
  });
});

describe("visibility", () => {
  test("an expired visibility timeout redelivers with ApproximateReceiveCount 2", async () => {
    const { url } = await createQueue("v3-vis", { VisibilityTimeout: "30" });
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "again" }));
    const [first] = await collect(receiver(url, { VisibilityTimeout: 1 }), 1);
    assert.equal(first.MessageId, sent.MessageId);
    assert.equal(first.Attributes.ApproximateReceiveCount, "1");
    const during = await receiver(url)(10);
    assert.equal((during || []).length, 0, "invisible while the timeout runs");
    await sleep(1300);
    const [second] = await collect(receiver(url), 1, 5000);
    assert.ok(second, "redelivered after the timeout");
    assert.equal(second.MessageId, sent.MessageId);
    assert.equal(second.Attributes.ApproximateReceiveCount, "2");
    assert.notEqual(second.ReceiptHandle, first.ReceiptHandle);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: second.ReceiptHandle }));
  });

  test("ChangeMessageVisibility 0 releases at once; extending keeps it hidden", async () => {
    const { url } = await createQueue("v3-cmv", { VisibilityTimeout: "30" });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "release me" }));
    const [m] = await collect(receiver(url), 1);
    assert.ok(m);
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 }));
    const [again] = await collect(receiver(url, { VisibilityTimeout: 1 }), 1, 3000);
    assert.ok(again, "visible again right after ChangeMessageVisibility 0");
    assert.equal(again.MessageId, m.MessageId);

    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: again.ReceiptHandle, VisibilityTimeout: 20 }));
    await sleep(1500);
    const hidden = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
    assert.equal((hidden.Messages || []).length, 0, "the extended lease outlives the 1 s receive timeout");
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: again.ReceiptHandle }));
  });
});

describe("long poll and delays", () => {
  test("WaitTimeSeconds returns promptly when a message arrives ~1 s later", async () => {
    const { url } = await createQueue("v3-poll");
    const t0 = Date.now();
    const poll = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 10 }));
    await sleep(1000);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "wake up" }));
    const out = await poll;
    const elapsed = Date.now() - t0;
    assert.equal(out.Messages?.[0]?.Body, "wake up");
    assert.ok(elapsed >= 900, `the poll waited for the send (${elapsed} ms)`);
    assert.ok(elapsed < 5000, `the poll answered promptly (${elapsed} ms)`);
  });

  test("an empty long poll waits about WaitTimeSeconds", async () => {
    const { url } = await createQueue("v3-pollempty");
    const t0 = Date.now();
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 2 }));
    const elapsed = Date.now() - t0;
    assert.equal((out.Messages || []).length, 0);
    assert.ok(elapsed >= 1800 && elapsed < 6000, `waited ${elapsed} ms`);
  });

  test("per-message DelaySeconds and queue DelaySeconds hold messages back", async () => {
    const { url } = await createQueue("v3-delay");
    const t0 = Date.now();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "later", DelaySeconds: 2 }));
    const early = await receiver(url)(10);
    assert.equal((early || []).length, 0, "not visible during the delay");
    const delayed = await attrs(url, ["ApproximateNumberOfMessagesDelayed"]);
    assert.equal(delayed.ApproximateNumberOfMessagesDelayed, "1");
    const [m] = await collect(receiver(url), 1, 8000);
    assert.equal(m?.Body, "later");
    assert.ok(Date.now() - t0 >= 1800, "delivered no earlier than the delay");

    const q2 = await createQueue("v3-qdelay", { DelaySeconds: "2" });
    const t1 = Date.now();
    await sqs.send(new SendMessageCommand({ QueueUrl: q2.url, MessageBody: "queue-delayed" }));
    assert.equal(((await receiver(q2.url)(10)) || []).length, 0, "queue delay holds the message");
    const [m2] = await collect(receiver(q2.url), 1, 8000);
    assert.equal(m2?.Body, "queue-delayed");
    assert.ok(Date.now() - t1 >= 1800, "delivered no earlier than the queue delay");
  });
});

describe("FIFO", () => {
  test("order per group, SequenceNumber, explicit and content-based dedup", async () => {
    const { url } = await createQueue("v3-order.fifo", { FifoQueue: "true", ContentBasedDeduplication: "true", VisibilityTimeout: "5" });
    const sends = [];
    for (let i = 0; i < 5; i++) {
      for (const g of ["alpha", "beta"]) {
        const body = `${g}-${i}`;
        const r = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageGroupId: g }));
        assert.ok(r.SequenceNumber, "a FIFO send answers a SequenceNumber");
        sends.push(body);
      }
    }
    // Content-based dedup: the same body again in the window is not delivered twice.
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "alpha-0", MessageGroupId: "alpha" }));
    // Explicit dedup id: a second send with the same id and a different body is suppressed.
    const d1 = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "dedup-first", MessageGroupId: "gamma", MessageDeduplicationId: "same-id" }));
    const d2 = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "dedup-second", MessageGroupId: "gamma", MessageDeduplicationId: "same-id" }));
    assert.ok(d1.MessageId && d2.MessageId);

    const got = [];
    const until = Date.now() + 15000;
    while (Date.now() < until && got.length < 12) {
      const msgs = (await receiver(url)(10)) || [];
      for (const m of msgs) {
        got.push(m);
        await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
      }
      if (!msgs.length) await sleep(150);
    }
    // Drain a little longer to catch a duplicate that should not exist.
    await sleep(300);
    got.push(...(((await receiver(url)(10)) || [])));
    const bodies = got.map((m) => m.Body);
    for (const g of ["alpha", "beta"]) {
      const inGroup = got.filter((m) => m.Attributes.MessageGroupId === g);
      assert.deepEqual(inGroup.map((m) => m.Body), [0, 1, 2, 3, 4].map((i) => `${g}-${i}`), `group ${g} in order`);
      const seq = inGroup.map((m) => BigInt(m.Attributes.SequenceNumber));
      for (let i = 1; i < seq.length; i++) assert.ok(seq[i] > seq[i - 1], `SequenceNumber increases within ${g}`);
    }
    assert.deepEqual(bodies.filter((b) => b.startsWith("dedup")), ["dedup-first"]);
    assert.equal(bodies.length, 11, `exactly 11 distinct deliveries, got ${JSON.stringify(bodies)}`);
  });

  test("FIFO batch gestures: ChangeMessageVisibilityBatch 0 over a run, then DeleteMessageBatch out of order", async () => {
    const { url } = await createQueue("v3-fbatch.fifo", { FifoQueue: "true", VisibilityTimeout: "30" });
    const bodies = ["r0", "r1", "r2", "r3"];
    const sent = await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: url, Entries: bodies.map((b, i) => ({ Id: `e${i}`, MessageBody: b, MessageGroupId: "run", MessageDeduplicationId: `d${i}` })) }),
    );
    assert.equal(sent.Successful.length, 4);
    const first = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageSystemAttributeNames: ["All"] }))).Messages || [];
    assert.ok(first.length >= 1);
    assert.deepEqual(first.map((m) => m.Body), bodies.slice(0, first.length), "a run comes in group order");
    // The error path every consumer library takes: release everything it just received.
    const rel = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({ QueueUrl: url, Entries: first.map((m, i) => ({ Id: `c${i}`, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 })) }),
    );
    assert.equal((rel.Failed || []).length, 0, `no entry refused: ${JSON.stringify(rel.Failed)}`);
    assert.equal(rel.Successful.length, first.length);
    // Everything again, in order; delete each received run in reverse order.
    const got = [];
    const until = Date.now() + 10000;
    while (got.length < 4 && Date.now() < until) {
      const run = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }))).Messages || [];
      got.push(...run);
      if (!run.length) continue;
      const del = await sqs.send(
        new DeleteMessageBatchCommand({ QueueUrl: url, Entries: run.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })).reverse() }),
      );
      assert.equal((del.Failed || []).length, 0, `no delete refused: ${JSON.stringify(del.Failed)}`);
    }
    assert.deepEqual(got.map((m) => m.Body), bodies);
    const left = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
    assert.equal((left.Messages || []).length, 0, "nothing redelivered after the deletes");
  });

  test("a FIFO send without MessageGroupId is refused", async () => {
    const { url } = await createQueue("v3-nogroup.fifo", { FifoQueue: "true", ContentBasedDeduplication: "true" });
    const err = await rejects(() => sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x" })));
    assert.ok(["MissingParameter", "InvalidParameterValue"].includes(err.name), err.name);
    const fixed = await rejects(() => sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { FifoQueue: "false" } })));
    // AWS's recorded answer: changing a queue's type is an invalid value.
    assert.equal(fixed.name, "InvalidAttributeValue");
  });
});

describe("dead letters and purge", () => {
  test("redrive after maxReceiveCount moves the message to the dead-letter queue", async () => {
    const dlq = await createQueue("v3-dlq");
    const dlqArn = (await attrs(dlq.url, ["QueueArn"])).QueueArn;
    const src = await createQueue("v3-src", {
      VisibilityTimeout: "1",
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
    });
    const sources = await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlq.url }));
    assert.deepEqual(sources.queueUrls, [src.url]);

    const sent = await sqs.send(
      new SendMessageCommand({ QueueUrl: src.url, MessageBody: "poison", MessageAttributes: { why: { DataType: "String", StringValue: "bad" } } }),
    );
    const counts = [];
    const until = Date.now() + 12000;
    let dead;
    while (Date.now() < until && !dead) {
      const m = (await receiver(src.url)(1)) || [];
      for (const x of m) counts.push(Number(x.Attributes.ApproximateReceiveCount));
      const d = (await receiver(dlq.url, { MessageSystemAttributeNames: ["All", "queen.originalMessageId"] })(1)) || [];
      if (d.length) dead = d[0];
      else await sleep(400);
    }
    assert.deepEqual(counts, [1, 2], "delivered exactly maxReceiveCount times before the move");
    assert.ok(dead, "the message reached the dead-letter queue");
    assert.equal(dead.Body, "poison");
    assert.equal(dead.MessageAttributes?.why?.StringValue, "bad");
    assert.equal(dead.MessageId, sent.MessageId, "its own id, as SQS keeps it");
    assert.equal(dead.Attributes["queen.originalMessageId"], sent.MessageId);
    assert.ok(Number(dead.Attributes.ApproximateReceiveCount) >= 2, "the receive count is carried forward");
    const left = await sqs.send(new ReceiveMessageCommand({ QueueUrl: src.url, WaitTimeSeconds: 1 }));
    assert.equal((left.Messages || []).length, 0, "the source no longer holds it");
  });

  test("PurgeQueue empties the queue; a second purge within 60 s is PurgeQueueInProgress", async () => {
    const { url } = await createQueue("v3-purge");
    for (let i = 0; i < 3; i++) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `p${i}` }));
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }));
    assert.equal((out.Messages || []).length, 0);
    assert.equal((await attrs(url)).ApproximateNumberOfMessages, "0");
    const again = await rejects(() => sqs.send(new PurgeQueueCommand({ QueueUrl: url })));
    assert.equal(again.name, "PurgeQueueInProgress");
    // The queue still works after a purge.
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "after purge" }));
    const [m] = await collect(receiver(url), 1);
    assert.equal(m?.Body, "after purge");
  });
});

describe("errors", () => {
  test("another account's queue URL is QueueDoesNotExist", async () => {
    const { url } = await createQueue("v3-acct");
    const foreign = otherAccountUrl(url);
    const e1 = await rejects(() => sqs.send(new SendMessageCommand({ QueueUrl: foreign, MessageBody: "x" })));
    assert.equal(e1.name, "QueueDoesNotExist");
    assert.equal(e1.$metadata.httpStatusCode, 400);
    const e2 = await rejects(() => sqs.send(new GetQueueAttributesCommand({ QueueUrl: foreign, AttributeNames: ["All"] })));
    assert.equal(e2.name, "QueueDoesNotExist");
  });

  test("a forged receipt handle is ReceiptHandleIsInvalid", async () => {
    const { url } = await createQueue("v3-forge");
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x" }));
    const [m] = await collect(receiver(url), 1);
    assert.ok(m);
    // Flip one character of a real handle: the MAC must refuse it.
    const h = m.ReceiptHandle;
    const i = Math.floor(h.length / 2);
    const forged = h.slice(0, i) + (h[i] === "A" ? "B" : "A") + h.slice(i + 1);
    const e1 = await rejects(() => sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: forged })));
    assert.equal(e1.name, "ReceiptHandleIsInvalid");
    const e2 = await rejects(() => sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: "garbage" })));
    assert.equal(e2.name, "ReceiptHandleIsInvalid");
    const e3 = await rejects(() =>
      sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: forged, VisibilityTimeout: 0 })),
    );
    assert.equal(e3.name, "ReceiptHandleIsInvalid");
    // A real handle used on another queue is refused too.
    const other = await createQueue("v3-forge2");
    const e4 = await rejects(() => sqs.send(new DeleteMessageCommand({ QueueUrl: other.url, ReceiptHandle: h })));
    assert.equal(e4.name, "ReceiptHandleIsInvalid");
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: h }));
  });

  test("unknown attribute names are InvalidAttributeName", async () => {
    const { url } = await createQueue("v3-badattr");
    const e1 = await rejects(() => sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["NoSuchAttribute"] })));
    assert.equal(e1.name, "InvalidAttributeName");
    const e2 = await rejects(() => sqs.send(new CreateQueueCommand({ QueueName: uniq("v3-badattr2"), Attributes: { Bogus: "1" } })));
    assert.equal(e2.name, "InvalidAttributeName");
    const e3 = await rejects(() => sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { Bogus: "1" } })));
    assert.equal(e3.name, "InvalidAttributeName");
  });

  test("a wrong secret is SignatureDoesNotMatch, an unknown key InvalidClientTokenId", async () => {
    const wrong = new SQSClient({ endpoint: ENDPOINT, region: REGION, credentials: { accessKeyId: CREDENTIALS.accessKeyId, secretAccessKey: "not-the-secret" }, maxAttempts: 1 });
    const unknown = new SQSClient({ endpoint: ENDPOINT, region: REGION, credentials: { accessKeyId: "AKIDNOBODYKNOWS", secretAccessKey: "x" }, maxAttempts: 1 });
    try {
      const e1 = await rejects(() => wrong.send(new ListQueuesCommand({})));
      assert.equal(e1.name, "SignatureDoesNotMatch");
      assert.equal(e1.$metadata.httpStatusCode, 403);
      const e2 = await rejects(() => unknown.send(new ListQueuesCommand({})));
      assert.equal(e2.name, "InvalidClientTokenId");
      assert.equal(e2.$metadata.httpStatusCode, 403);
    } finally {
      wrong.destroy();
      unknown.destroy();
    }
  });
});
