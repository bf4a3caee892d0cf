import { createHash, X509Certificate } from "node:crypto";

/**
 * A Sigstore trusted root (`trusted_root.json`, the protobuf-specs TrustedRoot in its JSON form) as
 * keyless verification needs it: the certificate authorities playing Fulcio's role, each with its
 * chain and the time range it may have issued in. Whether it lists transparency logs or CT logs is
 * kept too: this operator checks neither, and says so rather than verify less than a root asks for.
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
  /** Whether Rekor logs are listed (what a transparency-log check would use). */
  hasTransparencyLogs: boolean;
  /** Whether CT logs are listed (what an SCT check would use). */
  hasCtLogs: boolean;
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
  const cas = doc["certificateAuthorities"];
  if (!Array.isArray(cas) || cas.length === 0)
    throw new Error(`${where} lists no certificateAuthorities (the CA that issues signing certificates)`);
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
  const listed = (k: string) => Array.isArray(doc[k]) && (doc[k] as unknown[]).length > 0;
  return {
    authorities,
    hasTransparencyLogs: listed("tlogs"),
    hasCtLogs: listed("ctlogs"),
    id: createHash("sha256").update(text).digest("hex").slice(0, 32),
  };
}
