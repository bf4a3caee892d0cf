import { createHash, type KeyObject, verify } from "node:crypto";
import { canonicalJson } from "../../../runtime/canonical-json.js";
import { type InclusionProof, inclusionProblem } from "./inclusion-proof.js";

/**
 * A Rekor (v1) transparency-log entry checked offline, as cosign and sigstore-go check the evidence
 * a signature carries when they are not asked to look the entry up:
 * - the SignedEntryTimestamp (a Sigstore bundle's inclusion promise) is the log's ECDSA signature
 *   over the RFC 8785 form of `{body, integratedTime, logIndex, logID}`, made with the key the trusted
 *   root lists for that logID, valid at integratedTime: it proves the log accepted this entry then;
 * - the entry's body must describe this very signature: the same signature bytes, the same signing
 *   key or certificate, and the sha256 of the same payload (hashedrekord 0.0.1 for a `.sig` layer,
 *   dsse 0.0.1 for a Sigstore bundle's DSSE envelope).
 * - an inclusion proof, when the entry carries one (a Sigstore bundle v0.2 or later must), is
 *   checked too: the entry hashed up its audit path gives the root of a checkpoint the log's key
 *   signed (inclusion-proof.ts). The SET is still required: only it signs the integrated time.
 * What is not checked offline: that the log still holds the entry, or that it is consistent with
 * the log's later checkpoints (that needs the log itself). Pure; a refusal is a reason in cosign's
 * words, never an exception.
 */

/** A Rekor log as the trusted root lists it (its `tlogs` entries). */
export interface TransparencyLog {
  /** hex sha256 of the key's DER SubjectPublicKeyInfo: the logID Rekor writes in its entries. */
  logId: string;
  key: KeyObject;
  /** The range the key signed in (trusted root `publicKey.validFor`); required to start, as sigstore-go has it. */
  validFrom?: number;
  validTo?: number;
}

/** One log entry as a signature carries it (a `.sig` layer's bundle, a Sigstore bundle's tlogEntries). */
export interface LogEntry {
  /** The canonicalized entry body, base64, as the log stored it. */
  body: string;
  /** Seconds since the epoch. */
  integratedTime: number;
  logIndex: number;
  /** hex. */
  logId: string;
  /** The SignedEntryTimestamp / inclusion promise; absent when the entry carries none. */
  signedEntryTimestamp?: Buffer;
  inclusionProof?: InclusionProof;
}

/** What the entry must describe: the signature being verified. */
export interface LoggedSignature {
  signature: Buffer;
  /** The payload whose sha256 the entry records (the simple-signing payload, the DSSE payload). */
  payload: Buffer;
  /** DER of what verifies the signature: the signing certificate, or the public key's SPKI. */
  verifierDer: Buffer;
}

export type LogVerdict = { ok: true; integratedTime: number } | { ok: false; why: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const sha256Hex = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** The logID Rekor v1 gives a log key: hex sha256 of its DER SubjectPublicKeyInfo. */
export function logIdOf(key: KeyObject): string {
  return sha256Hex(key.export({ format: "der", type: "spki" }));
}

/** The bytes the SignedEntryTimestamp signs (RFC 8785 of the entry without its verification). */
export function signedEntryBytes(e: LogEntry): Buffer {
  return Buffer.from(
    canonicalJson({ body: e.body, integratedTime: e.integratedTime, logIndex: e.logIndex, logID: e.logId }),
    "utf8",
  );
}

/** Why the SignedEntryTimestamp (and the inclusion proof, when there is one) does not hold; undefined when it does. */
export function logEvidenceProblem(e: LogEntry, logs: readonly TransparencyLog[]): string | undefined {
  if (!e.signedEntryTimestamp) return "the entry carries no SignedEntryTimestamp (inclusion promise)";
  const log = logs.find((l) => l.logId === e.logId.toLowerCase());
  if (!log)
    return "rekor log public key not found for payload (the trusted root lists no log with that logID)";
  const at = e.integratedTime * 1000;
  if (log.validFrom === undefined)
    return "rekor validity period start time not set (the trusted root's tlogs entry has no validFor.start)";
  if (at < log.validFrom || (log.validTo !== undefined && at > log.validTo))
    return "rekor log public key not valid at payload integrated time";
  if (log.key.asymmetricKeyType !== "ec")
    return `the Rekor log key is ${log.key.asymmetricKeyType}, not ECDSA`;
  let ok = false;
  try {
    ok = verify("sha256", signedEntryBytes(e), log.key, e.signedEntryTimestamp);
  } catch {
    ok = false;
  }
  if (!ok)
    return "unable to verify SET (the SignedEntryTimestamp is not the log's signature over this entry)";
  return e.inclusionProof ? inclusionProblem(e.body, e.inclusionProof, log.key) : undefined;
}

/** DER of the first PEM block of `text`; undefined when there is none. */
function pemDer(text: string): Buffer | undefined {
  const m = /-----BEGIN [A-Z ]+-----([\s\S]*?)-----END [A-Z ]+-----/.exec(text);
  return m ? Buffer.from(m[1]!.replace(/\s+/g, ""), "base64") : undefined;
}

interface BodyClaims {
  signature: Buffer;
  /** The verifier as the body holds it: base64 of a PEM certificate or public key. */
  verifier: string;
  /** hex sha256 the entry records for the payload. */
  payloadSha256: string;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** What the entry body says was signed; throws naming what it cannot read. */
export function bodyClaims(bodyBase64: string): BodyClaims {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bodyBase64, "base64").toString("utf8"));
  } catch {
    throw new Error("the log entry's body is not JSON");
  }
  if (!isObject(doc) || !isObject(doc["spec"])) throw new Error("the log entry's body has no spec");
  const kind = `${String(doc["kind"])} ${String(doc["apiVersion"])}`;
  const spec = doc["spec"];
  const hash = (h: unknown, what: string): string => {
    if (!isObject(h) || h["algorithm"] !== "sha256" || typeof h["value"] !== "string")
      throw new Error(`the log entry's ${what} is not a sha256 hash`);
    return h["value"].toLowerCase();
  };
  if (kind === "hashedrekord 0.0.1") {
    const sig = isObject(spec["signature"]) ? spec["signature"] : {};
    const key = isObject(sig["publicKey"]) ? str(sig["publicKey"]["content"]) : undefined;
    const content = str(sig["content"]);
    if (!content || !key) throw new Error("the hashedrekord entry has no signature or public key");
    const data = isObject(spec["data"]) ? spec["data"] : {};
    return {
      signature: Buffer.from(content, "base64"),
      verifier: key,
      payloadSha256: hash(data["hash"], "data hash"),
    };
  }
  if (kind === "dsse 0.0.1") {
    const sigs = spec["signatures"];
    if (!Array.isArray(sigs) || sigs.length !== 1 || !isObject(sigs[0]))
      throw new Error("multiple signatures on DSSE envelopes are not currently supported");
    const content = str(sigs[0]["signature"]);
    const key = str(sigs[0]["verifier"]);
    if (!content || !key) throw new Error("the dsse entry has no signature or verifier");
    return {
      signature: Buffer.from(content, "base64"),
      verifier: key,
      payloadSha256: hash(spec["payloadHash"], "payloadHash"),
    };
  }
  throw new Error(`the log entry is a ${kind} entry; hashedrekord 0.0.1 and dsse 0.0.1 are checked`);
}

/** Why the entry's body does not describe the signature; undefined when it does. */
export function bodyMismatch(bodyBase64: string, s: LoggedSignature): string | undefined {
  let claims: BodyClaims;
  try {
    claims = bodyClaims(bodyBase64);
  } catch (e) {
    return (e as Error).message;
  }
  if (!claims.signature.equals(s.signature))
    return "signature in bundle does not match signature being verified";
  const der = pemDer(Buffer.from(claims.verifier, "base64").toString("utf8"));
  if (!der?.equals(s.verifierDer))
    return "the log entry's public key or certificate is not the one the signature was verified with";
  const payload = sha256Hex(s.payload);
  if (claims.payloadSha256 !== payload)
    return `matching bundle to payload: bundle="${claims.payloadSha256}", payload="${payload}"`;
  return undefined;
}

/**
 * The first entry that proves the signature was logged: its SET verifies with a trusted log's key
 * and its body describes the signature. Entries of logs the root does not list are passed over, as
 * sigstore-go does; the verdict's reason is the last entry's.
 */
export function checkLogEntries(
  entries: readonly LogEntry[],
  s: LoggedSignature,
  logs: readonly TransparencyLog[],
): LogVerdict {
  if (entries.length === 0)
    return {
      ok: false,
      why: "offline verification failed: the signature carries no transparency-log entry (no Rekor bundle annotation or tlogEntries)",
    };
  let why = "";
  for (const e of entries) {
    const problem = logEvidenceProblem(e, logs) ?? bodyMismatch(e.body, s);
    if (!problem) return { ok: true, integratedTime: e.integratedTime * 1000 };
    why = `transparency-log entry ${e.logIndex}: ${problem}`;
  }
  return { ok: false, why };
}

/**
 * The entry cosign writes in a `.sig` layer's `dev.sigstore.cosign/bundle` annotation:
 * `{SignedEntryTimestamp, Payload: {body, integratedTime, logIndex, logID}}`; throws naming what is
 * malformed.
 */
export function annotationEntry(text: string): LogEntry {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error("the signature's Rekor bundle annotation is not JSON");
  }
  const p = isObject(doc) && isObject(doc["Payload"]) ? doc["Payload"] : undefined;
  const set = isObject(doc) ? str(doc["SignedEntryTimestamp"]) : undefined;
  const body = str(p?.["body"]);
  const integratedTime = p?.["integratedTime"];
  const logIndex = p?.["logIndex"];
  const logId = str(p?.["logID"]);
  if (!p || !body || !Number.isSafeInteger(integratedTime) || !Number.isSafeInteger(logIndex) || !logId)
    throw new Error(
      "the signature's Rekor bundle annotation lacks Payload.body, integratedTime, logIndex or logID",
    );
  return {
    body,
    integratedTime: integratedTime as number,
    logIndex: logIndex as number,
    logId,
    ...(set ? { signedEntryTimestamp: Buffer.from(set, "base64") } : {}),
  };
}

/** A protobuf int64 in its JSON form (a decimal string, or a number). */
function int64(v: unknown): number | undefined {
  const n = typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v;
  return typeof n === "number" && Number.isSafeInteger(n) ? n : undefined;
}

/**
 * A Sigstore bundle's `verificationMaterial.tlogEntries[i]` (protobuf-specs TransparencyLogEntry, JSON
 * form: int64 as strings, bytes as base64; the logID is `logId.keyId`, base64 of the raw hash);
 * throws naming what is malformed.
 */
export function bundleEntry(v: unknown, at: string): LogEntry {
  if (!isObject(v)) throw new Error(`${at} is not an object`);
  const body = str(v["canonicalizedBody"]);
  const integratedTime = int64(v["integratedTime"]);
  const logIndex = int64(v["logIndex"]);
  const keyId = isObject(v["logId"]) ? str(v["logId"]["keyId"]) : undefined;
  if (!body || integratedTime === undefined || logIndex === undefined || !keyId)
    throw new Error(`${at} lacks canonicalizedBody, integratedTime, logIndex or logId.keyId`);
  const set = isObject(v["inclusionPromise"])
    ? str(v["inclusionPromise"]["signedEntryTimestamp"])
    : undefined;
  const inclusionProof = isObject(v["inclusionProof"])
    ? proofOf(v["inclusionProof"], `${at}.inclusionProof`)
    : undefined;
  return {
    body,
    integratedTime,
    logIndex,
    logId: Buffer.from(keyId, "base64").toString("hex"),
    ...(set ? { signedEntryTimestamp: Buffer.from(set, "base64") } : {}),
    ...(inclusionProof ? { inclusionProof } : {}),
  };
}

/** protobuf-specs InclusionProof in its JSON form; throws naming what is missing. */
function proofOf(p: Record<string, unknown>, at: string): InclusionProof {
  const logIndex = int64(p["logIndex"]);
  const treeSize = int64(p["treeSize"]);
  const rootHash = str(p["rootHash"]);
  const hashes = Array.isArray(p["hashes"]) ? p["hashes"] : [];
  const checkpoint = isObject(p["checkpoint"]) ? str(p["checkpoint"]["envelope"]) : undefined;
  if (logIndex === undefined || treeSize === undefined || !rootHash || !checkpoint)
    throw new Error(
      `${at} lacks logIndex, treeSize, rootHash or checkpoint.envelope (inclusion proof missing required checkpoint)`,
    );
  if (!hashes.every((h) => typeof h === "string")) throw new Error(`${at}.hashes are not all base64 strings`);
  return {
    logIndex,
    treeSize,
    rootHash: Buffer.from(rootHash, "base64"),
    hashes: (hashes as string[]).map((h) => Buffer.from(h, "base64")),
    checkpoint,
  };
}
