/**
 * Certificates as the chart's shared-secrets Job makes them, built with node:crypto and the
 * runtime's DER helpers (no certificate library): the registry's token pair is what
 * `openssl req -x509 -newkey rsa:<bits> -subj /CN=<name> -days <days> -nodes` writes with OpenSSL 3
 * (X.509 v3, SHA-256, a random 159-bit serial, subject and authority key identifiers, a critical
 * CA:TRUE basic constraint); a certificate set's wildcard certificate is signed by its authority and
 * names the domain in its subjectAltName. Pure apart from the serial's randomness.
 */
import { createHash, createPublicKey, type KeyObject, randomBytes, sign, X509Certificate } from "node:crypto";
import {
  bitString,
  boolean,
  explicit,
  implicit,
  namedBits,
  octetString,
  oid,
  sequence,
  set,
  smallInteger,
  time,
  tlv,
  unsignedInteger,
  utf8String,
} from "../../../runtime/pki/der.js";
import { children } from "../../../runtime/pki/der-read.js";

const OID = {
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

const DIGITAL_SIGNATURE = 0;
const KEY_ENCIPHERMENT = 2;
const KEY_CERT_SIGN = 5;
const CRL_SIGN = 6;
const DAY_MS = 86_400_000;

export interface Subject {
  commonName: string;
  organization?: string;
  organizationalUnit?: string;
}

function name(s: Subject): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(
    ...(s.organization ? [rdn(OID.organization, s.organization)] : []),
    ...(s.organizationalUnit ? [rdn(OID.organizationalUnit, s.organizationalUnit)] : []),
    rdn(OID.commonName, s.commonName),
  );
}

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));

/** RFC 5280 4.2.1.2 method 1, as OpenSSL's `hash`: SHA-1 of the subjectPublicKey bits. */
function keyIdentifier(key: KeyObject): Buffer {
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  const top = children(spki, 0)[0]!;
  const bits = children(spki, top.contentStart, top.end)[1]!;
  return createHash("sha1")
    .update(spki.subarray(bits.contentStart + 1, bits.end))
    .digest();
}

/** The signature algorithm of a signing key: RSA PKCS#1 v1.5 or ECDSA, both over SHA-256. */
function algorithmOf(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === "rsa")
    return sequence(oid(OID.sha256WithRSAEncryption), tlv(0x05, Buffer.alloc(0)));
  if (key.asymmetricKeyType === "ec") return sequence(oid(OID.ecdsaWithSha256));
  throw new Error(`a ${key.asymmetricKeyType ?? "unknown"} key cannot sign a certificate here`);
}

/** A positive serial of 159 random bits, as OpenSSL picks one. */
function serialNumber(): Buffer {
  const b = randomBytes(20);
  b[0] = b[0]! & 0x7f;
  if (b[0] === 0) b[0] = 1;
  return b;
}

export interface CertificateRequest {
  subject: Subject;
  /** The certificate's own key pair (its public half is certified). */
  key: KeyObject;
  /** Who signs: absent for a self-signed certificate. */
  issuer?: { certPem: string; key: KeyObject };
  /** An authority (CA:TRUE, keyCertSign) or a server certificate. */
  ca: boolean;
  /** dNSName entries of the subjectAltName; none for an authority. */
  dnsNames?: readonly string[];
  notBefore: Date;
  days: number;
}

/** The issuer of a signed certificate is the authority's subject byte for byte. */
function subjectOf(certPem: string): Buffer {
  const raw = new X509Certificate(certPem).raw;
  const cert = children(raw, 0)[0]!;
  const tbs = children(raw, cert.contentStart, cert.end)[0]!;
  const fields = children(raw, tbs.contentStart, tbs.end);
  const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[offset + 4]!;
  return raw.subarray(subject.start, subject.end);
}

/** A PEM certificate for the request. */
export function issueCertificate(r: CertificateRequest): string {
  const subject = name(r.subject);
  const signingKey = r.issuer?.key ?? r.key;
  const issuerName = r.issuer ? subjectOf(r.issuer.certPem) : subject;
  const algorithm = algorithmOf(signingKey);
  const spki = createPublicKey(r.key).export({ type: "spki", format: "der" });
  const extensions = [
    extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(r.key))),
    extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, keyIdentifier(signingKey)))),
    r.ca
      ? extension(OID.basicConstraints, true, sequence(boolean(true)))
      : extension(OID.basicConstraints, true, sequence()),
  ];
  if (r.issuer || !r.ca || r.dnsNames?.length) {
    // The set's authority and server certificate say what they are for; the registry's plain
    // self-signed pair carries only what `openssl req -x509` adds.
    extensions.push(
      r.ca
        ? extension(OID.keyUsage, true, namedBits([DIGITAL_SIGNATURE, KEY_CERT_SIGN, CRL_SIGN]))
        : extension(OID.keyUsage, true, namedBits([DIGITAL_SIGNATURE, KEY_ENCIPHERMENT])),
    );
    if (!r.ca)
      extensions.push(extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth), oid(OID.clientAuth))));
  }
  if (r.dnsNames?.length)
    extensions.push(
      extension(
        OID.subjectAltName,
        false,
        sequence(...r.dnsNames.map((n) => implicit(2, Buffer.from(n, "ascii")))),
      ),
    );
  const notAfter = new Date(r.notBefore.getTime() + r.days * DAY_MS);
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serialNumber()),
    algorithm,
    issuerName,
    sequence(time(r.notBefore), time(notAfter)),
    subject,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = sign("sha256", tbs, { key: signingKey, dsaEncoding: "der" });
  const der = sequence(tbs, algorithm, bitString(signature));
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
