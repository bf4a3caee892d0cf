import type { X509Certificate } from "node:crypto";
import { children, type Element } from "../../../runtime/pki/der-read.js";

/**
 * What a keyless signing certificate says about its signer, read from the DER, since node:crypto
 * exposes neither arbitrary extensions nor the SAN's entries unescaped: the OIDC issuer Fulcio
 * writes in its extensions, and the subject alternative names cosign matches a subject against
 * (DNS names, email addresses, IP addresses, URIs and Fulcio's username otherName, in that order).
 * Pure; throws naming what could not be read.
 */

/** Fulcio's OIDC issuer: 1.1 holds the raw string (deprecated), 1.8 a DER UTF8String. */
export const OID_FULCIO_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1";
export const OID_FULCIO_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8";
/** The otherName SAN Fulcio writes for a username identity. */
const OID_FULCIO_USERNAME = "1.3.6.1.4.1.57264.1.7";
const OID_SUBJECT_ALT_NAME = "2.5.29.17";

export interface SignerIdentity {
  /** The issuer extension (1.8 when present, else 1.1); undefined when the certificate has neither. */
  issuer?: string;
  /** Every SAN a subject is matched against, in cosign's order. */
  subjects: string[];
}

/** Dotted form of an OBJECT IDENTIFIER's content octets. */
export function decodeOid(content: Buffer): string {
  if (content.length === 0) throw new Error("empty OBJECT IDENTIFIER");
  const first = content[0]!;
  const parts: number[] = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  let value = 0;
  for (let i = 1; i < content.length; i++) {
    const b = content[i]!;
    value = value * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join(".");
}

const body = (buf: Buffer, e: Element) => buf.subarray(e.contentStart, e.end);

/** Extension OID → extnValue content (the bytes inside the OCTET STRING). */
export function certificateExtensions(der: Buffer): Map<string, Buffer> {
  const cert = children(der, 0)[0];
  if (cert?.tag !== 0x30) throw new Error("not a certificate");
  const tbs = children(der, cert.contentStart, cert.end)[0];
  if (tbs?.tag !== 0x30) throw new Error("the certificate has no TBSCertificate");
  const out = new Map<string, Buffer>();
  const wrapper = children(der, tbs.contentStart, tbs.end).find((e) => e.tag === 0xa3);
  if (!wrapper) return out;
  const list = children(der, wrapper.contentStart, wrapper.end)[0];
  if (list?.tag !== 0x30) throw new Error("the certificate's extensions are malformed");
  for (const ext of children(der, list.contentStart, list.end)) {
    const parts = children(der, ext.contentStart, ext.end);
    const id = parts[0];
    const value = parts[parts.length - 1];
    if (id?.tag !== 0x06 || value?.tag !== 0x04) throw new Error("a certificate extension is malformed");
    out.set(decodeOid(body(der, id)), body(der, value));
  }
  return out;
}

/** An IP address's 4 or 16 octets as Go prints it (IPv6 compressed, through the URL parser). */
function ipText(b: Buffer): string {
  if (b.length === 4) return [...b].join(".");
  if (b.length !== 16) return b.toString("hex");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
}

function subjectAltNames(value: Buffer): string[] {
  const seq = children(value, 0)[0];
  if (seq?.tag !== 0x30) throw new Error("the subjectAltName extension is malformed");
  const dns: string[] = [];
  const email: string[] = [];
  const ip: string[] = [];
  const uri: string[] = [];
  const other: string[] = [];
  for (const name of children(value, seq.contentStart, seq.end)) {
    const text = body(value, name).toString("utf8");
    if (name.tag === 0x82) dns.push(text);
    else if (name.tag === 0x81) email.push(text);
    else if (name.tag === 0x87) ip.push(ipText(body(value, name)));
    else if (name.tag === 0x86) uri.push(text);
    else if (name.tag === 0xa0) {
      // otherName ::= SEQUENCE { type-id OID, value [0] EXPLICIT ANY }, here a UTF8String.
      const [id, wrapped] = children(value, name.contentStart, name.end);
      if (id?.tag !== 0x06 || decodeOid(body(value, id)) !== OID_FULCIO_USERNAME || !wrapped) continue;
      const inner = children(value, wrapped.contentStart, wrapped.end)[0];
      if (inner?.tag === 0x0c) other.push(body(value, inner).toString("utf8"));
    }
  }
  return [...dns, ...email, ...ip, ...uri, ...other];
}

/**
 * A CA certificate's basicConstraints pathLenConstraint: how many CA certificates may follow it
 * down a chain; undefined when unbounded (or absent).
 */
export function pathLengthLimit(cert: X509Certificate): number | undefined {
  const value = certificateExtensions(cert.raw).get("2.5.29.19");
  if (!value) return undefined;
  const seq = children(value, 0)[0];
  if (seq?.tag !== 0x30) throw new Error("the basicConstraints extension is malformed");
  const limit = children(value, seq.contentStart, seq.end).find((e) => e.tag === 0x02);
  if (!limit) return undefined;
  return body(value, limit).reduce((n, b) => n * 256 + b, 0);
}

/** The signer's issuer and subjects as a keyless certificate states them. */
export function signerIdentity(cert: X509Certificate): SignerIdentity {
  const ext = certificateExtensions(cert.raw);
  let issuer: string | undefined;
  const v2 = ext.get(OID_FULCIO_ISSUER_V2);
  if (v2) {
    const s = children(v2, 0)[0];
    if (s?.tag !== 0x0c)
      throw new Error(`the certificate's ${OID_FULCIO_ISSUER_V2} extension is not a UTF8String`);
    issuer = body(v2, s).toString("utf8");
  } else {
    const v1 = ext.get(OID_FULCIO_ISSUER_V1);
    if (v1) issuer = v1.toString("utf8");
  }
  const san = ext.get(OID_SUBJECT_ALT_NAME);
  return { ...(issuer !== undefined ? { issuer } : {}), subjects: san ? subjectAltNames(san) : [] };
}
