// The console's SigV4 signer outside the browser: its own SHA-256 and HMAC (used where a page
// has no WebCrypto) against Node's, and signatures the real endpoint accepts or refuses.
// QUEEN_SQS_ENDPOINT names the endpoint (scripts/console-test.sh starts one).

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { sha256Js, hmacJs, hex } from "../../host/src/serve/console/sigv4.js";
import { Api } from "../../host/src/serve/console/api.js";

const endpoint = process.env.QUEEN_SQS_ENDPOINT;

test("the page's own SHA-256 matches Node's on every padding case", () => {
  // 0..200 covers empty input, the 55/56/64-byte padding edges and several blocks.
  for (let n = 0; n <= 200; n++) {
    const data = randomBytes(n);
    assert.equal(hex(sha256Js(data)), createHash("sha256").update(data).digest("hex"), `length ${n}`);
  }
  const big = randomBytes(70_001);
  assert.equal(hex(sha256Js(big)), createHash("sha256").update(big).digest("hex"));
});

test("the page's own HMAC-SHA256 matches Node's for short, block-sized and long keys", () => {
  for (const n of [0, 1, 20, 63, 64, 65, 131]) {
    const key = randomBytes(n);
    const data = randomBytes(n * 3 + 1);
    assert.equal(hex(hmacJs(key, data)), createHmac("sha256", key).update(data).digest("hex"), `key ${n}`);
  }
});

test("the endpoint accepts the signer's calls and refuses a wrong key pair", { skip: !endpoint }, async () => {
  const good = new Api(endpoint, { accessKeyId: "test", secretAccessKey: "test" });
  const out = await good.sqs("ListQueues", {});
  assert.equal(typeof out, "object");
  const wrongSecret = new Api(endpoint, { accessKeyId: "test", secretAccessKey: "nope" });
  await assert.rejects(wrongSecret.sqs("ListQueues", {}), (e) => e.status === 403 && e.code === "SignatureDoesNotMatch");
  const unknownKey = new Api(endpoint, { accessKeyId: "AKIDUNKNOWN", secretAccessKey: "test" });
  await assert.rejects(unknownKey.sqs("ListQueues", {}), (e) => e.status === 403 && e.code === "InvalidClientTokenId");
});

test("signatures made without WebCrypto are accepted too", { skip: !endpoint }, async () => {
  // What a page opened over plain http from another machine does (no crypto.subtle there).
  globalThis.isSecureContext = false;
  try {
    const api = new Api(endpoint, { accessKeyId: "test", secretAccessKey: "test" });
    const name = `console-nowebcrypto-${Date.now()}`;
    const { QueueUrl } = await api.sqs("CreateQueue", { QueueName: name });
    assert.ok(QueueUrl.endsWith(`/${name}`), QueueUrl);
    await api.sqs("DeleteQueue", { QueueUrl });
  } finally {
    delete globalThis.isSecureContext;
  }
});
