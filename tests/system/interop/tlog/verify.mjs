// An independent verifier of a tiled transparency log (c2sp.org/tlog-tiles), written from the
// specifications alone: signed notes (c2sp.org/signed-note), checkpoints (c2sp.org/tlog-checkpoint),
// RFC 6962 §2.1 hashing and proofs, RFC 9162 §2.1.3.2 / §2.1.4.2 proof verification and proof bundles
// (c2sp.org/tlog-proof@v1). node:crypto only. Usage and the spec sections each check follows: README.md.
import { createHash, createPublicKey, verify as verifySignature } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export class Refused extends Error {}
const refuse = (why) => { throw new Refused(why); };

const TILE_WIDTH = 256; // tlog-tiles: tiles of height 8
const HASH_SIZE = 32;
const MOST_SIGNATURES = 100; // signed-note: "MUST accept at least up to 16"
const MOST_NOTE_BYTES = 1 << 20;

// ---- RFC 6962 §2.1: Merkle Tree Hash -----------------------------------------------------------

const sha256 = (...parts) => { const h = createHash("sha256"); parts.forEach((p) => h.update(p)); return h.digest(); };
export const EMPTY_ROOT = sha256(); // MTH({}) = SHA-256()
export const leafHash = (entry) => sha256(Buffer.of(0), entry);
export const nodeHash = (left, right) => sha256(Buffer.of(1), left, right);

/** The largest power of two smaller than n (n > 1): RFC 6962's split point k. */
export const splitPoint = (n) => { let k = 1; while (k * 2 < n) k *= 2; return k; };
const isPowerOfTwo = (n) => n >= 1 && 2 ** Math.round(Math.log2(n)) === n;
// Integer halving and low bit that stay exact beyond 2^32, where JavaScript's >> and & do not.
const half = (n) => Math.floor(n / 2);
const lsb = (n) => n % 2 === 1;

/** MTH(D[a:b]) from leaf hashes, recursing at RFC 6962's split point. */
export function treeHash(leaves, a = 0, b = leaves.length) {
  if (b - a === 0) return EMPTY_ROOT;
  if (b - a === 1) return leaves[a];
  const k = splitPoint(b - a);
  return nodeHash(treeHash(leaves, a, a + k), treeHash(leaves, a + k, b));
}

// ---- RFC 6962 §2.1.1 / §2.1.2: proofs, over any source of subtree hashes -------------------------

/** PATH(m, D[a:b]) with m relative to a, leaf's sibling first; mth(a, b) gives MTH(D[a:b]). */
export async function inclusionPath(mth, m, a, b) {
  if (b - a <= 1) return [];
  const k = splitPoint(b - a);
  if (m < k) return [...await inclusionPath(mth, m, a, a + k), await mth(a + k, b)];
  return [...await inclusionPath(mth, m - k, a + k, b), await mth(a, a + k)];
}

/** SUBPROOF(m, D[a:b], complete) of §2.1.2; PROOF(m, D[n]) is subproof(mth, m, 0, n, true). */
export async function subproof(mth, m, a, b, complete) {
  if (m === b - a) return complete ? [] : [await mth(a, b)];
  const k = splitPoint(b - a);
  if (m <= k) return [...await subproof(mth, m, a, a + k, complete), await mth(a + k, b)];
  return [...await subproof(mth, m - k, a + k, b, false), await mth(a, a + k)];
}

// ---- RFC 9162 §2.1.3.2 and §2.1.4.2: verifying proofs -------------------------------------------

const isCount = (n) => Number.isSafeInteger(n) && n >= 0;

export function verifyInclusion(index, size, leaf, path, root) {
  if (!isCount(index) || !isCount(size)) refuse("an index and a size are non-negative integers");
  if (!(index < size)) refuse(`index ${index} is not below the tree size ${size}`); // step 1
  let fn = index, sn = size - 1, r = leaf; // steps 2, 3
  for (const p of path) { // step 4
    if (sn === 0) refuse("the inclusion proof is longer than the tree is deep");
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      while (!lsb(fn) && fn !== 0) { fn = half(fn); sn = half(sn); }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn); sn = half(sn);
  }
  if (sn !== 0) refuse("the inclusion proof is shorter than the tree is deep"); // step 5
  if (!r.equals(root)) refuse(`the inclusion proof of leaf ${index} does not lead to the root of size ${size}`);
}

export function verifyConsistency(first, second, path, firstRoot, secondRoot) {
  // §2.1.4.2 is written for 0 < first < second; the edges are §2.1.4's: an equal size proves by an
  // empty path and equal roots, the empty tree is a prefix of every tree.
  if (!isCount(first) || !isCount(second)) refuse("tree sizes are non-negative integers");
  if (first > second) refuse(`the old tree (${first}) is larger than the new (${second}): rolled back`);
  if (first === second) {
    if (path.length) refuse("a consistency proof between equal sizes must be empty");
    if (!firstRoot.equals(secondRoot)) refuse(`two roots for the same size ${first}: a fork`);
    return;
  }
  if (first === 0) {
    if (path.length) refuse("a consistency proof from the empty tree must be empty");
    return;
  }
  if (!path.length) refuse("empty consistency proof"); // step 1
  const c = isPowerOfTwo(first) ? [firstRoot, ...path] : path; // step 2
  let fn = first - 1, sn = second - 1; // step 3
  while (lsb(fn)) { fn = half(fn); sn = half(sn); } // step 4
  let fr = c[0], sr = c[0]; // step 5
  for (const h of c.slice(1)) { // step 6
    if (sn === 0) refuse("the consistency proof is longer than the tree is deep");
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(h, fr); sr = nodeHash(h, sr);
      while (!lsb(fn) && fn !== 0) { fn = half(fn); sn = half(sn); }
    } else {
      sr = nodeHash(sr, h);
    }
    fn = half(fn); sn = half(sn);
  }
  // step 7
  if (!fr.equals(firstRoot)) refuse(`the old root (size ${first}) is not a prefix of the new tree: a fork`);
  if (!sr.equals(secondRoot) || sn !== 0) refuse(`the consistency proof does not lead to the new root (size ${second})`);
}

// ---- c2sp.org/signed-note and c2sp.org/tlog-checkpoint --------------------------------------------

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Standard, padded base64 (RFC 4648 §4), canonical: one spelling per byte string. */
export function decodeBase64(text, what) {
  const bytes = BASE64.test(text) ? Buffer.from(text, "base64") : null;
  if (!bytes || bytes.toString("base64") !== text) refuse(`${what} is not base64`);
  return bytes;
}
const validKeyName = (name) => name.length > 0 && !/[\s+]/u.test(name);
const keyId = (name, typedKey) => sha256(Buffer.from(`${name}\n`), typedKey).subarray(0, 4);

/** A verifier key `<name>+<8 hex key ID>+<base64(0x01 || Ed25519 key)>` (signed-note §Ed25519). */
export function parseVerifierKey(vkey) {
  const parts = /^([^+]+)\+([0-9a-fA-F]{8})\+(.+)$/.exec(vkey); // base64 may hold '+' itself
  if (!parts || !validKeyName(parts[1])) refuse("the verifier key is not name+keyid+key");
  const [, name, , encoded] = parts, id = parts[2].toLowerCase();
  const typedKey = decodeBase64(encoded, "the verifier key");
  if (typedKey.length !== 33 || typedKey[0] !== 0x01) refuse("the verifier key is not an Ed25519 key (type 0x01, 32 bytes)");
  if (keyId(name, typedKey).toString("hex") !== id) refuse("the verifier key's ID is not SHA-256(name || 0x0A || 0x01 || key)[:4]");
  const x = typedKey.subarray(1).toString("base64url");
  return { name, id: Buffer.from(id, "hex"), key: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" }) };
}

/** The note's text, once a signature by `verifier` verifies; other keys' signatures are ignored. */
export function openNote(bytes, verifier) {
  if (bytes.length > MOST_NOTE_BYTES) refuse("the note is too large");
  let note;
  try { note = new TextDecoder("utf-8", { fatal: true }).decode(bytes); } catch { refuse("the note is not UTF-8"); }
  if (/[\x00-\x09\x0b-\x1f]/.test(note)) refuse("the note holds a control character other than newline");
  const split = note.lastIndexOf("\n\n"); // the text ends at the last blank line
  if (split < 0 || !note.endsWith("\n")) refuse("the note has no blank line before its signatures, or no final newline");
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split("\n");
  if (lines.length > MOST_SIGNATURES) refuse("the note has too many signatures");
  let verified = false;
  for (const line of lines) {
    const sig = /^\u2014 (\S+) (\S+)$/u.exec(line);
    if (!sig || !validKeyName(sig[1])) refuse(`not a signature line: ${JSON.stringify(line.slice(0, 80))}`);
    const blob = decodeBase64(sig[2], "a signature");
    if (blob.length < 4) refuse("a signature shorter than its key ID");
    if (sig[1] !== verifier.name || !blob.subarray(0, 4).equals(verifier.id)) continue; // unknown key: ignored
    if (!verifySignature(null, Buffer.from(text), verifier.key, blob.subarray(4))) {
      refuse(`the signature by ${verifier.name} does not verify`);
    }
    verified = true;
  }
  if (!verified) refuse(`no signature by the key ${verifier.name}+${verifier.id.toString("hex")}`);
  return text;
}

/** tlog-checkpoint §Note text: origin, decimal size, base64 root, optional non-empty extension lines. */
export function parseCheckpoint(text) {
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3 || lines.some((l) => l === "")) refuse("a checkpoint is three or more non-empty lines");
  const [origin, size, root] = lines;
  if (!/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size))) refuse(`the checkpoint's size ${JSON.stringify(size)} is not a decimal`);
  const hash = decodeBase64(root, "the checkpoint's root");
  if (hash.length !== HASH_SIZE) refuse("the checkpoint's root is not 32 bytes");
  return { origin, size: Number(size), root: hash, extensions: lines.slice(3) };
}

export function openCheckpoint(bytes, verifier, origin) {
  const checkpoint = parseCheckpoint(openNote(bytes, verifier));
  if (origin !== undefined && checkpoint.origin !== origin) refuse(`the checkpoint's origin is ${checkpoint.origin}, not ${origin}`);
  return checkpoint;
}

// ---- c2sp.org/tlog-tiles: paths, tiles, entry bundles ---------------------------------------------

/** <N> in zero-padded 3-digit elements, all but the last prefixed x: 1234067 -> x001/x234/067. */
export function encodeIndex(n) {
  let digits = String(n);
  digits = digits.padStart(Math.ceil(digits.length / 3) * 3, "0");
  const groups = digits.match(/.{3}/g);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join("/");
}
export const tilePath = (level, n, width) => `tile/${level}/${encodeIndex(n)}${width < TILE_WIDTH ? `.p/${width}` : ""}`;
export const bundlePath = (n, width) => `tile/entries/${encodeIndex(n)}${width < TILE_WIDTH ? `.p/${width}` : ""}`;

/** Every tile a tree of `size` has, {level, n, width}: floor(size / 256^level) hashes at each level. */
export function tilesOf(size) {
  const tiles = [];
  for (let level = 0, count = size; count > 0; level++, count = Math.floor(count / TILE_WIDTH)) {
    for (let n = 0; n * TILE_WIDTH < count; n++) tiles.push({ level, n, width: Math.min(TILE_WIDTH, count - n * TILE_WIDTH) });
  }
  return tiles;
}

/** Entries of a bundle: each a big-endian uint16 length, then its bytes. */
export function parseBundle(bytes) {
  const entries = [];
  for (let at = 0; at < bytes.length;) {
    if (at + 2 > bytes.length) refuse("an entry bundle ends inside a length");
    const length = bytes.readUInt16BE(at);
    if (at + 2 + length > bytes.length) refuse("an entry bundle ends inside an entry");
    entries.push(bytes.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}

/** A log's resources by path: a folder, or an http(s) prefix. Missing is null. */
export function logSource(where) {
  if (/^https?:\/\//.test(where)) {
    const prefix = where.replace(/\/+$/, "");
    return async (path) => {
      const response = await fetch(`${prefix}/${path}`);
      if (response.status === 404) return null;
      if (!response.ok) refuse(`GET ${path}: HTTP ${response.status}`);
      return Buffer.from(await response.arrayBuffer());
    };
  }
  return async (path) => readFile(join(where, path)).catch((e) => (e.code === "ENOENT" ? null : refuse(`${path}: ${e.message}`)));
}

/** Tiles and bundles of a tree of `size`; a partial resource gone may be read from its full one, truncated. */
export function tileReader(get, size) {
  const cache = new Map();
  const fetchPartial = async (partialPath, fullPath, width) => {
    if (width < TILE_WIDTH) { const partial = await get(partialPath); if (partial) return { bytes: partial, full: false }; }
    const full = await get(fullPath);
    if (!full) refuse(`${partialPath} is missing`);
    return { bytes: full, full: true };
  };
  const widthOf = (level, n) => Math.min(TILE_WIDTH, Math.floor(size / TILE_WIDTH ** level) - n * TILE_WIDTH);
  async function tile(level, n) {
    const key = `${level}/${n}`;
    if (!cache.has(key)) {
      const width = widthOf(level, n);
      if (width <= 0) refuse(`tile ${level}/${n} lies beyond the tree of size ${size}`);
      const { bytes, full } = await fetchPartial(tilePath(level, n, width), tilePath(level, n, TILE_WIDTH), width);
      const expected = full ? TILE_WIDTH * HASH_SIZE : width * HASH_SIZE;
      if (bytes.length !== expected) refuse(`${tilePath(level, n, full ? TILE_WIDTH : width)} is ${bytes.length} bytes, not ${expected}`);
      cache.set(key, bytes.subarray(0, width * HASH_SIZE));
    }
    return cache.get(key);
  }
  async function bundle(n) {
    const width = widthOf(0, n);
    const { bytes, full } = await fetchPartial(bundlePath(n, width), bundlePath(n, TILE_WIDTH), width);
    const entries = parseBundle(bytes);
    const expected = full ? TILE_WIDTH : width;
    if (entries.length !== expected) refuse(`${bundlePath(n, full ? TILE_WIDTH : width)} holds ${entries.length} entries, not ${expected}`);
    return entries.slice(0, width);
  }
  /** The hash of the complete subtree at `height` and `index`, from the tile holding its level. */
  async function node(height, index) {
    const level = Math.floor(height / 8);
    const span = 2 ** (height - 8 * level); // hashes of the tile's level under this node
    const first = index * span;
    const bytes = await tile(level, Math.floor(first / TILE_WIDTH));
    const at = first % TILE_WIDTH;
    if ((at + span) * HASH_SIZE > bytes.length) refuse(`node ${height}/${index} lies beyond the tree of size ${size}`);
    let hashes = Array.from({ length: span }, (_, i) => bytes.subarray((at + i) * HASH_SIZE, (at + i + 1) * HASH_SIZE));
    while (hashes.length > 1) hashes = Array.from({ length: hashes.length / 2 }, (_, i) => nodeHash(hashes[2 * i], hashes[2 * i + 1]));
    return hashes[0];
  }
  /** MTH(D[a:b]): complete subtrees from the tiles, the rest split as RFC 6962 §2.1 does. */
  async function mth(a, b) {
    if (isPowerOfTwo(b - a) && a % (b - a) === 0) return node(Math.round(Math.log2(b - a)), a / (b - a));
    const k = splitPoint(b - a);
    return nodeHash(await mth(a, a + k), await mth(a + k, b));
  }
  return { tile, bundle, mth };
}

// ---- the commands ---------------------------------------------------------------------------------

async function logCheckpoint(get, verifier, origin) {
  const bytes = await get("checkpoint");
  if (!bytes) refuse("the log serves no checkpoint");
  return openCheckpoint(bytes, verifier, origin);
}

/** Every entry rehashed, every tile rebuilt and compared with the served one, the root with the checkpoint's. */
export async function verifyTree(get, verifier, origin) {
  const { size, root } = await logCheckpoint(get, verifier, origin);
  const reader = tileReader(get, size);
  let level = [];
  for (let n = 0; n * TILE_WIDTH < size; n++) for (const entry of await reader.bundle(n)) level.push(leafHash(entry));
  if (level.length !== size) refuse(`the bundles hold ${level.length} entries, the checkpoint says ${size}`);
  if (!treeHash(level).equals(root)) refuse("the entries do not hash to the checkpoint's root");
  let tilesChecked = 0;
  for (let height = 0; level.length > 0; height++) {
    for (let n = 0; n * TILE_WIDTH < level.length; n++) {
      const expected = Buffer.concat(level.slice(n * TILE_WIDTH, (n + 1) * TILE_WIDTH));
      if (!(await reader.tile(height, n)).equals(expected)) refuse(`tile ${height}/${encodeIndex(n)} differs from the one the entries make`);
      tilesChecked++;
    }
    const full = Math.floor(level.length / TILE_WIDTH); // each hash above: MTH of a full tile below
    level = Array.from({ length: full }, (_, n) => treeHash(level, n * TILE_WIDTH, (n + 1) * TILE_WIDTH));
  }
  return { ok: true, size, entries: size, tiles_checked: tilesChecked };
}

export async function verifyEntryInLog(get, verifier, index, entry, origin) {
  const { size, root } = await logCheckpoint(get, verifier, origin);
  if (!(index < size)) refuse(`index ${index} is not below the tree size ${size}`);
  const path = await inclusionPath(tileReader(get, size).mth, index, 0, size);
  verifyInclusion(index, size, leafHash(entry), path, root);
  return { ok: true };
}

export async function verifyConsistencyInLog(get, verifier, oldBytes, origin) {
  const current = await logCheckpoint(get, verifier, origin);
  const old = openCheckpoint(oldBytes, verifier, current.origin);
  if (old.size === 0 && !old.root.equals(EMPTY_ROOT)) refuse("the old checkpoint's empty tree has a root other than SHA-256()");
  const path = 0 < old.size && old.size < current.size ? await subproof(tileReader(get, current.size).mth, old.size, 0, current.size, true) : [];
  verifyConsistency(old.size, current.size, path, old.root, current.root);
  return { ok: true, old: old.size, new: current.size };
}

/** c2sp.org/tlog-proof@v1: header, optional `extra`, `index I`, the path's hashes, a blank line, the checkpoint. */
export function parseProofBundle(bytes) {
  let lines;
  try { lines = new TextDecoder("utf-8", { fatal: true }).decode(bytes).split("\n"); } catch { refuse("the proof is not UTF-8"); }
  let at = 0;
  if (lines[at++] !== "c2sp.org/tlog-proof@v1") refuse("the proof does not start with c2sp.org/tlog-proof@v1");
  let extra = null;
  if (lines[at]?.startsWith("extra ")) extra = decodeBase64(lines[at++].slice(6), "the proof's extra data");
  const index = /^index (0|[1-9][0-9]*)$/.exec(lines[at++] ?? "");
  if (!index || !Number.isSafeInteger(Number(index[1]))) refuse("the proof has no `index N` line");
  const path = [];
  for (; at < lines.length && lines[at] !== ""; at++) {
    const hash = decodeBase64(lines[at], "a proof hash");
    if (hash.length !== HASH_SIZE) refuse("a proof hash is not 32 bytes");
    path.push(hash);
  }
  if (at >= lines.length) refuse("the proof has no blank line before its checkpoint");
  return { extra, index: Number(index[1]), path, checkpoint: Buffer.from(lines.slice(at + 1).join("\n")) };
}

export function verifyProofBundle(bytes, verifier, entry, origin) {
  if (bytes.length > MOST_NOTE_BYTES) refuse("the proof is too large");
  const proof = parseProofBundle(bytes);
  const { size, root } = openCheckpoint(proof.checkpoint, verifier, origin);
  verifyInclusion(proof.index, size, leafHash(entry), proof.path, root);
  return { ok: true, index: proof.index, size };
}

// ---- the command line -----------------------------------------------------------------------------

const USAGE = `usage: node verify.mjs checkpoint --checkpoint FILE --vkey VKEY [--origin ORIGIN]
       node verify.mjs tree --log DIR|URL --vkey VKEY [--origin ORIGIN]
       node verify.mjs inclusion --log DIR|URL --vkey VKEY --index I --entry FILE [--origin ORIGIN]
       node verify.mjs consistency --log DIR|URL --vkey VKEY --old FILE [--origin ORIGIN]
       node verify.mjs proof --vkey VKEY --proof FILE --entry FILE [--origin ORIGIN]
VKEY is name+keyid+base64key, or a file holding it.`;
const COMMANDS = {
  checkpoint: ["checkpoint", "vkey"], tree: ["log", "vkey"], inclusion: ["log", "vkey", "index", "entry"],
  consistency: ["log", "vkey", "old"], proof: ["vkey", "proof", "entry"],
};
class Usage extends Error {}

function parseArguments(argv) {
  const [command, ...rest] = argv;
  if (!(command in COMMANDS)) throw new Usage(command ? `unknown command ${command}` : "no command");
  const flags = {};
  for (let i = 0; i < rest.length; i += 2) {
    const name = /^--([a-z]+)$/.exec(rest[i])?.[1];
    if (!name || ![...COMMANDS[command], "origin"].includes(name)) throw new Usage(`${command} takes no ${rest[i]}`);
    if (rest[i + 1] === undefined) throw new Usage(`--${name} needs a value`);
    flags[name] = rest[i + 1];
  }
  const missing = COMMANDS[command].filter((name) => !(name in flags));
  if (missing.length) throw new Usage(`${command} needs --${missing.join(", --")}`);
  if ("index" in flags && !(/^(0|[1-9][0-9]*)$/.test(flags.index) && Number.isSafeInteger(Number(flags.index)))) {
    throw new Usage("--index is a non-negative decimal");
  }
  return { command, flags };
}

function readArgumentFile(flag, path) {
  try {
    if (statSync(path).size > 64 << 20) throw new Usage(`--${flag} ${path} is too large`);
    return readFileSync(path);
  } catch (e) { throw e instanceof Usage ? e : new Usage(`--${flag} ${path}: ${e.code ?? e.message}`); }
}

function verifierFrom(vkey) {
  let text = vkey;
  try { if (statSync(vkey).isFile()) text = readFileSync(vkey, "utf8").trim(); } catch { /* the key itself */ }
  try { return parseVerifierKey(text); } catch (e) { throw new Usage(`--vkey: ${e.message}`); }
}

async function run({ command, flags }) {
  const verifier = verifierFrom(flags.vkey);
  const file = (flag) => readArgumentFile(flag, flags[flag]);
  switch (command) {
    case "checkpoint": {
      const { origin, size, root } = openCheckpoint(file("checkpoint"), verifier, flags.origin);
      return { ok: true, origin, size, root: root.toString("base64") };
    }
    case "tree": return verifyTree(logSource(flags.log), verifier, flags.origin);
    case "inclusion": return verifyEntryInLog(logSource(flags.log), verifier, Number(flags.index), file("entry"), flags.origin);
    case "consistency": return verifyConsistencyInLog(logSource(flags.log), verifier, file("old"), flags.origin);
    default: return verifyProofBundle(file("proof"), verifier, file("entry"), flags.origin);
  }
}

export async function main(argv) {
  try {
    return { code: 0, result: await run(parseArguments(argv)) };
  } catch (e) {
    if (e instanceof Usage) return { code: 2, result: { ok: false, error: e.message, usage: USAGE } };
    return { code: 1, result: { ok: false, error: e instanceof Refused ? e.message : `${e.name}: ${e.message}` } };
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { code, result } = await main(process.argv.slice(2));
  console.log(JSON.stringify(result));
  process.exitCode = code;
}
