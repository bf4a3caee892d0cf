import { createHash, createPublicKey, X509Certificate } from "node:crypto";
import type { TransparencyLog } from "./rekor.js";

/**
 * A Sigstore trusted root (`trusted_root.json`, the protobuf-specs TrustedRoot in its JSON form) as
 * keyless verification needs it: the certificate authorities playing Fulcio's role, each with its
 * chain and the time range it may have issued in, and the Rekor transparency logs whose
 * SignedEntryTimestamps prove a signature was logged (their key, logID and validity), and the CT logs
 * whose SCTs a keyless certificate must then carry (same shape: key, logID, validity).
 * Pure; throws naming what is wrong (`where` says where the text came from).
 */

/**
 * Where the operator's trusted root is: a ConfigMap with the key `trusted_root.json`, named by the
 * operator's setting (upstream's TrustedRootConfig).
 */
export interface TrustedRootRef {
  namespace: string;
  name: string;
}

export interface CertificateAuthority {
  /** Its certificates as listed (the issuing certificate first, the root last). */
  certificates: X509Certificate[];
  /** The range it may have issued in; open-ended when absent. */
  validFrom?: number;
  validTo?: number;
}

export interface TrustRoot {
  authorities: CertificateAuthority[];
  /** The Rekor logs listed (`tlogs`): what a transparency-log entry is checked with. */
  transparencyLogs: TransparencyLog[];
  /** The CT logs listed (`ctlogs`): when any, a keyless certificate needs an SCT one of them signed. */
  ctLogs: TransparencyLog[];
  /** sha256 of the text: part of the verification cache key, so a new root re-verifies. */
  id: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function instant(v: unknown, what: string): number | undefined {
  if (v === undefined) return undefined;
  const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(t)) throw new Error(`${what} is not an RFC 3339 time`);
  return t;
}

export function parseTrustRoot(text: string, where: string): TrustRoot {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`${where} is not JSON`);
  }
  if (!isObject(doc)) throw new Error(`${where} is not a Sigstore trusted root (not an object)`);
  const media = doc["mediaType"];
  if (typeof media !== "string" || !media.startsWith("application/vnd.dev.sigstore.trustedroot"))
    throw new Error(`${where}: mediaType is not application/vnd.dev.sigstore.trustedroot+json`);
  const cas = Array.isArray(doc["certificateAuthorities"]) ? doc["certificateAuthorities"] : [];
  const authorities = cas.map((ca, i): CertificateAuthority => {
    const at = `${where}: certificateAuthorities[${i}]`;
    const certs = isObject(ca) && isObject(ca["certChain"]) ? ca["certChain"]["certificates"] : undefined;
    if (!Array.isArray(certs) || certs.length === 0) throw new Error(`${at}.certChain lists no certificates`);
    const certificates = certs.map((c, j) => {
      const raw = isObject(c) ? c["rawBytes"] : undefined;
      if (typeof raw !== "string") throw new Error(`${at}.certChain.certificates[${j}] has no rawBytes`);
      try {
        return new X509Certificate(Buffer.from(raw, "base64"));
      } catch {
        throw new Error(`${at}.certChain.certificates[${j}].rawBytes is not a DER certificate`);
      }
    });
    const range = isObject(ca) && isObject(ca["validFor"]) ? ca["validFor"] : {};
    const validFrom = instant(range["start"], `${at}.validFor.start`);
    const validTo = instant(range["end"], `${at}.validFor.end`);
    return {
      certificates,
      ...(validFrom !== undefined ? { validFrom } : {}),
      ...(validTo !== undefined ? { validTo } : {}),
    };
  });
  const tlogs = Array.isArray(doc["tlogs"]) ? (doc["tlogs"] as unknown[]) : [];
  const transparencyLogs = tlogs.map((t, i) => transparencyLog(t, `${where}: tlogs[${i}]`));
  if (authorities.length === 0 && transparencyLogs.length === 0)
    throw new Error(`${where} lists neither certificateAuthorities nor tlogs`);
  return {
    authorities,
    transparencyLogs,
    ctLogs: (Array.isArray(doc["ctlogs"]) ? (doc["ctlogs"] as unknown[]) : []).map((t, i) =>
      transparencyLog(t, `${where}: ctlogs[${i}]`),
    ),
    id: createHash("sha256").update(text).digest("hex").slice(0, 32),
  };
}

/** One `tlogs` or `ctlogs` entry: its key (DER SubjectPublicKeyInfo), the logID entries name it by, its validity. */
function transparencyLog(t: unknown, at: string): TransparencyLog {
  const pk = isObject(t) && isObject(t["publicKey"]) ? t["publicKey"] : undefined;
  const raw = pk?.["rawBytes"];
  if (typeof raw !== "string") throw new Error(`${at}.publicKey has no rawBytes`);
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey({ key: Buffer.from(raw, "base64"), format: "der", type: "spki" });
  } catch {
    throw new Error(`${at}.publicKey.rawBytes is not a DER public key`);
  }
  const keyId = isObject(t) && isObject(t["logId"]) ? t["logId"]["keyId"] : undefined;
  if (typeof keyId !== "string" || keyId === "") throw new Error(`${at}.logId.keyId is missing`);
  const range = isObject(pk?.["validFor"]) ? (pk["validFor"] as Record<string, unknown>) : {};
  const validFrom = instant(range["start"], `${at}.publicKey.validFor.start`);
  const validTo = instant(range["end"], `${at}.publicKey.validFor.end`);
  return {
    logId: Buffer.from(keyId, "base64").toString("hex"),
    key,
    ...(validFrom !== undefined ? { validFrom } : {}),
    ...(validTo !== undefined ? { validTo } : {}),
  };
}
