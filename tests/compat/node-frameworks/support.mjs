// Helpers for the sqs-consumer / sqs-producer suite: one SQS client on the endpoint that
// counts the commands it sends (so a test can see the framework's heartbeats and
// acknowledgements on the wire), unique queues deleted afterwards, and waiting.
import { randomBytes } from "node:crypto";
import {
  SQSClient,
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";

// No default: a fixed port could be answered by any server (issue 21 item 10).
export const ENDPOINT = process.env.QUEEN_SQS_ENDPOINT;
if (!ENDPOINT) {
  throw new Error(
    "QUEEN_SQS_ENDPOINT is not set: the suites run against the endpoint a script started and checked (scripts/compat.sh and the lanes set it); there is no default port",
  );
}
export const REGION = process.env.AWS_REGION || "us-east-1";
const CREDENTIALS = {
  accessKeyId: process.env.AWS_ACCESS_KEY_ID || "test",
  secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || "test",
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** An SQS client whose `counts` says how many of each command it sent. */
export function countingClient() {
  const sqs = new SQSClient({ endpoint: ENDPOINT, region: REGION, credentials: CREDENTIALS, maxAttempts: 1 });
  sqs.counts = {};
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      sqs.counts[context.commandName] = (sqs.counts[context.commandName] || 0) + 1;
      return next(args);
    },
    { step: "initialize", name: "countCommands" },
  );
  return sqs;
}

const created = [];

export async function makeQueue(sqs, prefix, attributes = {}) {
  const fifo = attributes.FifoQueue === "true";
  const name = `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}${fifo ? ".fifo" : ""}`;
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  created.push([sqs, QueueUrl]);
  return QueueUrl;
}

export async function deleteQueues() {
  for (const [sqs, url] of created.splice(0)) {
    await sqs.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => {});
  }
}

/** ApproximateNumberOfMessages (+ NotVisible, + Delayed) of a queue, as numbers. */
export async function depth(sqs, url) {
  const { Attributes: a } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ],
    }),
  );
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

/** Resolves when `cond()` is truthy; rejects after `timeoutMs` with `what` in the message. */
export async function until(cond, what, timeoutMs = 15000) {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * Runs a Consumer until `done()` holds, then stops it gracefully (no abort: an abort would
 * cancel the delete of the message just handled) and waits until its last poll, with the
 * handling and acknowledgement of what it received, is over. Answers the errors emitted.
 */
export async function runUntil(consumer, done, what, timeoutMs = 15000) {
  const errors = [];
  consumer.on("error", (err) => errors.push(err));
  consumer.start();
  try {
    await until(done, what, timeoutMs);
  } finally {
    consumer.stop();
    await until(() => !consumer.status.isPolling, "the consumer's last poll to finish", 20000);
  }
  return errors;
}
