/**
 * The parts of an X.509 v3 certificate every issuer here shares: names, extensions, the serial,
 * reading a subject back out of a certificate, and the signed envelope itself (SHA-256 with the
 * signing key's algorithm: RSA PKCS#1 v1.5 or ECDSA). What goes into a certificate (key type,
 * extensions, key identifiers) stays with each issuer: the operator's own CA and serving
 * certificates (x509.ts) and whatever a target issues itself.
 */
import { type KeyObject, randomBytes, sign, type X509Certificate } from "node:crypto";
import {
  bitString,
  boolean,
  explicit,
  octetString,
  oid,
  sequence,
  set,
  smallInteger,
  time,
  tlv,
  unsignedInteger,
  utf8String,
} from "./der.js";
import { children } from "./der-read.js";

export const CertOID = {
  sha256WithRSAEncryption: "1.2.840.113549.1.1.11",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  organizationalUnit: "2.5.4.11",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

/** keyUsage bit positions (RFC 5280 4.2.1.3). */
export const KeyUsageBit = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

/** RFC 5280 bounds a common name at 64 characters; clients match SANs, so a cut one loses nothing. */
const CN_MAX = 64;

export interface DistinguishedName {
  commonName: string;
  organization?: string;
  organizationalUnit?: string;
}

/** O, OU, then CN, each its own RDN, as OpenSSL writes `-subj /O=…/OU=…/CN=…`. */
export function distinguishedName(n: DistinguishedName): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(
    ...(n.organization ? [rdn(CertOID.organization, n.organization)] : []),
    ...(n.organizationalUnit ? [rdn(CertOID.organizationalUnit, n.organizationalUnit)] : []),
    rdn(CertOID.commonName, n.commonName.slice(0, CN_MAX)),
  );
}

export function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** A positive serial of 159 random bits (at most 20 octets, RFC 5280), as OpenSSL picks one. */
export function serialNumber(): Buffer {
  const b = randomBytes(20);
  b[0] = b[0]! & 0x7f;
  if (b[0] === 0) b[0] = 1;
  return b;
}

/** The issuer of a signed certificate must be its authority's subject byte for byte: copied from it. */
export function subjectOf(cert: X509Certificate): Buffer {
  const c = children(cert.raw, 0)[0]!;
  const tbs = children(cert.raw, c.contentStart, c.end)[0]!;
  const fields = children(cert.raw, tbs.contentStart, tbs.end);
  // [0] version is present in v3 certificates: then serial, algorithm, issuer, validity, subject.
  const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[offset + 4];
  if (!subject) throw new Error("the certificate could not be read (no subject)");
  return cert.raw.subarray(subject.start, subject.end);
}

/** The signature algorithm of a signing key: RSA PKCS#1 v1.5 or ECDSA, both over SHA-256. */
function algorithmOf(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === "rsa")
    return sequence(oid(CertOID.sha256WithRSAEncryption), tlv(0x05, Buffer.alloc(0)));
  if (key.asymmetricKeyType === "ec") return sequence(oid(CertOID.ecdsaWithSha256));
  throw new Error(`a ${key.asymmetricKeyType ?? "unknown"} key cannot sign a certificate here`);
}

export interface CertificateBody {
  subject: Buffer;
  issuer: Buffer;
  /** The certified key, as SubjectPublicKeyInfo DER. */
  spki: Buffer;
  signingKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
  /** The serial's octets; random when absent (a precertificate and its certificate share one). */
  serial?: Buffer;
}

/** The TBSCertificate DER: what the issuer signs (and what a CT log signs for a precertificate). */
export function tbsCertificate(b: CertificateBody): Buffer {
  return sequence(
    explicit(0, smallInteger(2)), // v3
    unsignedInteger(b.serial ?? serialNumber()),
    algorithmOf(b.signingKey),
    b.issuer,
    sequence(time(b.notBefore), time(b.notAfter)),
    b.subject,
    b.spki,
    explicit(3, sequence(...b.extensions)),
  );
}

/** The signed certificate, PEM. */
export function signCertificate(b: CertificateBody): string {
  const algorithm = algorithmOf(b.signingKey);
  const tbs = tbsCertificate(b);
  const signature = sign("sha256", tbs, { key: b.signingKey, dsaEncoding: "der" });
  const der = sequence(tbs, algorithm, bitString(signature));
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
