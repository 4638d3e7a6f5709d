// An RFC 9421 / RFC 9530 verifier written apart from the service, with node:crypto only: it rebuilds
// the signature base of an answer from its status and header fields, checks the Content-Digest against
// the body and the Ed25519 signature against the published JWK. Reads {status, headers, body, jwks,
// path} as JSON on stdin (path: the request's, which a signature covers as "@path";req); prints
// "ok <keyid>" and exits 0, or prints why and exits 1.
import { createHash, createPublicKey, verify } from "node:crypto";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => { text += chunk; });
  process.stdin.on("end", () => resolve(text));
}));
const fail = (why) => { console.log(why); process.exit(1); };
const headers = Object.fromEntries(Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v]));
for (const name of ["content-digest", "signature-input", "signature"]) {
  if (!(name in headers)) fail(`no ${name}`);
}
const body = Buffer.from(input.body, "utf8");
const digest = createHash("sha256").update(body).digest("base64");
const sha256 = /(?:^|,)\s*sha-256=:([^:]*):/.exec(headers["content-digest"]);
if (!sha256 || sha256[1] !== digest) fail("content-digest does not match the body");

// Signature-Input: label=("c1" "c2" "@path";req ...);params — one signature, as the service sends.
const input_ = /^([a-z*][a-z0-9_.*-]*)=(\(([^)]*)\)(.*))$/.exec(headers["signature-input"]);
if (!input_) fail("signature-input is not one inner list");
const [, label, params, inner] = input_;
const components = [...inner.matchAll(/"([^"]+)"(;req)?/g)].map((m) => [m[1], Boolean(m[2])]);
const lines = components.map(([c, req]) => {
  if (c === "@status" && !req) return `"@status": ${input.status}`;
  if (c === "@path" && req) {
    // RFC 9421 2.4: the path of the request this answer answers
    if (typeof input.path !== "string") fail("the signature covers the request's @path: give it as path");
    return `"@path";req: ${input.path}`;
  }
  if (c.startsWith("@")) fail(`derived component ${c} is not one an answer has`);
  if (req) fail(`the request's field ${c} is not one an answer's signature covers`);
  if (!(c in headers)) fail(`covered field ${c} is missing`);
  return `"${c}": ${String(headers[c]).trim()}`;
});
lines.push(`"@signature-params": ${params}`);
const base = Buffer.from(lines.join("\n"), "utf8");
const signature = new RegExp(`(?:^|,)\\s*${label.replace(/[.*]/g, "\\$&")}=:([^:]*):`).exec(headers["signature"]);
if (!signature) fail(`no signature labelled ${label}`);
const keyid = /;keyid="([^"]*)"/.exec(params)?.[1];
const jwk = input.jwks.keys.find((k) => k.kid === keyid);
if (!jwk) fail(`no published key ${keyid}`);
const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" });
if (!verify(null, base, key, Buffer.from(signature[1], "base64"))) fail("the signature does not verify");
console.log(`ok ${keyid}`);
