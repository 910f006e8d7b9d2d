// aws-sdk v2 (2.1693.0) against queen-sqs over Query/XML. That version ships SQS as JSON,
// so the client is built on a query-protocol model derived from the shipped one: see
// sqs_query_model.mjs for what was done and why. v2 checks body MD5s on send and receive
// (computeChecksums defaults to true); attribute MD5s are checked here.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { queryModel } from "./sqs_query_model.mjs";
import { ENDPOINT, REGION, CREDENTIALS, uniq, sleep, collect, rejects, md5Hex, md5OfMessageAttributes, otherAccountUrl } from "./support.mjs";

process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = "1";
const require = createRequire(import.meta.url);
const AWS = require("aws-sdk");

const MODEL = queryModel();
// Names outside the closed action set, to see InvalidAction over Query (case matters).
for (const bogus of ["Frobnicate", "sendmessage"]) {
  MODEL.operations[bogus] = {
    name: bogus,
    input: { type: "structure", members: { QueueUrl: {}, MessageBody: {} } },
    output: { type: "structure", members: {}, resultWrapper: `${bogus}Result` },
  };
}

const options = {
  apiConfig: MODEL,
  endpoint: ENDPOINT,
  region: REGION,
  credentials: new AWS.Credentials(CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey),
  maxRetries: 0,
  // Leave every check to the server: v2's own min-length checks would hide EmptyBatchRequest.
  paramValidation: false,
};
const sqs = new AWS.SQS(options);
assert.equal(sqs.api.protocol, "query", "the v2 client speaks Query");

const created = [];
after(async () => {
  for (const url of created) await sqs.deleteQueue({ QueueUrl: url }).promise().catch(() => {});
});

async function createQueue(prefix, Attributes = {}, extra = {}) {
  const name = prefix.endsWith(".fifo") ? uniq(prefix.slice(0, -5)) + ".fifo" : uniq(prefix);
  const out = await sqs.createQueue({ QueueName: name, Attributes, ...extra }).promise();
  assert.ok(out.QueueUrl);
  created.push(out.QueueUrl);
  return { name, url: out.QueueUrl };
}

const receiver = (url, params = {}) => async (max) =>
  (
    await sqs
      .receiveMessage({ QueueUrl: url, MaxNumberOfMessages: max, WaitTimeSeconds: 0, AttributeNames: ["All"], MessageAttributeNames: ["All"], ...params })
      .promise()
  ).Messages;

describe("aws-sdk v2 over Query/XML", () => {
  test("create, GetQueueUrl, ListQueues, GetQueueAttributes, SetQueueAttributes, delete", async () => {
    const { name, url } = await createQueue("v2-basic", { VisibilityTimeout: "11", DelaySeconds: "0" });
    assert.equal((await sqs.getQueueUrl({ QueueName: name }).promise()).QueueUrl, url);
    assert.deepEqual((await sqs.listQueues({ QueueNamePrefix: name }).promise()).QueueUrls, [url]);
    const a = (await sqs.getQueueAttributes({ QueueUrl: url, AttributeNames: ["All"] }).promise()).Attributes;
    assert.equal(a.VisibilityTimeout, "11");
    assert.equal(a.ApproximateNumberOfMessages, "0");
    assert.match(a.QueueArn, new RegExp(`:${name}$`));
    const only = (await sqs.getQueueAttributes({ QueueUrl: url, AttributeNames: ["VisibilityTimeout", "DelaySeconds"] }).promise()).Attributes;
    assert.deepEqual(only, { VisibilityTimeout: "11", DelaySeconds: "0" });
    await sqs.setQueueAttributes({ QueueUrl: url, Attributes: { VisibilityTimeout: "12", MessageRetentionPeriod: "3600" } }).promise();
    const b = (await sqs.getQueueAttributes({ QueueUrl: url, AttributeNames: ["All"] }).promise()).Attributes;
    assert.equal(b.VisibilityTimeout, "12");
    assert.equal(b.MessageRetentionPeriod, "3600");
    await sqs.deleteQueue({ QueueUrl: url }).promise();
    const e = await rejects(() => sqs.getQueueUrl({ QueueName: name }).promise());
    assert.equal(e.code, "AWS.SimpleQueueService.NonExistentQueue");
    assert.equal(e.statusCode, 400);
  });

  test("send with attributes, receive with All, delete", async () => {
    const { url } = await createQueue("v2-msg", { VisibilityTimeout: "5" });
    const attrs = {
      s: { DataType: "String", StringValue: "ünï & <xml> \"quoted\"" },
      n: { DataType: "Number", StringValue: "-3.25" },
      b: { DataType: "Binary", BinaryValue: Buffer.from([0, 9, 128, 255]) },
    };
    const body = "body with <angle> & ampersand, ünïcødé and\nnewline";
    const sent = await sqs.sendMessage({ QueueUrl: url, MessageBody: body, MessageAttributes: attrs }).promise();
    assert.equal(sent.MD5OfMessageBody, md5Hex(body));
    assert.equal(sent.MD5OfMessageAttributes, md5OfMessageAttributes(attrs));

    const [m] = await collect(receiver(url), 1);
    assert.ok(m, "received");
    assert.equal(m.MessageId, sent.MessageId);
    assert.equal(m.Body, body);
    assert.equal(m.MessageAttributes.s.StringValue, attrs.s.StringValue);
    assert.equal(m.MessageAttributes.n.StringValue, "-3.25");
    assert.equal(m.MessageAttributes.n.DataType, "Number");
    assert.deepEqual(Buffer.from(m.MessageAttributes.b.BinaryValue), attrs.b.BinaryValue);
    assert.equal(m.MD5OfMessageAttributes, md5OfMessageAttributes(attrs));
    assert.equal(m.Attributes.ApproximateReceiveCount, "1");
    assert.match(m.Attributes.SentTimestamp, /^\d{13}$/);
    await sqs.deleteMessage({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }).promise();
    const after = await sqs.receiveMessage({ QueueUrl: url, WaitTimeSeconds: 1 }).promise();
    assert.equal((after.Messages || []).length, 0);
  });

  test("batch send and delete, with a per-entry failure, and the batch error codes", async () => {
    const { url } = await createQueue("v2-batch", { VisibilityTimeout: "20" });
    const entries = [0, 1, 2].map((i) => ({ Id: `m${i}`, MessageBody: `b${i}`, MessageAttributes: { i: { DataType: "Number", StringValue: String(i) } } }));
    const out = await sqs.sendMessageBatch({ QueueUrl: url, Entries: entries }).promise();
    assert.deepEqual(out.Successful.map((s) => s.Id).sort(), ["m0", "m1", "m2"]);
    assert.deepEqual(out.Failed, []);
    for (const s of out.Successful) {
      const e = entries.find((x) => x.Id === s.Id);
      assert.equal(s.MD5OfMessageAttributes, md5OfMessageAttributes(e.MessageAttributes));
    }
    const msgs = await collect(receiver(url), 3);
    assert.equal(msgs.length, 3);
    const del = await sqs
      .deleteMessageBatch({ QueueUrl: url, Entries: [...msgs.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })), { Id: "bad", ReceiptHandle: "Zm9yZ2Vk" }] })
      .promise();
    assert.deepEqual(del.Successful.map((s) => s.Id).sort(), ["d0", "d1", "d2"]);
    assert.equal(del.Failed.length, 1);
    assert.equal(del.Failed[0].Id, "bad");
    assert.equal(del.Failed[0].Code, "ReceiptHandleIsInvalid");
    assert.equal(del.Failed[0].SenderFault, true);

    const empty = await rejects(() => sqs.sendMessageBatch({ QueueUrl: url, Entries: [] }).promise());
    assert.equal(empty.code, "AWS.SimpleQueueService.EmptyBatchRequest");
    const many = await rejects(() =>
      sqs.sendMessageBatch({ QueueUrl: url, Entries: Array.from({ length: 11 }, (_, i) => ({ Id: `x${i}`, MessageBody: "x" })) }).promise(),
    );
    assert.equal(many.code, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest");
    const dup = await rejects(() =>
      sqs.sendMessageBatch({ QueueUrl: url, Entries: [{ Id: "a", MessageBody: "1" }, { Id: "a", MessageBody: "2" }] }).promise(),
    );
    assert.equal(dup.code, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct");
  });

  test("tags", async () => {
    const { url } = await createQueue("v2-tags", {}, { tags: { one: "1" } });
    assert.deepEqual((await sqs.listQueueTags({ QueueUrl: url }).promise()).Tags, { one: "1" });
    await sqs.tagQueue({ QueueUrl: url, Tags: { two: "2", three: "3" } }).promise();
    await sqs.untagQueue({ QueueUrl: url, TagKeys: ["one", "three"] }).promise();
    assert.deepEqual((await sqs.listQueueTags({ QueueUrl: url }).promise()).Tags, { two: "2" });
  });

  test("FIFO send and receive: per-group order, SequenceNumber, dedup", async () => {
    const { url } = await createQueue("v2-fifo.fifo", { FifoQueue: "true", VisibilityTimeout: "5" });
    const a = (await sqs.getQueueAttributes({ QueueUrl: url, AttributeNames: ["FifoQueue", "ContentBasedDeduplication"] }).promise()).Attributes;
    assert.equal(a.FifoQueue, "true");
    for (let i = 0; i < 3; i++) {
      for (const g of ["g1", "g2"]) {
        const r = await sqs.sendMessage({ QueueUrl: url, MessageBody: `${g}:${i}`, MessageGroupId: g, MessageDeduplicationId: `${g}-${i}` }).promise();
        assert.ok(r.SequenceNumber);
      }
    }
    await sqs.sendMessage({ QueueUrl: url, MessageBody: "g1:dup", MessageGroupId: "g1", MessageDeduplicationId: "g1-0" }).promise();
    const got = [];
    const until = Date.now() + 10000;
    while (Date.now() < until && got.length < 6) {
      const msgs = (await receiver(url)(10)) || [];
      for (const m of msgs) {
        got.push(m);
        await sqs.deleteMessage({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }).promise();
      }
      if (!msgs.length) await sleep(150);
    }
    got.push(...(((await receiver(url)(10)) || [])));
    for (const g of ["g1", "g2"]) {
      const inGroup = got.filter((m) => m.Attributes.MessageGroupId === g);
      assert.deepEqual(inGroup.map((m) => m.Body), [0, 1, 2].map((i) => `${g}:${i}`));
      assert.deepEqual(inGroup.map((m) => m.Attributes.MessageDeduplicationId), [0, 1, 2].map((i) => `${g}-${i}`));
    }
    assert.equal(got.length, 6, "the duplicate was suppressed");
  });

  test("error codes over Query/XML", async () => {
    const { name, url } = await createQueue("v2-err", { VisibilityTimeout: "5" });
    const e1 = await rejects(() => sqs.getQueueUrl({ QueueName: uniq("v2-nope") }).promise());
    assert.equal(e1.code, "AWS.SimpleQueueService.NonExistentQueue");
    const e2 = await rejects(() => sqs.sendMessage({ QueueUrl: otherAccountUrl(url), MessageBody: "x" }).promise());
    assert.equal(e2.code, "AWS.SimpleQueueService.NonExistentQueue");
    const e3 = await rejects(() => sqs.deleteMessage({ QueueUrl: url, ReceiptHandle: "definitely-not-a-handle" }).promise());
    assert.equal(e3.code, "ReceiptHandleIsInvalid");
    const e4 = await rejects(() => sqs.makeRequest("frobnicate", { QueueUrl: url }).promise());
    assert.equal(e4.code, "InvalidAction");
    const e5 = await rejects(() => sqs.makeRequest("sendmessage", { QueueUrl: url, MessageBody: "x" }).promise());
    assert.equal(e5.code, "InvalidAction");
    const e6 = await rejects(() => sqs.createQueue({ QueueName: name, Attributes: { VisibilityTimeout: "6" } }).promise());
    assert.equal(e6.code, "QueueAlreadyExists");
    const e7 = await rejects(() => sqs.getQueueAttributes({ QueueUrl: url, AttributeNames: ["Nonsense"] }).promise());
    assert.equal(e7.code, "InvalidAttributeName");
    const wrong = new AWS.SQS({ ...options, credentials: new AWS.Credentials(CREDENTIALS.accessKeyId, "wrong-secret") });
    const e8 = await rejects(() => wrong.listQueues({}).promise());
    assert.equal(e8.code, "SignatureDoesNotMatch");
    assert.equal(e8.statusCode, 403);
  });

  test("visibility: ChangeMessageVisibility 0 and an expired lease redeliver", async () => {
    const { url } = await createQueue("v2-vis", { VisibilityTimeout: "30" });
    await sqs.sendMessage({ QueueUrl: url, MessageBody: "v" }).promise();
    const [m1] = await collect(receiver(url), 1);
    await sqs.changeMessageVisibility({ QueueUrl: url, ReceiptHandle: m1.ReceiptHandle, VisibilityTimeout: 0 }).promise();
    const [m2] = await collect(receiver(url, { VisibilityTimeout: 1 }), 1, 3000);
    assert.equal(m2?.MessageId, m1.MessageId);
    const [m3] = await collect(receiver(url), 1, 5000);
    assert.equal(m3?.MessageId, m1.MessageId, "redelivered after the 1 s lease");
    assert.ok(Number(m3.Attributes.ApproximateReceiveCount) >= 2);
    await sqs.deleteMessage({ QueueUrl: url, ReceiptHandle: m3.ReceiptHandle }).promise();
    const left = await sqs.receiveMessage({ QueueUrl: url, WaitTimeSeconds: 1 }).promise();
    assert.equal((left.Messages || []).length, 0);
  });
});
