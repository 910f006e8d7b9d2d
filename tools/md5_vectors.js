#!/usr/bin/env node
// Writes tests/data/md5/vectors.json: SQS body and message-attribute MD5s computed by
// implementations that are not ours, so the Rust side is checked against someone else's
// reading of AWS's algorithm.
//
// - Bodies: the MD5 class the JavaScript SDK v3 validates MD5OfBody with (@smithy/md5-js),
//   and each digest is then fed through the SDK's own receiveMessageMiddleware, which
//   must accept it (and reject a wrong one).
// - Attributes: fauxqs's md5OfMessageAttributes (an SQS emulator, UTF-8 byte lengths),
//   cross-checked against aws-md5-of-message-attributes wherever that one is applicable
//   (it measures lengths in UTF-16 units, so only on ASCII-only attributes).
//
// Installs nothing globally: packages go to $MD5_VECTORS_NODE_DIR (default
// /tmp/queen-sqs-md5-vectors). Run from anywhere: node tools/md5_vectors.js
"use strict";
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const PKGS = {
  "@aws-sdk/middleware-sdk-sqs": "3.972.50",
  "@smithy/md5-js": "4.5.2",
  fauxqs: "1.9.2",
  "aws-md5-of-message-attributes": "1.0.0",
};
const DIR = process.env.MD5_VECTORS_NODE_DIR || "/tmp/queen-sqs-md5-vectors";
const mod = (p) => path.join(DIR, "node_modules", p);

function ensureInstalled() {
  const missing = Object.keys(PKGS).filter((p) => !fs.existsSync(mod(p)));
  if (missing.length === 0) return;
  fs.mkdirSync(DIR, { recursive: true });
  const specs = Object.entries(PKGS).map(([p, v]) => `${p}@${v}`);
  execFileSync("npm", ["install", "--prefix", DIR, "--no-save", "--ignore-scripts", ...specs], {
    stdio: "inherit",
  });
}

const b64 = (s) => Buffer.from(s, "utf-8").toString("base64");
const isAscii = (s) => /^[\x00-\x7f]*$/.test(s);

const BODIES = [
  "",
  "hello",
  "{\"order\": 42, \"items\": [1, 2, 3]}",
  "line one\r\nline two\r\n",
  "tab\there\nnewline",
  "caf\u00e9 \u00fcber na\u00efve",
  "\u65e5\u672c\u8a9e\u306e\u30e1\u30c3\u30bb\u30fc\u30b8",
  "emoji \ud83d\ude80\ud83d\udce6 outside the BMP",
  "  leading and trailing whitespace  ",
  "x".repeat(10000),
];

const ATTRS = [
  { name: "one string", attrs: { attribName1: { DataType: "String", StringValue: "attribValue 1" } } },
  { name: "number", attrs: { count: { DataType: "Number", StringValue: "42" } } },
  {
    name: "custom number",
    attrs: { customNumberTypeAttrib: { DataType: "Number.float", StringValue: "4563442423554324324264524243.32543234" } },
  },
  { name: "binary", attrs: { blob: { DataType: "Binary", BinaryValue: b64("Hello binary world!") } } },
  {
    name: "binary with non-utf8 bytes",
    attrs: { raw: { DataType: "Binary", BinaryValue: Buffer.from([0, 1, 2, 0xfe, 0xff, 0x80]).toString("base64") } },
  },
  { name: "custom string", attrs: { kind: { DataType: "String.custom", StringValue: "order.created" } } },
  { name: "custom binary", attrs: { img: { DataType: "Binary.png", BinaryValue: b64("\x89PNG fake") } } },
  { name: "empty-ish string", attrs: { s: { DataType: "String", StringValue: " " } } },
  { name: "unicode value", attrs: { greeting: { DataType: "String", StringValue: "gr\u00fc\u00df dich \ud83d\udc4b" } } },
  {
    name: "several out of order",
    attrs: {
      zeta: { DataType: "String", StringValue: "last" },
      Alpha: { DataType: "Number", StringValue: "-1.5e3" },
      beta: { DataType: "Binary", BinaryValue: b64("bytes") },
      "a.b-c_d": { DataType: "String.custom", StringValue: "dotted" },
      "0first": { DataType: "Number.int", StringValue: "0" },
    },
  },
  {
    name: "ten attributes",
    attrs: Object.fromEntries(
      [9, 3, 0, 7, 1, 8, 2, 6, 4, 5].map((i) => [`attr${i}`, { DataType: "String", StringValue: `value ${i}` }])
    ),
  },
  {
    name: "system attribute AWSTraceHeader",
    attrs: {
      AWSTraceHeader: {
        DataType: "String",
        StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
      },
    },
  },
];

async function main() {
  ensureInstalled();
  const { Md5 } = require(mod("@smithy/md5-js"));
  const { receiveMessageMiddleware } = require(mod("@aws-sdk/middleware-sdk-sqs"));
  const fauxqs = await import(path.join(mod("fauxqs"), "dist/common/md5.js"));
  const other = require(mod("aws-md5-of-message-attributes"));

  const hex = (u8) => Buffer.from(u8).toString("hex");
  const sdkAccepts = async (body, md5) => {
    const mw = receiveMessageMiddleware({ md5: Md5 })(async () => ({
      output: { Messages: [{ MessageId: "m", Body: body, MD5OfBody: md5 }] },
    }));
    try {
      await mw({ input: {} });
      return true;
    } catch (e) {
      return false;
    }
  };

  const bodies = [];
  for (const body of BODIES) {
    const h = new Md5();
    h.update(Buffer.from(body, "utf-8"));
    const md5 = hex(await h.digest());
    if (!(await sdkAccepts(body, md5))) throw new Error(`SDK rejects its own digest for ${JSON.stringify(body)}`);
    if (await sdkAccepts(body, "0".repeat(32))) throw new Error("SDK accepts a wrong digest");
    bodies.push({ body, md5 });
  }

  const attributes = [];
  for (const { name, attrs } of ATTRS) {
    const md5 = fauxqs.md5OfMessageAttributes(attrs);
    const ascii = Object.entries(attrs).every(([k, v]) => isAscii(k) && isAscii(v.StringValue || ""));
    if (ascii) {
      const second = other.md5OfMessageAttributes(attrs);
      if (second !== md5) throw new Error(`implementations disagree on ${name}: ${md5} vs ${second}`);
    }
    attributes.push({ name, attributes: attrs, md5, cross_checked: ascii });
  }

  const out = {
    generated_by: "tools/md5_vectors.js",
    packages: PKGS,
    bodies,
    attributes,
  };
  const dest = path.join(__dirname, "..", "tests", "data", "md5", "vectors.json");
  fs.writeFileSync(dest, JSON.stringify(out, null, 2) + "\n");
  console.log(`wrote ${bodies.length} body and ${attributes.length} attribute vectors to ${dest}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
