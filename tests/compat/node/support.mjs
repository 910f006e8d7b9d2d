// Shared helpers for the Node suites: where the endpoint is, unique names, polling loops,
// and AWS's message-attribute MD5 (the SDKs only check the body's, so the suites check
// the attribute digest themselves).
import { createHash, randomBytes } from "node:crypto";

// No default: a fixed port could be answered by any server (issue 21 item 10).
export const ENDPOINT = process.env.QUEEN_SQS_ENDPOINT;
if (!ENDPOINT) {
  throw new Error(
    "QUEEN_SQS_ENDPOINT is not set: the suites run against the endpoint a script started and checked (scripts/compat.sh and the lanes set it); there is no default port",
  );
}
export const REGION = process.env.AWS_REGION || "us-east-1";
export const CREDENTIALS = {
  accessKeyId: process.env.AWS_ACCESS_KEY_ID || "test",
  secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || "test",
};

/** A name no other test (or earlier run on the same data dir) uses. */
export function uniq(prefix) {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Retries `fn` until it returns a truthy value or `timeoutMs` passes; returns the last value. */
export async function eventually(fn, timeoutMs = 10000, stepMs = 200) {
  const until = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last || Date.now() > until) return last;
    await sleep(stepMs);
  }
}

/**
 * Receives until `n` messages have arrived or `timeoutMs` passes. `receive(max)` performs one
 * ReceiveMessage and returns its Messages (or undefined).
 */
export async function collect(receive, n, timeoutMs = 10000) {
  const got = [];
  const until = Date.now() + timeoutMs;
  while (got.length < n && Date.now() < until) {
    const msgs = (await receive(Math.min(10, n - got.length))) || [];
    got.push(...msgs);
    if (msgs.length === 0) await sleep(150);
  }
  return got;
}

/** Runs `fn`, expecting it to throw; returns the error (fails if nothing was thrown). */
export async function rejects(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail, it succeeded");
}

export function md5Hex(data) {
  return createHash("md5").update(data).digest("hex");
}

/**
 * MD5OfMessageAttributes as AWS defines it: attributes sorted by name, each encoded as
 * length-prefixed name, length-prefixed data type, one transport byte (1 string-ish,
 * 2 binary), length-prefixed value; lengths are 4-byte big-endian.
 */
export function md5OfMessageAttributes(attrs) {
  const parts = [];
  const lp = (buf) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(buf.length);
    parts.push(len, buf);
  };
  for (const name of Object.keys(attrs).sort()) {
    const a = attrs[name];
    lp(Buffer.from(name, "utf8"));
    lp(Buffer.from(a.DataType, "utf8"));
    if (a.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]));
      lp(Buffer.from(a.BinaryValue));
    } else {
      parts.push(Buffer.from([1]));
      lp(Buffer.from(a.StringValue, "utf8"));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

/** The 12-digit account segment of a queue URL, replaced (for "another account" tests). */
export function otherAccountUrl(queueUrl) {
  const u = new URL(queueUrl);
  const [, account, name] = u.pathname.split("/");
  const other = account === "123456789012" ? "210987654321" : "123456789012";
  u.pathname = `/${other}/${name}`;
  return u.toString();
}
