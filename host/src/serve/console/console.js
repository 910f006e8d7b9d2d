// The console page: lists queues and topics, creates a queue, sends, receives and deletes
// messages, all through the endpoint's own actions (./api.js). Everything shown is set as
// text (never parsed as HTML): message bodies and names are whatever clients sent.

import { Api, arnName } from "./api.js";

const $ = (id) => document.getElementById(id);
let api = null;
let queues = [];
let selected = null; // the selected queue's name

function el(tag, text, attrs = {}) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

function status(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

// Runs an action for a button or form, reporting failure in the status line.
async function guarded(what, fn) {
  try {
    await fn();
  } catch (e) {
    status(`${what} failed: ${e.message}`, true);
  }
}

async function signIn(event) {
  event.preventDefault();
  const creds = { accessKeyId: $("access-key").value.trim(), secretAccessKey: $("secret-key").value };
  const candidate = new Api(location.origin, creds);
  $("login-error").textContent = "";
  try {
    await candidate.sqs("ListQueues", {});
  } catch (e) {
    $("login-error").textContent = `Sign-in refused: ${e.message}`;
    return;
  }
  api = candidate;
  $("secret-key").value = "";
  $("who").textContent = `signed in as ${creds.accessKeyId}`;
  for (const id of ["app", "refresh", "sign-out"]) $(id).hidden = false;
  $("login").hidden = true;
  await guarded("Loading", refresh);
}

function signOut() {
  api = null;
  queues = [];
  selected = null;
  $("who").textContent = "";
  for (const id of ["app", "refresh", "sign-out", "queue-detail"]) $(id).hidden = true;
  $("login").hidden = false;
}

async function refresh() {
  const [q, t] = await Promise.all([api.queues(), api.topics()]);
  queues = q.sort((a, b) => a.name.localeCompare(b.name));
  renderQueues();
  renderTopics(t.sort((a, b) => a.name.localeCompare(b.name)));
  if (selected) renderDetail();
}

// 345600 -> "4 d", 30 -> "30 s": the largest whole unit.
function duration(v) {
  if (v === undefined) return "";
  const n = Number(v);
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["min", 60]]) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return `${n} s`;
}

function redrive(attrs) {
  try { return JSON.parse(attrs.RedrivePolicy || "{}"); } catch { return {}; }
}

// A queue link that selects the queue.
function queueLink(name, attrs = {}) {
  const link = el("button", name, { type: "button", class: "link", ...attrs });
  link.addEventListener("click", () => select(name));
  return link;
}

function dlqCell(attrs, sources) {
  const td = el("td", null, { class: "dlq" });
  if (sources.length) {
    // This queue is the dead-letter queue of others.
    const from = el("span", "dead letters of ", { class: "muted dlq-sources" });
    sources.forEach((s, i) => from.append(i ? ", " : "", queueLink(s, { "data-dlq-source": s })));
    td.append(from);
  }
  if (!attrs.RedrivePolicy) return td;
  const policy = redrive(attrs);
  const target = arnName(policy.deadLetterTargetArn);
  if (!target) {
    td.textContent = attrs.RedrivePolicy;
    return td;
  }
  td.append(queueLink(target, { "data-dlq": target }),
    el("span", ` after ${policy.maxReceiveCount} receives`, { class: "muted" }));
  return td;
}

function renderQueues() {
  const body = $("queues").tBodies[0];
  body.replaceChildren();
  $("no-queues").hidden = queues.length > 0;
  const sourcesOf = {};
  for (const q of queues) {
    const target = arnName(redrive(q.attributes).deadLetterTargetArn);
    if (target) (sourcesOf[target] ||= []).push(q.name);
  }
  for (const q of queues) {
    const a = q.attributes;
    const tr = el("tr", null, { "data-queue": q.name });
    if (q.name === selected) tr.className = "selected";
    const nameCell = el("td");
    nameCell.append(queueLink(q.name, { class: "link queue-name" }));
    tr.append(
      nameCell,
      el("td", a.FifoQueue === "true" ? "FIFO" : "Standard"),
      el("td", a.ApproximateNumberOfMessages, { class: "available num" }),
      el("td", a.ApproximateNumberOfMessagesNotVisible, { class: "in-flight num" }),
      el("td", a.ApproximateNumberOfMessagesDelayed, { class: "delayed num" }),
      dlqCell(a, sourcesOf[q.name] || []),
      el("td", duration(a.VisibilityTimeout), { class: "num" }),
      el("td", duration(a.MessageRetentionPeriod), { class: "num" }),
    );
    body.append(tr);
  }
}

function renderTopics(topics) {
  const body = $("topics").tBodies[0];
  body.replaceChildren();
  $("no-topics").hidden = topics.length > 0;
  for (const t of topics) {
    const tr = el("tr", null, { "data-topic": t.name });
    const subs = el("ul", null, { class: "subscriptions" });
    for (const s of t.subscriptions) {
      // An SQS endpoint is a queue ARN: shown by the queue's name, linked to it.
      const target = s.protocol === "sqs" ? arnName(s.endpoint) : s.endpoint;
      const li = el("li", `${s.protocol} → `, { "data-endpoint": target });
      const known = s.protocol === "sqs" && queues.some((q) => q.name === target);
      li.append(known ? queueLink(target) : el("span", target));
      subs.append(li);
    }
    const name = el("td", t.name, { title: t.arn });
    tr.append(name, el("td", t.attributes.FifoTopic === "true" ? "FIFO" : "Standard"));
    const cell = el("td");
    cell.append(subs);
    tr.append(cell);
    body.append(tr);
  }
}

function select(name) {
  selected = name;
  $("messages").replaceChildren();
  renderQueues();
  renderDetail();
}

function current() {
  return queues.find((q) => q.name === selected);
}

function renderDetail() {
  const q = current();
  $("queue-detail").hidden = !q;
  if (!q) return;
  $("detail-name").textContent = q.name;
  $("fifo-fields").hidden = q.attributes.FifoQueue !== "true";
  const dl = $("detail-attributes");
  dl.replaceChildren();
  for (const k of Object.keys(q.attributes).sort()) {
    dl.append(el("dt", k), el("dd", q.attributes[k], { "data-attribute": k }));
  }
}

async function createQueue(event) {
  event.preventDefault();
  let name = $("new-queue-name").value.trim();
  const fifo = $("new-queue-fifo").checked;
  if (fifo && !name.endsWith(".fifo")) name += ".fifo";
  const input = { QueueName: name };
  if (fifo) input.Attributes = { FifoQueue: "true" };
  await api.sqs("CreateQueue", input);
  $("new-queue-name").value = "";
  status(`Created queue ${name}`);
  selected = name;
  await refresh();
}

function randomId() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

async function send(event) {
  event.preventDefault();
  const q = current();
  const input = { QueueUrl: q.url, MessageBody: $("send-body").value };
  if (q.attributes.FifoQueue === "true") {
    input.MessageGroupId = $("send-group").value.trim() || "console";
    const dedup = $("send-dedup").value.trim();
    if (dedup) input.MessageDeduplicationId = dedup;
    else if (q.attributes.ContentBasedDeduplication !== "true") input.MessageDeduplicationId = randomId();
  }
  const out = await api.sqs("SendMessage", input);
  $("send-body").value = "";
  status(`Sent message ${out.MessageId} to ${q.name}`);
  await refresh();
}

async function receive() {
  const q = current();
  const out = await api.sqs("ReceiveMessage", {
    QueueUrl: q.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
    MessageSystemAttributeNames: ["All"], MessageAttributeNames: ["All"],
  });
  const messages = out.Messages || [];
  const list = $("messages");
  list.replaceChildren();
  for (const m of messages) list.append(messageItem(q, m));
  status(`Received ${messages.length} message(s) from ${q.name}`);
  await refresh();
}

function messageItem(q, m) {
  const li = el("li", null, { "data-message-id": m.MessageId, class: "message" });
  const count = (m.Attributes || {}).ApproximateReceiveCount;
  const del = el("button", "Delete", { type: "button", class: "delete" });
  del.addEventListener("click", () => guarded("Delete", async () => {
    await api.sqs("DeleteMessage", { QueueUrl: q.url, ReceiptHandle: m.ReceiptHandle });
    li.remove();
    status(`Deleted message ${m.MessageId} from ${q.name}`);
    await refresh();
  }));
  li.append(
    el("pre", m.Body, { class: "body" }),
    el("span", `${m.MessageId} · received ${count ?? "?"} time(s)`, { class: "muted" }),
    del,
  );
  return li;
}

$("login-form").addEventListener("submit", signIn);
$("sign-out").addEventListener("click", signOut);
$("refresh").addEventListener("click", () => guarded("Refresh", refresh));
$("create-form").addEventListener("submit", (e) => guarded("Create queue", () => createQueue(e)));
$("send-form").addEventListener("submit", (e) => guarded("Send", () => send(e)));
$("receive").addEventListener("click", () => guarded("Receive", receive));
