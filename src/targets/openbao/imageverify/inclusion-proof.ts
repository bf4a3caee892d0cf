import { createHash, type KeyObject, verify } from "node:crypto";

/**
 * A Rekor v1 inclusion proof checked offline: the entry's leaf (RFC 6962: sha256 of 0x00 and the
 * canonicalized body) hashed up its audit path must give the proof's root hash (RFC 9162 section
 * 2.1.3.2), and the checkpoint — a signed note whose text is `origin`, tree size and base64 root hash
 * on their own lines — must carry the log key's ECDSA signature over that text and name the same
 * size and root. It proves the entry is in the tree the log signed; unlike the SET it says nothing
 * signed about when. Pure.
 */

export interface InclusionProof {
  logIndex: number;
  rootHash: Buffer;
  treeSize: number;
  hashes: Buffer[];
  /** The signed note, as text. */
  checkpoint: string;
}

const sha256 = (...parts: Buffer[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};

export const leafHash = (leaf: Buffer): Buffer => sha256(Buffer.from([0]), leaf);
export const nodeHash = (left: Buffer, right: Buffer): Buffer => sha256(Buffer.from([1]), left, right);

/** The root the audit path leads to from the leaf; undefined when the path cannot be for that index and size. */
export function rootFromPath(
  index: number,
  treeSize: number,
  leaf: Buffer,
  path: Buffer[],
): Buffer | undefined {
  if (index < 0 || index >= treeSize) return undefined;
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else r = nodeHash(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

/** The checkpoint's text, size and root, and its signatures (key hint, signature). */
interface SignedNote {
  text: string;
  size: number;
  root: Buffer;
  signatures: { hint: Buffer; signature: Buffer }[];
}

function parseNote(note: string): SignedNote | undefined {
  const split = note.lastIndexOf("\n\n");
  if (split < 0) return undefined;
  const text = note.slice(0, split + 1);
  const lines = text.split("\n");
  const size = /^\d+$/.test(lines[1] ?? "") ? Number(lines[1]) : Number.NaN;
  if (!lines[0] || !Number.isSafeInteger(size) || !lines[2]) return undefined;
  const signatures = note
    .slice(split + 2)
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => /^\u2014 \S+ (\S+)$/.exec(l)?.[1])
    .filter((b): b is string => b !== undefined)
    .map((b) => Buffer.from(b, "base64"))
    .filter((b) => b.length > 4)
    .map((b) => ({ hint: b.subarray(0, 4), signature: b.subarray(4) }));
  return { text, size, root: Buffer.from(lines[2], "base64"), signatures };
}

/** Why the proof does not hold for the body under the log's key; undefined when it does. */
export function inclusionProblem(
  bodyBase64: string,
  proof: InclusionProof,
  key: KeyObject,
): string | undefined {
  const root = rootFromPath(
    proof.logIndex,
    proof.treeSize,
    leafHash(Buffer.from(bodyBase64, "base64")),
    proof.hashes,
  );
  if (!root?.equals(proof.rootHash))
    return "the inclusion proof does not lead from the entry to its root hash";
  const note = parseNote(proof.checkpoint);
  if (!note) return "the inclusion proof's checkpoint is not a signed note";
  if (!note.root.equals(proof.rootHash)) return "proof root hash does not match signed tree head";
  if (note.size !== proof.treeSize) return "proof tree size does not match signed tree head";
  // Each signature line starts with a 4-byte hint of its key; Rekor v1 tries every line with the
  // log's key regardless, and so does this.
  const signed = note.signatures.some((s) => safeVerify(Buffer.from(note.text, "utf8"), key, s.signature));
  return signed ? undefined : "the inclusion proof's checkpoint is not signed by the log's key";
}

function safeVerify(data: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return verify("sha256", data, key, signature);
  } catch {
    return false;
  }
}
