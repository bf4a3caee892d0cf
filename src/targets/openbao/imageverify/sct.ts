import { createHash, type X509Certificate } from "node:crypto";
import { explicit, sequence, tlv } from "../../../runtime/pki/der.js";
import { children, type Element } from "../../../runtime/pki/der-read.js";
import { decodeOid } from "./certificate-fields.js";
import type { TransparencyLog } from "./rekor.js";
import { verifiesWith } from "./signature.js";

/**
 * The signed certificate timestamps (RFC 6962) a Fulcio-style certificate carries, checked offline
 * with the CT log keys of the trusted root, as cosign and sigstore-go do by default: each SCT names
 * its log by log_id (sha256 of the log's public key), and the log signed, at its timestamp, the
 * precertificate — the certificate's TBSCertificate without the SCT list, with the issuer's key
 * hash. One SCT that verifies with a log of the root is enough (sigstore-go's default threshold).
 * Pure; a CT log is the same shape as a Rekor log in the trusted root, so the same type is used.
 */

/** The embedded SCT list: an OCTET STRING holding a TLS SignedCertificateTimestampList. */
export const OID_SCT_LIST = "1.3.6.1.4.1.11129.2.4.2";
/** The precertificate poison: what makes a precertificate unusable as a certificate. */
export const OID_CT_POISON = "1.3.6.1.4.1.11129.2.4.3";

export interface Sct {
  /** hex sha256 of the log's key. */
  logId: string;
  /** ms since the epoch, as the log stamped it. */
  timestamp: bigint;
  extensions: Buffer;
  hashAlgorithm: number;
  signatureAlgorithm: number;
  signature: Buffer;
}

const body = (buf: Buffer, e: Element) => buf.subarray(e.contentStart, e.end);

/** The TBSCertificate and its extensions' elements, from a certificate's DER. */
function tbsParts(der: Buffer) {
  const cert = children(der, 0)[0];
  if (cert?.tag !== 0x30) throw new Error("not a certificate");
  const tbs = children(der, cert.contentStart, cert.end)[0];
  if (tbs?.tag !== 0x30) throw new Error("the certificate has no TBSCertificate");
  const fields = children(der, tbs.contentStart, tbs.end);
  const wrapper = fields.find((e) => e.tag === 0xa3);
  const list = wrapper ? children(der, wrapper.contentStart, wrapper.end)[0] : undefined;
  if (wrapper && list?.tag !== 0x30) throw new Error("the certificate's extensions are malformed");
  const extensions = list ? children(der, list.contentStart, list.end) : [];
  return { fields, extensions };
}

const extensionOid = (der: Buffer, ext: Element) => {
  const id = children(der, ext.contentStart, ext.end)[0];
  if (id?.tag !== 0x06) throw new Error("a certificate extension is malformed");
  return decodeOid(body(der, id));
};

/**
 * The precertificate's TBSCertificate the log signed: the certificate's, minus the SCT list
 * extension, re-encoded (RFC 6962 §3.2; the poison was removed the same way before signing).
 */
export function precertificateTbs(der: Buffer): Buffer {
  const { fields, extensions } = tbsParts(der);
  const kept = extensions
    .filter((e) => {
      const id = extensionOid(der, e);
      return id !== OID_SCT_LIST && id !== OID_CT_POISON;
    })
    .map((e) => der.subarray(e.start, e.end));
  const rebuilt = fields.map((f) =>
    f.tag === 0xa3
      ? kept.length > 0
        ? explicit(3, sequence(...kept))
        : Buffer.alloc(0)
      : der.subarray(f.start, f.end),
  );
  return tlv(0x30, Buffer.concat(rebuilt));
}

/** The SCTs embedded in the certificate; [] when it has no SCT list. Throws when the list is malformed. */
export function embeddedScts(der: Buffer): Sct[] {
  const ext = tbsParts(der).extensions.find((e) => extensionOid(der, e) === OID_SCT_LIST);
  if (!ext) return [];
  const parts = children(der, ext.contentStart, ext.end);
  const value = parts[parts.length - 1];
  if (value?.tag !== 0x04) throw new Error("the SCT list extension is malformed");
  // extnValue holds a DER OCTET STRING whose content is the TLS-encoded list.
  const inner = children(der, value.contentStart, value.end)[0];
  if (inner?.tag !== 0x04) throw new Error("the SCT list extension is not an OCTET STRING");
  return parseSctList(body(der, inner));
}

/** A TLS SignedCertificateTimestampList: u16 length, then SCTs each behind a u16 length. */
export function parseSctList(list: Buffer): Sct[] {
  const bad = (why: string) => new Error(`the SCT list is malformed: ${why}`);
  if (list.length < 2 || list.readUInt16BE(0) !== list.length - 2) throw bad("its length is wrong");
  const out: Sct[] = [];
  for (let at = 2; at < list.length; ) {
    if (at + 2 > list.length) throw bad("truncated");
    const n = list.readUInt16BE(at);
    if (at + 2 + n > list.length) throw bad("an SCT runs past the end");
    out.push(parseSct(list.subarray(at + 2, at + 2 + n)));
    at += 2 + n;
  }
  return out;
}

function parseSct(b: Buffer): Sct {
  const bad = (why: string) => new Error(`an SCT is malformed: ${why}`);
  if (b.length < 1 + 32 + 8 + 2) throw bad("truncated");
  if (b[0] !== 0) throw bad(`version ${b[0]} is not v1 (0)`);
  const logId = b.subarray(1, 33).toString("hex");
  const timestamp = b.readBigUInt64BE(33);
  const extLength = b.readUInt16BE(41);
  let at = 43 + extLength;
  if (at + 4 > b.length) throw bad("truncated");
  const extensions = b.subarray(43, at);
  const hashAlgorithm = b[at]!;
  const signatureAlgorithm = b[at + 1]!;
  const sigLength = b.readUInt16BE(at + 2);
  at += 4;
  if (at + sigLength !== b.length) throw bad("its signature's length is wrong");
  return { logId, timestamp, extensions, hashAlgorithm, signatureAlgorithm, signature: b.subarray(at) };
}

/** What the log signed for a precertificate entry (RFC 6962 §3.2, digitally-signed struct). */
export function sctSignedData(sct: Sct, issuerSpkiDer: Buffer, tbs: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head[0] = 0; // version v1
  head[1] = 0; // signature_type certificate_timestamp
  head.writeBigUInt64BE(sct.timestamp, 2);
  head.writeUInt16BE(1, 10); // entry_type precert_entry
  const tbsLength = Buffer.alloc(3);
  tbsLength.writeUIntBE(tbs.length, 0, 3);
  const extLength = Buffer.alloc(2);
  extLength.writeUInt16BE(sct.extensions.length);
  return Buffer.concat([
    head,
    createHash("sha256").update(issuerSpkiDer).digest(),
    tbsLength,
    tbs,
    extLength,
    sct.extensions,
  ]);
}

/**
 * Why no SCT of the certificate verifies with a CT log of the root, in cosign's and sigstore-go's
 * words where they have them; undefined when one does. `issuer` is the certificate that issued it
 * (its key hash is part of what the log signed).
 */
export function sctProblem(
  cert: X509Certificate,
  issuer: X509Certificate,
  logs: TransparencyLog[],
): string | undefined {
  let scts: Sct[];
  let tbs: Buffer;
  try {
    scts = embeddedScts(cert.raw);
    tbs = precertificateTbs(cert.raw);
  } catch (e) {
    return (e as Error).message;
  }
  if (scts.length === 0)
    return "certificate does not include required embedded SCT (the trusted root lists CT logs)";
  const issuerSpki = issuer.publicKey.export({ type: "spki", format: "der" });
  const reasons: string[] = [];
  for (const sct of scts) {
    const log = logs.find((l) => l.logId === sct.logId);
    if (!log) {
      reasons.push(
        `ctfe public key not found for an embedded SCT: its CT log (log ID ${sct.logId}) is not in the trusted root`,
      );
      continue;
    }
    const t = Number(sct.timestamp);
    if (
      (log.validFrom !== undefined && t < log.validFrom) ||
      (log.validTo !== undefined && t > log.validTo)
    ) {
      reasons.push(`an SCT was issued outside its CT log key's validFor range (log ID ${sct.logId})`);
      continue;
    }
    if (sct.hashAlgorithm !== 4) {
      reasons.push(`an SCT's hash algorithm ${sct.hashAlgorithm} is not SHA-256`);
      continue;
    }
    if (!verifiesWith(log.key, sctSignedData(sct, issuerSpki, tbs), sct.signature)) {
      reasons.push(
        `error verifying embedded SCT: its signature does not verify with its CT log's key (log ID ${sct.logId})`,
      );
      continue;
    }
    return undefined;
  }
  // sigstore-go's words for a threshold of one not met, then each SCT's reason.
  return `only able to verify 0 SCT entries; unable to meet threshold of 1: ${reasons.join("; ")}`;
}
