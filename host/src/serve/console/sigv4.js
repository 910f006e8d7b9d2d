// SigV4 (AWS4-HMAC-SHA256) for the console: the page signs its own calls with the key pair
// typed into it, so the host keeps no secret and the endpoint checks each call as it checks
// an SDK's. WebCrypto does the hashing where the page has it (https, or localhost); a page
// opened over plain http from another machine has no crypto.subtle, so a small SHA-256 of
// our own stands in there.

const enc = new TextEncoder();

function subtle() {
  return globalThis.isSecureContext !== false && globalThis.crypto && globalThis.crypto.subtle;
}

// --- SHA-256 and HMAC without WebCrypto (FIPS 180-4) --------------------------------------

function firstPrimes(n) {
  const out = [];
  for (let c = 2; out.length < n; c++) {
    if (out.every((p) => c % p !== 0)) out.push(c);
  }
  return out;
}

// The constants are the first 32 fractional bits of square and cube roots of primes.
const frac32 = (x) => Math.floor((x - Math.floor(x)) * 0x100000000) >>> 0;
const PRIMES = firstPrimes(64);
const H0 = Uint32Array.from(PRIMES.slice(0, 8), (p) => frac32(Math.sqrt(p)));
const K = Uint32Array.from(PRIMES, (p) => frac32(Math.cbrt(p)));

const rotr = (x, n) => (x >>> n) | (x << (32 - n));

export function sha256Js(data) {
  const len = data.length;
  const padded = (((len + 9 + 63) >> 6) << 6);
  const m = new Uint8Array(padded);
  m.set(data);
  m[len] = 0x80;
  const view = new DataView(m.buffer);
  view.setUint32(padded - 8, Math.floor(len / 0x20000000));
  view.setUint32(padded - 4, (len * 8) >>> 0);
  const h = Uint32Array.from(H0);
  const w = new Uint32Array(64);
  for (let off = 0; off < padded; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, k] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g; g = f; f = e; e = (d + t1) | 0;
      d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    [a, b, c, d, e, f, g, k].forEach((v, i) => { h[i] = (h[i] + v) | 0; });
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  h.forEach((v, i) => ov.setUint32(4 * i, v));
  return out;
}

export function hmacJs(key, data) {
  let k = key.length > 64 ? sha256Js(key) : key;
  const block = new Uint8Array(64);
  block.set(k);
  const inner = new Uint8Array(64 + data.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(data, 64);
  outer.set(sha256Js(inner), 64);
  return sha256Js(outer);
}

// --- the same through WebCrypto where there is one -----------------------------------------

export async function sha256(data) {
  const s = subtle();
  if (!s) return sha256Js(data);
  return new Uint8Array(await s.digest("SHA-256", data));
}

export async function hmac(key, data) {
  const s = subtle();
  if (!s) return hmacJs(key, data);
  const k = await s.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await s.sign("HMAC", k, data));
}

export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

// --- signing --------------------------------------------------------------------------------

// `20240102T030405Z` and `20240102` for a Date.
export function amzDates(now) {
  const iso = now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  return { amzDate: iso, day: iso.slice(0, 8) };
}

// The headers to send for a POST of `body` to `path` on `host`: `headers` (lower-case names)
// plus `x-amz-date` and `authorization`. Every given header and `host` are signed.
export async function sign({ host, path = "/", headers, body, creds, region, service, now = new Date() }) {
  const { amzDate, day } = amzDates(now);
  const all = { ...headers, host, "x-amz-date": amzDate };
  const names = Object.keys(all).map((n) => n.toLowerCase()).sort();
  const lower = Object.fromEntries(Object.entries(all).map(([k, v]) => [k.toLowerCase(), v]));
  const canonicalHeaders = names.map((n) => `${n}:${String(lower[n]).trim().replace(/\s+/g, " ")}\n`).join("");
  const signedHeaders = names.join(";");
  const payloadHash = hex(await sha256(enc.encode(body)));
  const canonical = ["POST", path, "", canonicalHeaders, signedHeaders, payloadHash].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, hex(await sha256(enc.encode(canonical)))].join("\n");
  let key = enc.encode("AWS4" + creds.secretAccessKey);
  for (const part of [day, region, service, "aws4_request"]) key = await hmac(key, enc.encode(part));
  const signature = hex(await hmac(key, enc.encode(toSign)));
  const out = { ...headers, "x-amz-date": amzDate };
  out.authorization =
    `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return out;
}
