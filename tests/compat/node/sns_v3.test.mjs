// @aws-sdk/client-sns v3 (Query/XML) against queen-sqs, delivering into SQS queues read with
// @aws-sdk/client-sqs v3 (JSON). SNS v0 subscribes SQS queues only.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { createVerify } from "node:crypto";
import {
  SNSClient,
  CreateTopicCommand,
  DeleteTopicCommand,
  ListTopicsCommand,
  GetTopicAttributesCommand,
  SetTopicAttributesCommand,
  SubscribeCommand,
  UnsubscribeCommand,
  ConfirmSubscriptionCommand,
  ListSubscriptionsCommand,
  ListSubscriptionsByTopicCommand,
  GetSubscriptionAttributesCommand,
  SetSubscriptionAttributesCommand,
  PublishCommand,
  PublishBatchCommand,
  TagResourceCommand,
  UntagResourceCommand,
  ListTagsForResourceCommand,
} from "@aws-sdk/client-sns";
import {
  SQSClient,
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  DeleteMessageCommand,
} from "@aws-sdk/client-sqs";
import { ENDPOINT, REGION, CREDENTIALS, uniq, sleep, collect, rejects } from "./support.mjs";

const sns = new SNSClient({ endpoint: ENDPOINT, region: REGION, credentials: CREDENTIALS });
const sqs = new SQSClient({ endpoint: ENDPOINT, region: REGION, credentials: CREDENTIALS });
const queues = [];
const topics = [];
after(async () => {
  for (const arn of topics) await sns.send(new DeleteTopicCommand({ TopicArn: arn })).catch(() => {});
  for (const url of queues) await sqs.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => {});
  sns.destroy();
  sqs.destroy();
});

async function topic(prefix, Attributes) {
  const name = prefix.endsWith(".fifo") ? uniq(prefix.slice(0, -5)) + ".fifo" : uniq(prefix);
  const out = await sns.send(new CreateTopicCommand({ Name: name, Attributes }));
  assert.match(out.TopicArn, new RegExp(`^arn:aws:sns:[^:]+:\\d{12}:${name.replace(".", "\\.")}$`));
  topics.push(out.TopicArn);
  return { name, arn: out.TopicArn };
}

async function queue(prefix, Attributes = {}) {
  const name = prefix.endsWith(".fifo") ? uniq(prefix.slice(0, -5)) + ".fifo" : uniq(prefix);
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "5", ...Attributes } }));
  queues.push(QueueUrl);
  const { Attributes: a } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
  return { url: QueueUrl, arn: a.QueueArn };
}

async function subscribe(topicArn, q, Attributes) {
  const out = await sns.send(new SubscribeCommand({ TopicArn: topicArn, Protocol: "sqs", Endpoint: q.arn, Attributes, ReturnSubscriptionArn: true }));
  assert.match(out.SubscriptionArn, new RegExp(`^${topicArn.replace(/[.]/g, "\\.")}:[0-9a-f-]+$`));
  return out.SubscriptionArn;
}

/** Receives until `n` messages arrived or the time is up, deleting each batch as it comes
 * (a FIFO group stays blocked while its message is in flight). */
async function drain(url, n, timeoutMs = 8000) {
  return collect(
    async (max) => {
      const out = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: max, WaitTimeSeconds: 0, MessageAttributeNames: ["All"], MessageSystemAttributeNames: ["All"] }),
      );
      for (const m of out.Messages || []) await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
      return out.Messages;
    },
    n,
    timeoutMs,
  );
}

/** Nothing (more) arrives within `ms`. */
async function quiet(url, ms = 1000) {
  await sleep(ms);
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageAttributeNames: ["All"], MessageSystemAttributeNames: ["All"] }),
  );
  return out.Messages || [];
}

describe("topics", () => {
  test("create is idempotent; list, attributes, tags, delete", async () => {
    const t = await topic("sns-topic", { DisplayName: "first" });
    const again = await sns.send(new CreateTopicCommand({ Name: t.name }));
    assert.equal(again.TopicArn, t.arn);

    let found = false;
    let NextToken;
    do {
      const page = await sns.send(new ListTopicsCommand({ NextToken }));
      found ||= (page.Topics || []).some((x) => x.TopicArn === t.arn);
      NextToken = page.NextToken;
    } while (NextToken && !found);
    assert.ok(found, "ListTopics lists the topic");

    await sns.send(new SetTopicAttributesCommand({ TopicArn: t.arn, AttributeName: "DisplayName", AttributeValue: "renamed" }));
    const { Attributes: a } = await sns.send(new GetTopicAttributesCommand({ TopicArn: t.arn }));
    assert.equal(a.TopicArn, t.arn);
    assert.equal(a.DisplayName, "renamed");
    assert.equal(a.SubscriptionsPending, "0");
    assert.equal(a.SubscriptionsConfirmed, "0");

    await sns.send(new TagResourceCommand({ ResourceArn: t.arn, Tags: [{ Key: "a", Value: "1" }, { Key: "b", Value: "2" }] }));
    await sns.send(new UntagResourceCommand({ ResourceArn: t.arn, TagKeys: ["a"] }));
    const tags = await sns.send(new ListTagsForResourceCommand({ ResourceArn: t.arn }));
    assert.deepEqual(tags.Tags, [{ Key: "b", Value: "2" }]);

    await sns.send(new DeleteTopicCommand({ TopicArn: t.arn }));
    await sns.send(new DeleteTopicCommand({ TopicArn: t.arn })); // idempotent
    const e = await rejects(() => sns.send(new GetTopicAttributesCommand({ TopicArn: t.arn })));
    assert.equal(e.name, "NotFoundException");
    assert.equal(e.$metadata.httpStatusCode, 404);
  });

  test("FifoTopic must agree with the .fifo suffix", async () => {
    const e1 = await rejects(() => sns.send(new CreateTopicCommand({ Name: uniq("sns-notfifo"), Attributes: { FifoTopic: "true" } })));
    assert.equal(e1.name, "InvalidParameterException");
    const e2 = await rejects(() => sns.send(new CreateTopicCommand({ Name: uniq("sns-x") + ".fifo", Attributes: { FifoTopic: "false" } })));
    assert.equal(e2.name, "InvalidParameterException");
  });
});

describe("subscriptions and delivery", () => {
  test("fan-out to three queues, enveloped notification fields", async () => {
    const t = await topic("sns-fan");
    const qs = [await queue("sns-fan-a"), await queue("sns-fan-b"), await queue("sns-fan-c")];
    const subs = [];
    for (const q of qs) subs.push(await subscribe(t.arn, q));
    // Subscribe is idempotent per (topic, protocol, endpoint).
    assert.equal(await subscribe(t.arn, qs[0]), subs[0]);
    const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: t.arn }));
    assert.deepEqual(listed.Subscriptions.map((s) => s.SubscriptionArn).sort(), [...subs].sort());
    for (const s of listed.Subscriptions) {
      assert.equal(s.Protocol, "sqs");
      assert.equal(s.TopicArn, t.arn);
    }
    const { Attributes: ta } = await sns.send(new GetTopicAttributesCommand({ TopicArn: t.arn }));
    assert.equal(ta.SubscriptionsConfirmed, "3");

    const pub = await sns.send(
      new PublishCommand({
        TopicArn: t.arn,
        Message: "hello subscribers ü",
        Subject: "greeting",
        MessageAttributes: { color: { DataType: "String", StringValue: "red" }, size: { DataType: "Number", StringValue: "3" } },
      }),
    );
    assert.ok(pub.MessageId);
    for (const q of qs) {
      const [m, ...more] = await drain(q.url, 1);
      assert.ok(m, "each queue gets the notification");
      assert.equal(more.length, 0);
      const n = JSON.parse(m.Body);
      assert.equal(n.Type, "Notification");
      assert.equal(n.MessageId, pub.MessageId);
      assert.equal(n.TopicArn, t.arn);
      assert.equal(n.Subject, "greeting");
      assert.equal(n.Message, "hello subscribers ü");
      assert.ok(!Number.isNaN(Date.parse(n.Timestamp)), "Timestamp is a date");
      assert.ok(typeof n.SignatureVersion === "string", "SignatureVersion stays");
      // Signed as AWS documents it; node's crypto (OpenSSL) verifies it with the
      // certificate fetched, without credentials, from SigningCertURL.
      const pem = await (await fetch(n.SigningCertURL)).text();
      const canonical = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
        .filter((k) => k in n)
        .map((k) => `${k}\n${n[k]}\n`)
        .join("");
      const verifier = createVerify(n.SignatureVersion === "2" ? "RSA-SHA256" : "RSA-SHA1");
      verifier.update(canonical);
      assert.ok(verifier.verify(pem, n.Signature, "base64"), "the signature verifies");
      assert.ok(n.UnsubscribeURL.includes("?Action=Unsubscribe&SubscriptionArn="), n.UnsubscribeURL);
      assert.deepEqual(n.MessageAttributes, { color: { Type: "String", Value: "red" }, size: { Type: "Number", Value: "3" } });
    }
  });

  test("raw delivery: the body is the message, attributes are SQS message attributes", async () => {
    const t = await topic("sns-raw");
    const raw = await queue("sns-raw-q");
    const env = await queue("sns-env-q");
    const sub = await subscribe(t.arn, raw, { RawMessageDelivery: "true" });
    await subscribe(t.arn, env);
    const { Attributes: sa } = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: sub }));
    assert.equal(sa.RawMessageDelivery, "true");
    assert.equal(sa.Protocol, "sqs");
    assert.equal(sa.Endpoint, raw.arn);
    assert.equal(sa.TopicArn, t.arn);
    assert.ok(!("FilterPolicyScope" in sa), "no filter policy, no FilterPolicyScope");

    const body = '{"json": "as a string", "n": 1}';
    await sns.send(new PublishCommand({ TopicArn: t.arn, Message: body, MessageAttributes: { kind: { DataType: "String", StringValue: "k1" } } }));
    const [r] = await drain(raw.url, 1);
    assert.equal(r?.Body, body);
    assert.equal(r.MessageAttributes?.kind?.StringValue, "k1");
    const [e] = await drain(env.url, 1);
    assert.equal(JSON.parse(e.Body).Message, body);
  });

  test("filter policies: MessageAttributes scope and MessageBody scope, matching and not", async () => {
    const t = await topic("sns-filter");
    const byAttr = await queue("sns-f-attr");
    const byBody = await queue("sns-f-body");
    const all = await queue("sns-f-all");
    const subAttr = await subscribe(t.arn, byAttr, { FilterPolicy: JSON.stringify({ color: ["red", "green"], size: [{ numeric: [">", 5] }] }), RawMessageDelivery: "true" });
    const subBody = await subscribe(t.arn, byBody, { RawMessageDelivery: "true" });
    await sns.send(new SetSubscriptionAttributesCommand({ SubscriptionArn: subBody, AttributeName: "FilterPolicyScope", AttributeValue: "MessageBody" }));
    await sns.send(new SetSubscriptionAttributesCommand({ SubscriptionArn: subBody, AttributeName: "FilterPolicy", AttributeValue: JSON.stringify({ order: { kind: ["created"] } }) }));
    await subscribe(t.arn, all, { RawMessageDelivery: "true" });

    const { Attributes: aa } = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: subAttr }));
    assert.deepEqual(JSON.parse(aa.FilterPolicy), { color: ["red", "green"], size: [{ numeric: [">", 5] }] });
    assert.equal(aa.FilterPolicyScope, "MessageAttributes");
    const { Attributes: ba } = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: subBody }));
    assert.equal(ba.FilterPolicyScope, "MessageBody");

    const attr = (color, size) => ({ color: { DataType: "String", StringValue: color }, size: { DataType: "Number", StringValue: String(size) } });
    const publish = (Message, MessageAttributes) => sns.send(new PublishCommand({ TopicArn: t.arn, Message, MessageAttributes }));
    await publish(JSON.stringify({ order: { kind: "refunded" }, id: 1 }), attr("blue", 10)); // neither
    await publish(JSON.stringify({ order: { kind: "created" }, id: 2 }), attr("red", 3)); // body only (size too small)
    await publish(JSON.stringify({ order: { kind: "refunded" }, id: 3 }), attr("green", 6)); // attributes only
    await publish("not json at all", attr("red", 9)); // attributes only; body scope cannot match

    const gotAll = await drain(all.url, 4);
    assert.equal(gotAll.length, 4, "the unfiltered subscription gets everything");
    const gotAttr = await drain(byAttr.url, 2);
    const gotBody = await drain(byBody.url, 1);
    const extraAttr = await quiet(byAttr.url, 500);
    const extraBody = await quiet(byBody.url, 0);
    const ids = (ms) => ms.map((m) => (m.Body.startsWith("{") ? JSON.parse(m.Body).id : m.Body)).sort();
    assert.deepEqual(ids([...gotAttr, ...extraAttr]), [3, "not json at all"]);
    assert.deepEqual(ids([...gotBody, ...extraBody]), [2]);

    // An invalid policy is refused at write time; an empty one removes it.
    const bad = await rejects(() =>
      sns.send(new SetSubscriptionAttributesCommand({ SubscriptionArn: subAttr, AttributeName: "FilterPolicy", AttributeValue: "{not json" })),
    );
    assert.equal(bad.name, "InvalidParameterException");
    await sns.send(new SetSubscriptionAttributesCommand({ SubscriptionArn: subAttr, AttributeName: "FilterPolicy", AttributeValue: "" }));
    // A publish through another replica (the cluster lane's round-robin front) sees the change
    // within QUEEN_SQS_REGISTRY_CACHE_MS (1 s); AWS documents filter policy changes as
    // eventually consistent too.
    await new Promise((r) => setTimeout(r, 1200));
    await publish("after removal", attr("blue", 1));
    const [after] = await drain(byAttr.url, 1);
    assert.equal(after?.Body, "after removal");
  });

  test("FIFO topic to two FIFO queues: the same per-group order in both", async () => {
    const t = await topic("sns-order.fifo", { FifoTopic: "true", ContentBasedDeduplication: "true" });
    const q1 = await queue("sns-fq1.fifo", { FifoQueue: "true" });
    const q2 = await queue("sns-fq2.fifo", { FifoQueue: "true" });
    await subscribe(t.arn, q1, { RawMessageDelivery: "true" });
    await subscribe(t.arn, q2, { RawMessageDelivery: "true" });
    const sent = [];
    for (let i = 0; i < 4; i++) {
      for (const g of ["ga", "gb"]) {
        const r = await sns.send(new PublishCommand({ TopicArn: t.arn, Message: `${g}#${i}`, MessageGroupId: g }));
        assert.ok(r.MessageId);
        assert.match(r.SequenceNumber, /^[0-9]{20}$/, "a FIFO publish answers its SequenceNumber");
        sent.push(`${g}#${i}`);
      }
    }
    // A repeat of the same body in the window is suppressed (content-based dedup).
    await sns.send(new PublishCommand({ TopicArn: t.arn, Message: "ga#0", MessageGroupId: "ga" }));
    for (const q of [q1, q2]) {
      const got = await drain(q.url, 8, 10000);
      const extra = await quiet(q.url, 500);
      const all = [...got, ...extra];
      for (const g of ["ga", "gb"]) {
        const inGroup = all.filter((m) => m.Attributes.MessageGroupId === g).map((m) => m.Body);
        assert.deepEqual(inGroup, [0, 1, 2, 3].map((i) => `${g}#${i}`), `group ${g} in publish order`);
      }
      assert.equal(all.length, 8, "the duplicate publish was not delivered");
    }
  });

  test("a standard topic refuses a FIFO queue; non-sqs protocols are refused", async () => {
    const t = await topic("sns-std");
    const fq = await queue("sns-fq.fifo", { FifoQueue: "true" });
    const e1 = await rejects(() => sns.send(new SubscribeCommand({ TopicArn: t.arn, Protocol: "sqs", Endpoint: fq.arn })));
    assert.equal(e1.name, "InvalidParameterException");
    const e2 = await rejects(() => sns.send(new SubscribeCommand({ TopicArn: t.arn, Protocol: "https", Endpoint: "https://example.com/hook" })));
    assert.equal(e2.name, "InvalidParameterException");
    const e3 = await rejects(() => sns.send(new ConfirmSubscriptionCommand({ TopicArn: t.arn, Token: "abc123" })));
    assert.equal(e3.name, "InvalidParameterException");
  });

  test("Unsubscribe stops delivery and leaves the queue", async () => {
    const t = await topic("sns-unsub");
    const q = await queue("sns-unsub-q");
    const sub = await subscribe(t.arn, q, { RawMessageDelivery: "true" });
    await sns.send(new UnsubscribeCommand({ SubscriptionArn: sub }));
    const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: t.arn }));
    assert.deepEqual(listed.Subscriptions || [], []);
    await sns.send(new PublishCommand({ TopicArn: t.arn, Message: "nobody listens" }));
    assert.deepEqual(await quiet(q.url, 800), []);
  });

  test("DeleteTopic cascades to its subscriptions", async () => {
    const t = await topic("sns-cascade");
    const q = await queue("sns-cascade-q");
    const sub = await subscribe(t.arn, q);
    await sns.send(new DeleteTopicCommand({ TopicArn: t.arn }));
    const e = await rejects(() => sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: t.arn })));
    assert.equal(e.name, "NotFoundException");
    const e2 = await rejects(() => sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: sub })));
    assert.equal(e2.name, "NotFoundException");
    let NextToken;
    const arns = [];
    do {
      const page = await sns.send(new ListSubscriptionsCommand({ NextToken }));
      arns.push(...(page.Subscriptions || []).map((s) => s.SubscriptionArn));
      NextToken = page.NextToken;
    } while (NextToken);
    assert.ok(!arns.includes(sub), "the subscription is gone from ListSubscriptions");
    // The queue itself is untouched.
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ["QueueArn"] }));
    assert.equal(Attributes.QueueArn, q.arn);
  });
});

describe("PublishBatch and errors", () => {
  test("PublishBatch: an entry SNS refuses fails the request, as SNS answers; valid ones are delivered", async () => {
    const t = await topic("sns-batch");
    const q = await queue("sns-batch-q");
    await subscribe(t.arn, q, { RawMessageDelivery: "true" });
    const refused = await rejects(() =>
      sns.send(
        new PublishBatchCommand({
          TopicArn: t.arn,
          PublishBatchRequestEntries: [
            { Id: "one", Message: "first" },
            { Id: "bad", Message: "" },
          ],
        }),
      ),
    );
    assert.equal(refused.name, "InvalidParameterException");
    const out = await sns.send(
      new PublishBatchCommand({
        TopicArn: t.arn,
        PublishBatchRequestEntries: [
          { Id: "one", Message: "first" },
          { Id: "two", Message: "second", MessageAttributes: { a: { DataType: "String", StringValue: "x" } } },
        ],
      }),
    );
    assert.deepEqual((out.Successful || []).map((s) => s.Id).sort(), ["one", "two"]);
    for (const s of out.Successful) assert.ok(s.MessageId);
    assert.equal((out.Failed || []).length, 0);
    const got = await drain(q.url, 2);
    assert.deepEqual(got.map((m) => m.Body).sort(), ["first", "second"]);

    const empty = await rejects(() => sns.send(new PublishBatchCommand({ TopicArn: t.arn, PublishBatchRequestEntries: [] })));
    assert.equal(empty.name, "EmptyBatchRequestException");
    const dup = await rejects(() =>
      sns.send(new PublishBatchCommand({ TopicArn: t.arn, PublishBatchRequestEntries: [{ Id: "x", Message: "1" }, { Id: "x", Message: "2" }] })),
    );
    assert.equal(dup.name, "BatchEntryIdsNotDistinctException");
    const many = await rejects(() =>
      sns.send(new PublishBatchCommand({ TopicArn: t.arn, PublishBatchRequestEntries: Array.from({ length: 11 }, (_, i) => ({ Id: `i${i}`, Message: "m" })) })),
    );
    assert.equal(many.name, "TooManyEntriesInBatchRequestException");
  });

  test("NotFoundException and InvalidParameterException", async () => {
    const missing = `arn:aws:sns:${REGION}:000000000000:${uniq("sns-missing")}`;
    const e1 = await rejects(() => sns.send(new PublishCommand({ TopicArn: missing, Message: "x" })));
    assert.equal(e1.name, "NotFoundException");
    assert.equal(e1.$metadata.httpStatusCode, 404);
    const e2 = await rejects(() => sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: missing })));
    assert.equal(e2.name, "NotFoundException");
    const t = await topic("sns-err");
    // (MessageGroupId on a STANDARD topic is not asserted: AWS accepts it since SQS fair queues.)
    const ft = await topic("sns-err.fifo", { FifoTopic: "true", ContentBasedDeduplication: "true" });
    const e3 = await rejects(() => sns.send(new PublishCommand({ TopicArn: ft.arn, Message: "x" })));
    assert.equal(e3.name, "InvalidParameterException", "a FIFO topic needs a MessageGroupId");
    const e4 = await rejects(() => sns.send(new SubscribeCommand({ TopicArn: t.arn, Protocol: "sqs", Endpoint: "not-an-arn" })));
    assert.equal(e4.name, "InvalidParameterException");
    assert.equal(e4.$metadata.httpStatusCode, 400);
  });
});
