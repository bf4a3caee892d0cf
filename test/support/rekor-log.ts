import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { canonicalJson } from "../../src/runtime/canonical-json.js";

/**
 * A transparency log in Rekor's role, for offline tests: no Rekor exists here (it needs Trillian and
 * a database), so this makes what Rekor v1 returns for an accepted entry, by Rekor's format: an
 * ECDSA P-256 log key whose logID is the hex sha256 of its DER SubjectPublicKeyInfo, entry bodies of
 * kind hashedrekord 0.0.1 (a `.sig` signature) or dsse 0.0.1 (a Sigstore bundle's envelope), and the
 * SignedEntryTimestamp: the log key's signature over the RFC 8785 form of
 * `{body, integratedTime, logIndex, logID}`, and the inclusion proof (RFC 6962 Merkle tree of the
 * log's leaves, audit path and a checkpoint: a signed note in Rekor's form). Its `tlog()` is the trusted_root.json `tlogs` entry
 * real cosign and the operator are given. Tests break a piece at a time (another key signs, the body
 * names another signature) to see both refuse.
 */

export interface RekorEntry {
  body: string;
  integratedTime: number;
  logIndex: number;
  logID: string;
  signedEntryTimestamp: string;
  /** The entry's inclusion proof in the tree right after it was added, with the log's signed checkpoint. */
  inclusionProof: {
    logIndex: number;
    rootHash: string;
    treeSize: number;
    hashes: string[];
    checkpoint: string;
  };
}

export interface RekorLog {
  logId: string;
  /** The log's public key, PEM: what `cosign trusted-root create --rekor-key` and SIGSTORE_REKOR_PUBLIC_KEY take. */
  publicKeyPem: string;
  /** The trusted root `tlogs` entry for this log. */
  tlog(validFrom?: Date): Record<string, unknown>;
  /** An accepted entry for `body` (base64 of the canonical body JSON), logged at `integratedTime` (s). */
  enter(body: string, integratedTime: number, opts?: { signWith?: KeyObject; logId?: string }): RekorEntry;
}

const sha256Hex = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");
const hash = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash("sha256")).digest();

// RFC 6962 section 2.1, by its recursive definitions: the leaf hash, the tree hash MTH and PATH.
const leaf = (data: Buffer) => hash(Buffer.from([0]), data);
const split = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);
function treeHash(d: Buffer[]): Buffer {
  if (d.length === 1) return d[0]!;
  const k = split(d.length);
  return hash(Buffer.from([1]), treeHash(d.slice(0, k)), treeHash(d.slice(k)));
}
function auditPath(m: number, d: Buffer[]): Buffer[] {
  if (d.length <= 1) return [];
  const k = split(d.length);
  return m < k
    ? [...auditPath(m, d.slice(0, k)), treeHash(d.slice(k))]
    : [...auditPath(m - k, d.slice(k)), treeHash(d.slice(0, k))];
}
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export function createRekorLog(): RekorLog {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const der = publicKey.export({ format: "der", type: "spki" });
  const logId = sha256Hex(der);
  // A few earlier entries, so audit paths have some length.
  const leaves: Buffer[] = Array.from({ length: 5 }, (_, i) => leaf(Buffer.from(`earlier entry ${i}`)));
  const origin = "rekor.test.invalid - 1";
  return {
    logId,
    publicKeyPem: publicKey.export({ format: "pem", type: "spki" }).toString(),
    tlog: (validFrom = new Date(Date.now() - 30 * 24 * 3600_000)) => ({
      baseUrl: "https://rekor.test.invalid",
      hashAlgorithm: "SHA2_256",
      publicKey: {
        rawBytes: der.toString("base64"),
        keyDetails: "PKIX_ECDSA_P256_SHA_256",
        validFor: { start: validFrom.toISOString() },
      },
      logId: { keyId: Buffer.from(logId, "hex").toString("base64") },
    }),
    enter(body, integratedTime, opts = {}) {
      const logIndex = leaves.length;
      leaves.push(leaf(Buffer.from(body, "base64")));
      const logID = opts.logId ?? logId;
      const signed = canonicalJson({ body, integratedTime, logIndex, logID });
      const set = sign("sha256", Buffer.from(signed, "utf8"), opts.signWith ?? privateKey);
      const root = treeHash(leaves);
      const text = `${origin}\n${leaves.length}\n${root.toString("base64")}\n`;
      const noteSignature = sign("sha256", Buffer.from(text, "utf8"), opts.signWith ?? privateKey);
      const hint = Buffer.from(logId, "hex").subarray(0, 4);
      const checkpoint = `${text}\n\u2014 rekor.test.invalid ${Buffer.concat([hint, noteSignature]).toString("base64")}\n`;
      return {
        body,
        integratedTime,
        logIndex,
        logID,
        signedEntryTimestamp: set.toString("base64"),
        inclusionProof: {
          logIndex,
          rootHash: root.toString("hex"),
          treeSize: leaves.length,
          hashes: auditPath(logIndex, leaves).map((h) => h.toString("hex")),
          checkpoint,
        },
      };
    },
  };
}

/** A hashedrekord 0.0.1 body (base64): a signature over `payload`, verified by `verifierPem` (a certificate or key). */
export function hashedRekordBody(signature: Buffer, verifierPem: string, payload: Buffer): string {
  return b64(
    JSON.stringify({
      apiVersion: "0.0.1",
      kind: "hashedrekord",
      spec: {
        data: { hash: { algorithm: "sha256", value: sha256Hex(payload) } },
        signature: { content: signature.toString("base64"), publicKey: { content: b64(verifierPem) } },
      },
    }),
  );
}

/** A dsse 0.0.1 body (base64) for a DSSE envelope with one signature. */
export function dsseBody(
  envelopeJson: string,
  payload: Buffer,
  signature: Buffer,
  verifierPem: string,
): string {
  return b64(
    JSON.stringify({
      apiVersion: "0.0.1",
      kind: "dsse",
      spec: {
        envelopeHash: { algorithm: "sha256", value: sha256Hex(envelopeJson) },
        payloadHash: { algorithm: "sha256", value: sha256Hex(payload) },
        signatures: [{ signature: signature.toString("base64"), verifier: b64(verifierPem) }],
      },
    }),
  );
}

/** What `cosign attach signature --rekor-response` reads (cosign's LocalSignedPayload): the `.sig` bundle. */
export function rekorResponse(e: RekorEntry, signature: Buffer): string {
  return JSON.stringify({
    base64Signature: signature.toString("base64"),
    rekorBundle: {
      SignedEntryTimestamp: e.signedEntryTimestamp,
      Payload: { body: e.body, integratedTime: e.integratedTime, logIndex: e.logIndex, logID: e.logID },
    },
  });
}

/** A Sigstore bundle's tlogEntries[] item (protobuf JSON: int64 as strings) with its inclusion promise. */
export function bundleTlogEntry(e: RekorEntry, kind: "dsse" | "hashedrekord"): Record<string, unknown> {
  return {
    logIndex: String(e.logIndex),
    logId: { keyId: Buffer.from(e.logID, "hex").toString("base64") },
    kindVersion: { kind, version: "0.0.1" },
    integratedTime: String(e.integratedTime),
    inclusionPromise: { signedEntryTimestamp: e.signedEntryTimestamp },
    inclusionProof: {
      logIndex: String(e.inclusionProof.logIndex),
      rootHash: Buffer.from(e.inclusionProof.rootHash, "hex").toString("base64"),
      treeSize: String(e.inclusionProof.treeSize),
      hashes: e.inclusionProof.hashes.map((h) => Buffer.from(h, "hex").toString("base64")),
      checkpoint: { envelope: e.inclusionProof.checkpoint },
    },
    canonicalizedBody: e.body,
  };
}
