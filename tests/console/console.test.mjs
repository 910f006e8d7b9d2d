// The queue console in a real browser (Debian's headless Chromium, driven by playwright-core):
// sign in (a wrong secret first), see queues with their counts, a dead-letter link and a
// topic's subscription, then create a queue, send, receive and delete from the page, and
// check through SQS that the page did what it showed. A screenshot is kept as an artifact.
//
// QUEEN_SQS_ENDPOINT: the endpoint (console on); CHROMIUM: the browser binary;
// QUEEN_SQS_CONSOLE_ARTIFACTS: where the screenshots go. scripts/console-test.sh sets them.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Api } from "../../host/src/serve/console/api.js";

const endpoint = process.env.QUEEN_SQS_ENDPOINT;
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const artifacts = process.env.QUEEN_SQS_CONSOLE_ARTIFACTS || "console-artifacts";
const api = new Api(endpoint || "http://127.0.0.1:1", { accessKeyId: "test", secretAccessKey: "test" });
const run = Date.now().toString(36);
const names = { dlq: `dlq-${run}`, source: `source-${run}`, topic: `topic-${run}`, created: `orders-${run}` };

let browser;
let page;
const pageErrors = [];

// Polls `read` until it answers `want` (5 s at most): the page updates after its calls return.
async function eventually(read, want, what) {
  let last;
  for (let i = 0; i < 50; i++) {
    last = await read();
    if (last === want) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(last, want, what);
}

const row = (name) => page.locator(`#queues tr[data-queue="${name}"]`);
const cell = (name, cls) => row(name).locator(`td.${cls}`).textContent();

// Known state made through the API itself: a source queue dead-lettering to a DLQ, and a
// topic with that source queue subscribed.
async function setUp() {
  const { QueueUrl: dlqUrl } = await api.sqs("CreateQueue", { QueueName: names.dlq });
  const { Attributes } = await api.sqs("GetQueueAttributes", { QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] });
  const redrive = JSON.stringify({ deadLetterTargetArn: Attributes.QueueArn, maxReceiveCount: 3 });
  const { QueueUrl: sourceUrl } = await api.sqs("CreateQueue", {
    QueueName: names.source, Attributes: { RedrivePolicy: redrive },
  });
  await api.sqs("SendMessage", { QueueUrl: sourceUrl, MessageBody: "waiting" });
  const source = await api.sqs("GetQueueAttributes", { QueueUrl: sourceUrl, AttributeNames: ["QueueArn"] });
  // Node has no DOMParser: the SNS answers are read as text here.
  const created = await api.post("sns", { "content-type": "application/x-www-form-urlencoded" },
    new URLSearchParams({ Action: "CreateTopic", Version: "2010-03-31", Name: names.topic }).toString());
  const topicArn = (await created.text()).match(/<TopicArn>([^<]+)<\/TopicArn>/)[1];
  const subscribed = await api.post("sns", { "content-type": "application/x-www-form-urlencoded" },
    new URLSearchParams({
      Action: "Subscribe", Version: "2010-03-31", TopicArn: topicArn, Protocol: "sqs",
      Endpoint: source.Attributes.QueueArn,
    }).toString());
  assert.equal(subscribed.status, 200, await subscribed.text());
}

before(async () => {
  if (!endpoint) return;
  mkdirSync(artifacts, { recursive: true });
  await setUp();
  browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => pageErrors.push(e.message));
  // A Content-Security-Policy violation is reported as a console error.
  page.on("console", (m) => { if (m.type() === "error") pageErrors.push(m.text()); });
});

after(async () => {
  if (browser) await browser.close();
});

test("a wrong secret is refused, the right one opens the console", { skip: !endpoint }, async () => {
  await page.goto(`${endpoint}/console`);
  assert.ok(page.url().endsWith("/console/"), page.url());
  await page.fill("#access-key", "test");
  await page.fill("#secret-key", "not-the-secret");
  await page.click("#login-form button[type=submit]");
  await eventually(async () => (await page.textContent("#login-error")).includes("SignatureDoesNotMatch"), true,
    "the refusal is shown");
  assert.equal(await page.isVisible("#app"), false);
  pageErrors.length = 0; // the refused call's 403 is logged by the browser
  await page.fill("#secret-key", "test");
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector("#app", { state: "visible" });
  assert.equal(await page.textContent("#who"), "signed in as test");
});

test("queues show their counts and dead-letter queue; topics their subscriptions", { skip: !endpoint }, async () => {
  await row(names.source).waitFor();
  assert.equal(await cell(names.source, "available"), "1");
  assert.equal(await cell(names.source, "in-flight"), "0");
  assert.equal(await cell(names.source, "delayed"), "0");
  const dlq = row(names.source).locator("td.dlq [data-dlq]");
  assert.equal(await dlq.getAttribute("data-dlq"), names.dlq);
  assert.match(await row(names.source).locator("td.dlq").textContent(), /after 3 receives/);
  // The DLQ names its source; durations read in their largest whole unit.
  assert.equal(await row(names.dlq).locator("[data-dlq-source]").textContent(), names.source);
  assert.equal(await row(names.source).locator("td.num").last().textContent(), "4 d");
  const sub = page.locator(`#topics tr[data-topic="${names.topic}"] li[data-endpoint="${names.source}"]`);
  assert.equal(await sub.textContent(), `sqs → ${names.source}`);
  // The dead-letter link selects the DLQ.
  await dlq.click();
  await eventually(() => page.textContent("#detail-name"), names.dlq, "the DLQ is selected");
});

test("create, send, receive and delete from the page", { skip: !endpoint }, async () => {
  await page.fill("#new-queue-name", names.created);
  await page.click("#create-form button[type=submit]");
  await row(names.created).waitFor();
  await eventually(() => page.textContent("#detail-name"), names.created, "the new queue is selected");
  assert.equal(await page.textContent(`#detail-attributes dd[data-attribute="VisibilityTimeout"]`), "30");

  await page.fill("#send-body", "hello from the console <b>not bold</b>");
  await page.click("#send-form button[type=submit]");
  await eventually(async () => (await page.textContent("#status")).startsWith("Sent message"), true, "sent");
  await eventually(() => cell(names.created, "available"), "1", "one message available");

  await page.click("#receive");
  const message = page.locator("#messages li.message");
  await message.waitFor();
  // Shown as text: the markup in the body is not rendered.
  assert.equal(await message.locator("pre.body").textContent(), "hello from the console <b>not bold</b>");
  assert.equal(await message.locator("pre.body b").count(), 0);
  assert.match(await message.textContent(), /received 1 time\(s\)/);
  await eventually(() => cell(names.created, "in-flight"), "1", "the message is in flight");
  assert.equal(await cell(names.created, "available"), "0");
  await page.screenshot({ path: join(artifacts, "console-received.png"), fullPage: true });

  await message.locator("button.delete").click();
  await eventually(() => message.count(), 0, "the message left the list");
  await eventually(async () => (await page.textContent("#status")).startsWith("Deleted message"), true, "deleted");
  await eventually(() => cell(names.created, "in-flight"), "0", "nothing in flight");
  await page.screenshot({ path: join(artifacts, "console.png"), fullPage: true });

  // What the page showed is what SQS says.
  const { QueueUrl } = await api.sqs("GetQueueUrl", { QueueName: names.created });
  const { Attributes } = await api.sqs("GetQueueAttributes", { QueueUrl, AttributeNames: ["All"] });
  assert.equal(Attributes.ApproximateNumberOfMessages, "0");
  assert.equal(Attributes.ApproximateNumberOfMessagesNotVisible, "0");
  const again = await api.sqs("ReceiveMessage", { QueueUrl, WaitTimeSeconds: 0, VisibilityTimeout: 0 });
  assert.equal((again.Messages || []).length, 0, "the deleted message is gone");
});

test("a FIFO queue from the page: created with .fifo, sent with a group, received, deleted", { skip: !endpoint }, async () => {
  const name = `fifo-${run}`;
  await page.fill("#new-queue-name", name);
  await page.check("#new-queue-fifo");
  await page.click("#create-form button[type=submit]");
  await row(`${name}.fifo`).waitFor();
  assert.equal(await row(`${name}.fifo`).locator("td").nth(1).textContent(), "FIFO");
  assert.equal(await page.isVisible("#fifo-fields"), true);
  await page.fill("#send-body", "first in line");
  await page.fill("#send-group", "g1");
  await page.click("#send-form button[type=submit]");
  await eventually(() => cell(`${name}.fifo`, "available"), "1", "one FIFO message available");
  await page.click("#receive");
  const message = page.locator("#messages li.message");
  await message.waitFor();
  assert.equal(await message.locator("pre.body").textContent(), "first in line");
  // The table shows the receive before the delete is judged: otherwise "nothing in
  // flight" could be read off the table as it was before the receive.
  await eventually(() => cell(`${name}.fifo`, "in-flight"), "1", "the FIFO message is in flight");
  await message.locator("button.delete").click();
  await eventually(() => message.count(), 0, "the message left the list");
  await eventually(async () => (await page.textContent("#status")).startsWith("Deleted message"), true, "deleted");
  await eventually(() => cell(`${name}.fifo`, "in-flight"), "0", "nothing in flight");
  await eventually(() => cell(`${name}.fifo`, "available"), "0", "nothing available");
});

test("the page logged no error (no script failure, no Content-Security-Policy violation)", { skip: !endpoint }, () => {
  assert.deepEqual(pageErrors, []);
});
