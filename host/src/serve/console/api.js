// The console's only way in: the endpoint's own SQS actions (AWS JSON 1.0, X-Amz-Target) and
// SNS actions (Query in, XML out), each signed with SigV4 by this page. Runs in a browser and,
// for the tests, in Node (given an origin).

import { sign } from "./sigv4.js";

// Any region signs: the endpoint accepts a credential scope in every region.
const REGION = "us-east-1";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(`${code || status}: ${message || "no message"}`);
    this.status = status;
    this.code = code;
  }
}

export class Api {
  // `origin`: where the endpoint is (`location.origin` in the page).
  constructor(origin, creds) {
    this.url = new URL("/", origin);
    this.creds = creds;
  }

  async post(service, headers, body) {
    const signed = await sign({
      host: this.url.host, headers, body, creds: this.creds, region: REGION, service,
    });
    return fetch(this.url, { method: "POST", headers: signed, body, credentials: "omit" });
  }

  // One SQS action; answers its output, or throws an ApiError with the AWS error code.
  async sqs(action, input = {}) {
    const resp = await this.post("sqs", {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": `AmazonSQS.${action}`,
    }, JSON.stringify(input));
    const text = await resp.text();
    let json = {};
    try { json = text ? JSON.parse(text) : {}; } catch { /* not JSON: reported below */ }
    if (!resp.ok) {
      const code = String(json.__type || "").split("#").pop();
      throw new ApiError(resp.status, code, json.message || json.Message || text.slice(0, 200));
    }
    return json;
  }

  // One SNS action; answers the XML document, or throws an ApiError.
  async sns(action, params = {}) {
    const form = new URLSearchParams({ Action: action, Version: "2010-03-31", ...params });
    const resp = await this.post("sns", {
      "content-type": "application/x-www-form-urlencoded; charset=utf-8",
    }, form.toString());
    const text = await resp.text();
    const doc = parseXml(text);
    if (!resp.ok) {
      throw new ApiError(resp.status, tagText(doc, "Code"), tagText(doc, "Message") || text.slice(0, 200));
    }
    return doc;
  }

  // Every queue with all its attributes (ListQueues answers at most 1,000 URLs).
  async queues() {
    const { QueueUrls = [] } = await this.sqs("ListQueues", {});
    return Promise.all(QueueUrls.map(async (url) => {
      const { Attributes = {} } = await this.sqs("GetQueueAttributes", {
        QueueUrl: url, AttributeNames: ["All"],
      });
      return { url, name: queueName(url), attributes: Attributes };
    }));
  }

  // Every topic with its attributes and subscriptions.
  async topics() {
    const arns = [];
    let next = null;
    do {
      const doc = await this.sns("ListTopics", next ? { NextToken: next } : {});
      arns.push(...tagTexts(doc, "TopicArn"));
      next = tagText(doc, "NextToken");
    } while (next && arns.length < 10000);
    return Promise.all(arns.map(async (arn) => {
      const attrs = entries(await this.sns("GetTopicAttributes", { TopicArn: arn }));
      const subs = await this.sns("ListSubscriptionsByTopic", { TopicArn: arn });
      const subscriptions = Array.from(subs.getElementsByTagName("member"), (m) => ({
        arn: tagText(m, "SubscriptionArn"),
        protocol: tagText(m, "Protocol"),
        endpoint: tagText(m, "Endpoint"),
      }));
      return { arn, name: arn.split(":").pop(), attributes: attrs, subscriptions };
    }));
  }
}

export const queueName = (url) => decodeURIComponent(new URL(url).pathname.split("/").pop());
export const arnName = (arn) => String(arn || "").split(":").pop();

// The page has DOMParser; Node (the tests) is given one by the caller.
function parseXml(text) {
  const Parser = globalThis.DOMParser;
  if (!Parser) return { getElementsByTagName: () => [], raw: text };
  return new Parser().parseFromString(text, "application/xml");
}

function tagTexts(node, tag) {
  return Array.from(node.getElementsByTagName(tag), (e) => e.textContent);
}

function tagText(node, tag) {
  const e = node.getElementsByTagName(tag)[0];
  return e ? e.textContent : null;
}

// The <entry><key/><value/></entry> map of a Get*Attributes answer.
function entries(doc) {
  const out = {};
  for (const e of doc.getElementsByTagName("entry")) out[tagText(e, "key")] = tagText(e, "value");
  return out;
}
