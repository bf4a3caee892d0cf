/**
 * Certificates as the chart's shared-secrets Job makes them, built with node:crypto and the
 * runtime's DER helpers (no certificate library): the registry's token pair is what
 * `openssl req -x509 -newkey rsa:<bits> -subj /CN=<name> -days <days> -nodes` writes with OpenSSL 3
 * (X.509 v3, SHA-256, a random 159-bit serial, subject and authority key identifiers, a critical
 * CA:TRUE basic constraint); a certificate set's wildcard certificate is signed by its authority and
 * names the domain in its subjectAltName. Pure apart from the serial's randomness.
 */
import { createHash, createPublicKey, type KeyObject, X509Certificate } from "node:crypto";
import {
  type DistinguishedName,
  distinguishedName,
  extension,
  KeyUsageBit,
  CertOID as OID,
  signCertificate,
  subjectOf,
} from "../../../runtime/pki/certificate.js";
import { boolean, implicit, namedBits, octetString, oid, sequence } from "../../../runtime/pki/der.js";
import { children } from "../../../runtime/pki/der-read.js";

const {
  digitalSignature: DIGITAL_SIGNATURE,
  keyEncipherment: KEY_ENCIPHERMENT,
  keyCertSign: KEY_CERT_SIGN,
  cRLSign: CRL_SIGN,
} = KeyUsageBit;
const DAY_MS = 86_400_000;

export type Subject = DistinguishedName;

/** RFC 5280 4.2.1.2 method 1, as OpenSSL's `hash`: SHA-1 of the subjectPublicKey bits. */
function keyIdentifier(key: KeyObject): Buffer {
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  const top = children(spki, 0)[0]!;
  const bits = children(spki, top.contentStart, top.end)[1]!;
  return createHash("sha1")
    .update(spki.subarray(bits.contentStart + 1, bits.end))
    .digest();
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

/** A PEM certificate for the request. */
export function issueCertificate(r: CertificateRequest): string {
  const subject = distinguishedName(r.subject);
  const signingKey = r.issuer?.key ?? r.key;
  const issuerName = r.issuer ? subjectOf(new X509Certificate(r.issuer.certPem)) : subject;
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
  return signCertificate({
    subject,
    issuer: issuerName,
    spki,
    signingKey,
    notBefore: r.notBefore,
    notAfter: new Date(r.notBefore.getTime() + r.days * DAY_MS),
    extensions,
  });
}
