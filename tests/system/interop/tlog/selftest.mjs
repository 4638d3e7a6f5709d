// verify.mjs checked against the specifications' and reference code's vectors, then against tiled logs
// this file builds in memory (never on disk) and tampers with: each tampering must be refused.
// Prints one line per check; exits 0 when all pass. Sources of the vectors: README.md.
import { createHash, createPrivateKey, createPublicKey, sign } from "node:crypto";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as v from "./verify.mjs";

let passed = 0, failed = 0;
async function check(name, body) {
  try { await body(); passed++; console.log(`ok    ${name}`); } catch (e) { failed++; console.log(`FAIL  ${name}: ${e.message}`); }
}
function expect(condition, why) { if (!condition) throw new Error(why); }
async function refused(name, body, pattern) {
  await check(`refused: ${name}`, async () => {
    try { await body(); } catch (e) {
      if (!(e instanceof v.Refused)) throw new Error(`threw ${e.name}: ${e.message}, not a refusal`);
      if (pattern && !pattern.test(e.message)) throw new Error(`refused for another reason: ${e.message}`);
      return;
    }
    throw new Error("accepted");
  });
}
const hex = (h) => Buffer.from(h, "hex");
const b64 = (bytes) => bytes.toString("base64");

// ---- signed notes: golang.org/x/mod/sumdb/note, note_test.go ---------------------------------------

const PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const ENOCH_SIG = "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";
const peter = v.parseVerifierKey(PETER_VKEY);
const enoch = v.parseVerifierKey(ENOCH_VKEY);
const note = (...parts) => Buffer.from(parts.join(""));

/** A note signer from an Ed25519 seed (RFC 8032 signatures are deterministic, so vectors reproduce). */
function signer(name, seed) {
  const key = createPrivateKey({ key: Buffer.concat([hex("302e020100300506032b657004220420"), seed]), format: "der", type: "pkcs8" });
  const typed = Buffer.concat([Buffer.of(1), Buffer.from(createPublicKey(key).export({ format: "jwk" }).x, "base64url")]);
  const id = createHash("sha256").update(`${name}\n`).update(typed).digest().subarray(0, 4);
  return {
    vkey: `${name}+${id.toString("hex")}+${b64(typed)}`,
    signatureLine: (text) => `— ${name} ${b64(Buffer.concat([id, sign(null, Buffer.from(text), key)]))}\n`,
    sign(text) { return Buffer.from(`${text}\n${this.signatureLine(text)}`); },
  };
}

await check("signed-note: the PeterNeumann note opens with its key", () => expect(v.openNote(note(TEXT, "\n", PETER_SIG), peter) === TEXT, "text"));
await check("signed-note: the PeterNeumann private key signs the reference signature byte for byte", () => {
  const seed = Buffer.from(PETER_SKEY.split("+").slice(4).join("+"), "base64").subarray(1);
  const peterSigner = signer("PeterNeumann", seed);
  expect(peterSigner.vkey === PETER_VKEY && peterSigner.signatureLine(TEXT) === PETER_SIG, "another signature");
});
await check("signed-note: an unknown key's signature is ignored", () => v.openNote(note(TEXT, "\n", PETER_SIG, ENOCH_SIG), peter));
await check("signed-note: EnochRoot's signature verifies with its key", () => v.openNote(note(TEXT, "\n", PETER_SIG, ENOCH_SIG), enoch));
await refused("signed-note: only an unknown key signed", () => v.openNote(note(TEXT, "\n", ENOCH_SIG), peter), /no signature by/);
await refused("signed-note: a changed text", () => v.openNote(note(TEXT.replace("cryptography", "cryptographY"), "\n", PETER_SIG), peter), /does not verify/);
await refused("signed-note: a mangled signature", () => v.openNote(note(TEXT, "\n", PETER_SIG.slice(0, 60), "ABCD", PETER_SIG.slice(60)), peter));
const badNotes = [TEXT, `${TEXT}\n`, `${TEXT}\n${PETER_SIG.slice(0, -1)}`, `\x01${TEXT}\n${PETER_SIG}`,
  `${TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
  `${TEXT}\n${PETER_SIG}Unexpected line.\n`];
for (const [i, bad] of badNotes.entries()) await refused(`signed-note: malformed note #${i + 1} of note_test.go`, () => v.openNote(Buffer.from(bad), peter));
await refused("signed-note: a note that is not UTF-8", () => v.openNote(Buffer.concat([Buffer.of(0xff), note(TEXT, "\n", PETER_SIG)]), peter), /UTF-8/);
await check("signed-note: every substring and every one-byte change of the verifier key is refused", () => {
  const bad = [];
  for (let i = 0; i < PETER_VKEY.length; i++) {
    for (let j = i + 1; j <= PETER_VKEY.length; j++) if (i !== 0 || j !== PETER_VKEY.length) bad.push(PETER_VKEY.slice(i, j));
    bad.push(PETER_VKEY.slice(0, i) + String.fromCharCode(PETER_VKEY.charCodeAt(i) + 1) + PETER_VKEY.slice(i + 1));
  }
  bad.push("PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==", "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW");
  const accepted = bad.filter((k) => { try { v.parseVerifierKey(k); return true; } catch { return false; } });
  expect(accepted.length === 0, `accepted ${accepted.slice(0, 3).join(", ")}`);
});

// ---- Merkle trees: transparency-dev/merkle testonly/constants.go and proof/verify_test.go -----------

const LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"].map(hex);
const ROOTS = ["e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d", "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77", "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4", "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c", "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"].map(hex);
const INCLUSIONS = [ // 0-based leaf index, tree size, path
  [0, 1, []],
  [0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7", "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e", "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]],
  [5, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b", "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0", "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]],
  [2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]],
  [1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d", "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e", "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]],
].map(([i, n, p]) => [i, n, p.map(hex)]);
const CONSISTENCIES = [ // old size, new size, path
  [1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7", "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e", "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]],
  [6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a", "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0", "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]],
  [2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e", "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]],
  [6, 7, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a", "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f", "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]],
].map(([m, n, p]) => [m, n, p.map(hex)]);
const SOME_HASH = hex("abacaba000000000000000000000000000000000000000000060061e00123456");
const flipped = (path, i, bit) => path.map((h, j) => (j === i ? Buffer.from(h.map((b, k) => (k === 0 ? b ^ bit : b))) : h));

await check("RFC 6962: MTH of the first n reference leaves is the reference root, n = 0..8", () => {
  const hashes = LEAVES.map(v.leafHash);
  for (let n = 0; n <= 8; n++) expect(v.treeHash(hashes.slice(0, n)).equals(ROOTS[n]), `size ${n}`);
});
for (const [i, n, path] of INCLUSIONS) {
  const leaf = v.leafHash(LEAVES[i]);
  await check(`RFC 9162 §2.1.3.2: reference inclusion proof of leaf ${i} in size ${n}`, () => v.verifyInclusion(i, n, leaf, path, ROOTS[n]));
  const probes = { "index - 1": [i - 1, n, leaf, path, ROOTS[n]], "index + 1": [i + 1, n, leaf, path, ROOTS[n]],
    "index ^ 2": [i ^ 2, n, leaf, path, ROOTS[n]], "size * 2": [i, n * 2, leaf, path, ROOTS[n]], "size / 2": [i, n >> 1, leaf, path, ROOTS[n]],
    "another leaf": [i, n, v.leafHash(Buffer.from("WrongLeaf")), path, ROOTS[n]], "the empty root": [i, n, leaf, path, ROOTS[0]],
    "another root": [i, n, leaf, path, SOME_HASH], "a trailing root": [i, n, leaf, [...path, ROOTS[n]], ROOTS[n]],
    "a preceding root": [i, n, leaf, [ROOTS[n], ...path], ROOTS[n]] };
  path.forEach((_, k) => { probes[`proof[${k}] bit 3 flipped`] = [i, n, leaf, flipped(path, k, 8), ROOTS[n]]; });
  if (path.length) probes["the last hash removed"] = [i, n, leaf, path.slice(0, -1), ROOTS[n]];
  if (path.length > 1) probes["a hash inserted"] = [i, n, leaf, [path[0], SOME_HASH, ...path.slice(1)], ROOTS[n]];
  const accepted = Object.entries(probes).filter(([, args]) => { try { v.verifyInclusion(...args); return true; } catch { return false; } });
  await check(`RFC 9162 §2.1.3.2: leaf ${i} in size ${n} with each corruption of verify_test.go refused`, () => expect(!accepted.length, accepted.map(([d]) => d).join(", ")));
}
for (const [m, n, path] of CONSISTENCIES) {
  await check(`RFC 9162 §2.1.4.2: reference consistency proof ${m} -> ${n}`, () => v.verifyConsistency(m, n, path, ROOTS[m], ROOTS[n]));
  const probes = { "old size - 1": [m - 1, n, path, ROOTS[m], ROOTS[n]], "old size + 1": [m + 1, n, path, ROOTS[m], ROOTS[n]],
    "old size ^ 2": [m ^ 2, n, path, ROOTS[m], ROOTS[n]], "new size * 2": [m, n * 2, path, ROOTS[m], ROOTS[n]],
    "new size / 2": [m, n >> 1, path, ROOTS[m], ROOTS[n]], "another old root": [m, n, path, SOME_HASH, ROOTS[n]],
    "another new root": [m, n, path, ROOTS[m], SOME_HASH], "roots swapped": [m, n, path, ROOTS[n], ROOTS[m]],
    "an empty proof": [m, n, [], ROOTS[m], ROOTS[n]], "a trailing root": [m, n, [...path, ROOTS[n]], ROOTS[m], ROOTS[n]],
    "a preceding root": [m, n, [ROOTS[m], ...path], ROOTS[m], ROOTS[n]], "the last hash removed": [m, n, path.slice(0, -1), ROOTS[m], ROOTS[n]] };
  path.forEach((_, k) => { probes[`proof[${k}] bit 4 flipped`] = [m, n, flipped(path, k, 16), ROOTS[m], ROOTS[n]]; });
  const accepted = Object.entries(probes).filter(([, args]) => { try { v.verifyConsistency(...args); return true; } catch { return false; } });
  await check(`RFC 9162 §2.1.4.2: ${m} -> ${n} with each corruption of verify_test.go refused`, () => expect(!accepted.length, accepted.map(([d]) => d).join(", ")));
}
await check("RFC 9162 §2.1.4: the empty tree and an equal tree are consistent with an empty proof", () => {
  v.verifyConsistency(0, 8, [], ROOTS[0], ROOTS[8]); v.verifyConsistency(8, 8, [], ROOTS[8], ROOTS[8]);
});
await refused("a size-1 tree with two roots", () => v.verifyConsistency(1, 1, [], ROOTS[1], ROOTS[2]), /fork/);
await refused("a tree that shrank", () => v.verifyConsistency(2, 1, [], ROOTS[2], ROOTS[1]), /rolled back/);

// ---- tile paths and tile counts: c2sp.org/tlog-tiles; golang.org/x/mod/sumdb/tlog tlog_test.go --------

await check("tlog-tiles: tile paths as the spec and tlog_test.go spell them (without sumdb's height element)", () => {
  const cases = [[v.tilePath(0, 1234067, 256), "tile/0/x001/x234/067"], [v.tilePath(0, 1, 256), "tile/0/001"],
    [v.tilePath(0, 1, 5), "tile/0/001.p/5"], [v.tilePath(5, 123456078, 256), "tile/5/x123/x456/078"],
    [v.tilePath(5, 123456078, 2), "tile/5/x123/x456/078.p/2"], [v.tilePath(0, 3057500, 256), "tile/0/x003/x057/500"],
    [v.tilePath(1, 0, 17), "tile/1/000.p/17"], [v.bundlePath(1234067, 256), "tile/entries/x001/x234/067"], [v.bundlePath(0, 112), "tile/entries/000.p/112"]];
  for (const [got, want] of cases) expect(got === want, `${got} is not ${want}`);
});
await check("tlog-tiles: a tree of 70,000 has 273 full level-0 tiles, one of width 112, a full level-1, one of 17, a level-2 of 1", () => {
  const tiles = v.tilesOf(70000), full = (l) => tiles.filter((t) => t.level === l && t.width === 256).length;
  const partial = (l) => tiles.filter((t) => t.level === l && t.width < 256).map((t) => t.width);
  expect(full(0) === 273 && full(1) === 1 && full(2) === 0 && String(partial(0)) === "112" && String(partial(1)) === "17" && String(partial(2)) === "1", JSON.stringify(tiles.slice(-4)));
  expect(JSON.stringify(v.tilesOf(256)) === JSON.stringify([{ level: 0, n: 0, width: 256 }, { level: 1, n: 0, width: 1 }]), "size 256");
});
await check("tlog-tiles: a bundle is big-endian uint16-length-prefixed entries", () => {
  const entries = v.parseBundle(hex("0001610000000262630100" + "7a".repeat(256)));
  expect(entries.map((e) => e.toString()).join("|") === `a||bc|${"z".repeat(256)}`, "entries");
});
await refused("a bundle cut inside an entry", () => v.parseBundle(hex("0003616263000261")));

// ---- a tiled log built in memory, as a log writes it ---------------------------------------------

const ORIGIN = "example.com/maubinh-selftest";
const logKey = signer(ORIGIN, createHash("sha256").update("selftest log key").digest());
const otherKey = signer(ORIGIN, createHash("sha256").update("another key, same name").digest());
const logVerifier = v.parseVerifierKey(logKey.vkey);
const checkpointText = (size, root) => `${ORIGIN}\n${size}\n${b64(root)}\n`;

/** MTH(D[a:b]) over leaf hashes as RFC 6962 §2.1 splits it, each subtree hashed once. */
function merkle(leaves) {
  const memo = new Map();
  const mth = (a, b) => {
    if (b - a <= 1) return b > a ? leaves[a] : v.EMPTY_ROOT;
    if (!memo.has(`${a}/${b}`)) { const k = v.splitPoint(b - a); memo.set(`${a}/${b}`, v.nodeHash(mth(a, a + k), mth(a + k, b))); }
    return memo.get(`${a}/${b}`);
  };
  return mth;
}

/** Writes every tile and bundle of each size in turn (so earlier partials stay, as logs may keep them). */
function buildLog(entries, sizes, key = logKey) {
  const files = new Map(), checkpoints = new Map();
  const leaves = entries.map(v.leafHash), mth = merkle(leaves);
  for (const size of sizes) {
    for (const { level, n, width } of v.tilesOf(size)) {
      // tlog-tiles §Merkle Tree: hash i of tile n at level l is MTH(D[(n * 256 + i) * 256**l : (n * 256 + i + 1) * 256**l])
      const first = n * 256, span = 256 ** level;
      files.set(v.tilePath(level, n, width), Buffer.concat(Array.from({ length: width }, (_, i) => mth((first + i) * span, (first + i + 1) * span))));
      if (level === 0) {
        const bundle = entries.slice(first, first + width).flatMap((e) => [Buffer.from([e.length >> 8, e.length & 255]), e]);
        files.set(v.bundlePath(n, width), Buffer.concat(bundle));
      }
    }
    checkpoints.set(size, key.sign(checkpointText(size, mth(0, size))));
    files.set("checkpoint", checkpoints.get(size));
  }
  return { files, checkpoints, leaves, mth, get: async (path) => files.get(path) ?? null };
}
const withFiles = (log, change) => { const files = new Map(log.files); change(files); return async (path) => files.get(path) ?? null; };
const flipByte = (bytes, at) => Buffer.from(bytes.map((b, i) => (i === at ? b ^ 1 : b)));

const ENTRIES = Array.from({ length: 66236 }, (_, i) => Buffer.from(i % 1000 === 7 ? "x".repeat(300 + (i % 3)) : i === 3 ? "" : `entry ${i}`));
const SIZES = [1, 255, 256, 257, 600, 65536, 66236];
const log = buildLog(ENTRIES, SIZES);
const SIZE = ENTRIES.length;

await check("the reference vectors' proofs are what the tile reader builds from a log of the 8 reference leaves", async () => {
  const small = buildLog(LEAVES, [1, 2, 3, 5, 6, 7, 8]);
  for (const [i, n, path] of INCLUSIONS) {
    const built = await v.inclusionPath(v.tileReader(small.get, n).mth, i, 0, n);
    expect(built.length === path.length && built.every((h, k) => h.equals(path[k])), `inclusion ${i} in ${n}`);
  }
  for (const [m, n, path] of CONSISTENCIES) {
    const built = await v.subproof(v.tileReader(small.get, n).mth, m, 0, n, true);
    expect(built.length === path.length && built.every((h, k) => h.equals(path[k])), `consistency ${m} -> ${n}`);
  }
});
await check(`tree: ${SIZE} entries rehashed, every tile rebuilt and matched, root matched`, async () => {
  const result = await v.verifyTree(log.get, logVerifier);
  expect(result.size === SIZE && result.entries === SIZE && result.tiles_checked === v.tilesOf(SIZE).length, JSON.stringify(result));
});
await check("tree: the empty log (size 0, root SHA-256())", async () => {
  const result = await v.verifyTree(buildLog([], [0]).get, logVerifier);
  expect(result.size === 0 && result.tiles_checked === 0, JSON.stringify(result));
});
await check("tree: partial tiles and bundles gone, read from the full ones and truncated (size 600 in a grown log)", async () => {
  const get = withFiles(log, (f) => { f.set("checkpoint", log.checkpoints.get(600)); for (const p of [...f.keys()]) if (p.includes(".p/")) f.delete(p); });
  expect((await v.verifyTree(get, logVerifier)).tiles_checked === v.tilesOf(600).length, "tiles");
});
for (const index of [0, 3, 7, 255, 256, 65535, 65536, SIZE - 1]) {
  await check(`inclusion: entry ${index} proved from the tiles`, () => v.verifyEntryInLog(log.get, logVerifier, index, ENTRIES[index]));
}
await check("inclusion: the path from the tiles equals the path from the entries (RFC 6962 §2.1.1)", async () => {
  const fromEntries = async (a, b) => log.mth(a, b);
  for (const index of [5, 65790]) {
    const a = await v.inclusionPath(v.tileReader(log.get, SIZE).mth, index, 0, SIZE), b = await v.inclusionPath(fromEntries, index, 0, SIZE);
    expect(a.length === b.length && a.every((h, k) => h.equals(b[k])), `index ${index}`);
  }
});
for (const old of SIZES) {
  await check(`consistency: the checkpoint of size ${old} is a prefix of ${SIZE}`, async () => {
    const result = await v.verifyConsistencyInLog(log.get, logVerifier, log.checkpoints.get(old));
    expect(result.old === old && result.new === SIZE, JSON.stringify(result));
  });
}

// the tampering, each refused; the whole-tree ones on a log of 1,000 entries, to stay quick
const small = buildLog(ENTRIES.slice(0, 1000), [1000]);
const tile0 = v.tilePath(0, 0, 256), tile1 = v.tilePath(1, 0, 3);
const changed = (base, path, at) => withFiles(base, (f) => f.set(path, flipByte(f.get(path), at)));
await refused("tree: a byte changed in a level-0 tile", () => v.verifyTree(changed(small, tile0, 70), logVerifier), /tile 0\/000 differs/);
await refused("tree: a byte changed in a level-1 tile", () => v.verifyTree(changed(small, tile1, 5), logVerifier), /tile 1\/000 differs/);
await refused("inclusion: a sibling's hash changed in its level-0 tile", () => v.verifyEntryInLog(changed(log, tile0, 70), logVerifier, 3, ENTRIES[3]));
// PATH(65600, D[66236]) takes MTH(D[65792:66048]) from tile/1/001.p/2 and MTH(D[0:65536]) from tile/2/000.p/1
await refused("inclusion: a level-1 hash on the path changed", () => v.verifyEntryInLog(changed(log, v.tilePath(1, 1, 2), 40), logVerifier, 65600, ENTRIES[65600]));
await refused("inclusion: the level-2 hash on the path changed", () => v.verifyEntryInLog(changed(log, v.tilePath(2, 0, 1), 0), logVerifier, 65600, ENTRIES[65600]));
await refused("tree: an entry removed from a bundle", () => v.verifyTree(withFiles(small, (f) => {
  const path = v.bundlePath(1, 256), bundle = f.get(path); f.set(path, bundle.subarray(2 + bundle.readUInt16BE(0)));
}), logVerifier), /255 entries, not 256/);
await refused("tree: an entry changed, its length kept", () => v.verifyTree(changed(small, v.bundlePath(2, 256), 4), logVerifier), /root/);
await refused("tree: a tile missing", () => v.verifyTree(withFiles(small, (f) => f.delete(v.tilePath(0, 2, 256))), logVerifier), /missing/);
await refused("tree: a tile one hash short", () => v.verifyTree(withFiles(small, (f) => f.set(tile0, f.get(tile0).subarray(32))), logVerifier), /bytes, not 8192/);
await refused("inclusion: other bytes at the index", () => v.verifyEntryInLog(log.get, logVerifier, 10, Buffer.from("entry 11")));
await refused("inclusion: an index beyond the tree", () => v.verifyEntryInLog(log.get, logVerifier, SIZE, ENTRIES[0]), /not below/);
const lying = withFiles(log, (f) => f.set("checkpoint", logKey.sign(checkpointText(SIZE, log.mth(0, SIZE - 1)))));
const smallLying = withFiles(small, (f) => f.set("checkpoint", logKey.sign(checkpointText(1000, log.mth(0, 999)))));
await refused("tree: a checkpoint whose root the entries do not make", () => v.verifyTree(smallLying, logVerifier), /root/);
await refused("inclusion: a checkpoint whose root the tiles do not make", () => v.verifyEntryInLog(lying, logVerifier, 9, ENTRIES[9]));
const rolledBack = withFiles(log, (f) => f.set("checkpoint", log.checkpoints.get(600)));
await refused("consistency: the log rolled back below a checkpoint seen", () => v.verifyConsistencyInLog(rolledBack, logVerifier, log.checkpoints.get(65536)), /rolled back/);
const forkLeaves = log.leaves.map((h, i) => (i === 5 ? v.leafHash(Buffer.from("entry five")) : h));
const forkMth = merkle(forkLeaves), forked = (size) => logKey.sign(checkpointText(size, forkMth(0, size)));
await refused("consistency: a forked checkpoint of a smaller size", () => v.verifyConsistencyInLog(log.get, logVerifier, forked(600)), /fork/);
await refused("consistency: a forked checkpoint of the same size", () => v.verifyConsistencyInLog(log.get, logVerifier, forked(SIZE)), /fork/);
await refused("checkpoint: signed by another key of the same name", () => v.openCheckpoint(otherKey.sign(checkpointText(1, log.leaves[0])), logVerifier), /no signature by/);
await refused("tree: the log's checkpoint signed by another key", () => v.verifyTree(buildLog(ENTRIES.slice(0, 300), [300], otherKey).get, logVerifier), /no signature by/);
await refused("consistency: an old checkpoint signed by another key", () => v.verifyConsistencyInLog(log.get, logVerifier, otherKey.sign(checkpointText(600, log.mth(0, 600)))));
await refused("consistency: an old empty tree whose root is not SHA-256()", () => v.verifyConsistencyInLog(log.get, logVerifier, logKey.sign(checkpointText(0, log.leaves[0]))), /empty tree/);
await refused("signed-note: a tab in a text signed with the right key", () => v.openNote(logKey.sign(`${ORIGIN}\t\n1\n${b64(log.leaves[0])}\n`), logVerifier), /control character/);
await refused("checkpoint: another origin than expected", () => v.openCheckpoint(log.checkpoints.get(1), logVerifier, "example.com/other"), /origin/);
for (const [why, text] of [["a size with a leading zero", `${ORIGIN}\n01\n${b64(log.leaves[0])}\n`], ["a root of 31 bytes", `${ORIGIN}\n1\n${b64(log.leaves[0].subarray(1))}\n`],
  ["two lines", `${ORIGIN}\n1\n`], ["an empty extension line", `${ORIGIN}\n1\n${b64(log.leaves[0])}\n\next\n`]]) {
  await refused(`checkpoint: ${why}`, () => v.openCheckpoint(logKey.sign(text), logVerifier));
}

// ---- c2sp.org/tlog-proof@v1 bundles -----------------------------------------------------------------

async function proofBundle(index, { extra = null, size = SIZE } = {}) {
  const path = await v.inclusionPath(async (a, b) => log.mth(a, b), index, 0, size);
  return Buffer.from(["c2sp.org/tlog-proof@v1", ...(extra ? [`extra ${extra}`] : []), `index ${index}`, ...path.map(b64), "", ""].join("\n") + log.checkpoints.get(size));
}
await check("proof: a bundle verified with no log at hand", async () => {
  const result = v.verifyProofBundle(await proofBundle(65790), logVerifier, ENTRIES[65790]);
  expect(result.index === 65790 && result.size === SIZE, JSON.stringify(result));
});
await check("proof: with an extra line, and for a one-entry tree (no hashes)", async () => {
  v.verifyProofBundle(await proofBundle(12, { extra: b64(Buffer.from("opaque")) }), logVerifier, ENTRIES[12]);
  v.verifyProofBundle(await proofBundle(0, { size: 1 }), logVerifier, ENTRIES[0]);
});
const good = (await proofBundle(300)).toString();
const checkpointLines = log.checkpoints.get(SIZE).toString();
for (const [why, text] of [["another index", good.replace("index 300", "index 301")], ["an index with a leading zero", good.replace("index 300", "index 0300")],
  ["a hash changed", good.split("\n").map((l, i) => (i === 2 ? b64(flipByte(Buffer.from(l, "base64"), 0)) : l)).join("\n")],
  ["a hash removed", good.replace(/index 300\n[^\n]+\n/, "index 300\n")], ["no header", good.replace("c2sp.org/tlog-proof@v1\n", "")],
  ["no blank line before the checkpoint", good.replace(`\n\n${checkpointLines}`, `\n${checkpointLines}`)],
  ["its checkpoint signed by another key", good.replace(checkpointLines, otherKey.sign(checkpointText(SIZE, log.mth(0, SIZE))).toString())]]) {
  await refused(`proof: ${why}`, () => v.verifyProofBundle(Buffer.from(text), logVerifier, ENTRIES[300]));
}
await refused("proof: another entry", () => v.verifyProofBundle(Buffer.from(good), logVerifier, ENTRIES[301]));

// ---- the command line, over http, against the in-memory log ---------------------------------------

const served = { log, small };
const server = createServer((request, response) => {
  const [, name, path] = /^\/([a-z]+)\/(.*)$/.exec(request.url) ?? [];
  const body = served[name]?.files.get(path);
  response.writeHead(body ? 200 : 404).end(body);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/log/`, smallUrl = url.replace("/log/", "/small/");
const scratch = mkdtempSync(join(tmpdir(), "tlog-selftest-")); // the files a caller passes: one entry, checkpoints, a proof
const put = (name, bytes) => { writeFileSync(join(scratch, name), bytes); return join(scratch, name); };
const cli = (...args) => new Promise((resolve) => {
  execFile(process.execPath, [fileURLToPath(new URL("./verify.mjs", import.meta.url)), ...args], (error, stdout) => {
    resolve({ code: error ? error.code : 0, result: JSON.parse(stdout) });
  });
});
try {
  const cases = [
    [0, { ok: true, origin: ORIGIN, size: 600 }, "checkpoint", "--checkpoint", put("cp600", log.checkpoints.get(600)), "--vkey", logKey.vkey, "--origin", ORIGIN],
    [0, { ok: true, size: 1000, entries: 1000, tiles_checked: 5 }, "tree", "--log", smallUrl, "--vkey", logKey.vkey],
    [0, { ok: true }, "inclusion", "--log", url, "--vkey", logKey.vkey, "--index", "65790", "--entry", put("entry", ENTRIES[65790])],
    [0, { ok: true, old: 600, new: SIZE }, "consistency", "--log", url, "--vkey", put("vkey", `${logKey.vkey}\n`), "--old", join(scratch, "cp600")],
    [0, { ok: true, index: 65790, size: SIZE }, "proof", "--vkey", logKey.vkey, "--proof", put("proof", await proofBundle(65790)), "--entry", join(scratch, "entry")],
    [1, { ok: false }, "tree", "--log", smallUrl, "--vkey", otherKey.vkey],
    [1, { ok: false }, "inclusion", "--log", url, "--vkey", logKey.vkey, "--index", "65791", "--entry", join(scratch, "entry")],
    [2, { ok: false }, "inclusion", "--log", url, "--vkey", logKey.vkey, "--entry", join(scratch, "entry")],
    [2, { ok: false }, "inclusion", "--log", url, "--vkey", logKey.vkey, "--index", "-1", "--entry", join(scratch, "entry")],
    [2, { ok: false }, "tree", "--log", smallUrl, "--vkey", "not a key"],
    [2, { ok: false }, "audit", "--log", url],
  ];
  const runs = await Promise.all(cases.map(([, , ...args]) => cli(...args))); // in parallel: each is a node start
  for (const [i, [code, want, ...args]] of cases.entries()) {
    await check(`cli: ${args[0]} ${args.includes(otherKey.vkey) ? "with another key " : ""}exits ${code}`, () => {
      expect(runs[i].code === code && Object.entries(want).every(([k, w]) => runs[i].result[k] === w), JSON.stringify(runs[i]));
    });
  }
} finally {
  server.close();
  rmSync(scratch, { recursive: true, force: true });
}

console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
