import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from "node:crypto";
import { isIP } from "node:net";
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
  unsignedInteger,
  utf8String,
} from "./der.js";
import { children } from "./der-read.js";

/**
 * Issues the operator's CA and server certificates with node:crypto: ECDSA P-256 keys, SHA-256
 * signatures, X.509 v3 with the extensions TLS clients check. Pure apart from the key generation's
 * randomness; the caller passes the time.
 */

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

// keyUsage bit positions (RFC 5280 4.2.1.3).
const DIGITAL_SIGNATURE = 0;
const KEY_CERT_SIGN = 5;
const CRL_SIGN = 6;

/** RFC 5280 bounds a common name at 64 characters; clients match SANs, so a cut one loses nothing. */
const CN_MAX = 64;

function name(commonName: string, organization?: string): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(
    ...(organization ? [rdn(OID.organization, organization)] : []),
    rdn(OID.commonName, commonName.slice(0, CN_MAX)),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** Parses an IPv4 or IPv6 literal into its 4 or 16 bytes. */
export function ipBytes(ip: string): Buffer {
  const family = isIP(ip);
  if (family === 4) return Buffer.from(ip.split(".").map(Number));
  if (family !== 6) throw new Error(`${ip} is not an IP address`);
  let text = ip;
  let tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    tail = v4[1]!.split(".").map(Number);
    text = `${text.slice(0, -v4[1]!.length)}0:0`;
  }
  const [head, rest] = text.includes("::") ? text.split("::") : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(":").filter((g) => g !== "") : []);
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const fill = rest === undefined ? [] : new Array(8 - left.length - right.length).fill("0");
  const all = [...left, ...fill, ...right].map((g) => Number.parseInt(g, 16));
  const out = Buffer.alloc(16);
  for (let i = 0; i < all.length; i++) out.writeUInt16BE(all[i]!, i * 2);
  if (tail.length) out.set(tail, 12);
  return out;
}

/** subjectAltName: IP literals as iPAddress, everything else as dNSName. */
function subjectAltNames(names: readonly string[]): Buffer {
  return sequence(
    ...names.map((n) => (isIP(n) ? implicit(7, ipBytes(n)) : implicit(2, Buffer.from(n, "ascii")))),
  );
}

function keyIdentifier(spki: Buffer): Buffer {
  return createHash("sha1").update(spki).digest();
}

/** A positive, non-zero 127-bit serial, as RFC 5280 allows (at most 20 octets). */
function serialNumber(): Buffer {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01;
  return b;
}

interface Issue {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signingKey: KeyObject;
  issuerKeyId: Buffer;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}

function certificate(i: Issue): { pem: string; keyId: Buffer } {
  const spki = i.publicKey.export({ type: "spki", format: "der" });
  const keyId = keyIdentifier(spki);
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const tbs = sequence(
    explicit(0, smallInteger(2)), // v3
    unsignedInteger(serialNumber()),
    algorithm,
    i.issuer,
    sequence(time(i.notBefore), time(i.notAfter)),
    i.subject,
    spki,
    explicit(
      3,
      sequence(
        extension(OID.subjectKeyIdentifier, false, octetString(keyId)),
        extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, i.issuerKeyId))),
        ...i.extensions,
      ),
    ),
  );
  const signature = sign("sha256", tbs, { key: i.signingKey, dsaEncoding: "der" });
  const der = sequence(tbs, algorithm, bitString(signature));
  const b64 = der.toString("base64").replace(/.{1,64}/g, "$&\n");
  return { pem: `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`, keyId };
}

function newKeyPair() {
  return generateKeyPairSync("ec", { namedCurve: "prime256v1" });
}

const keyPem = (k: KeyObject): string => k.export({ type: "pkcs8", format: "pem" }).toString();

/**
 * Backdating notBefore a little tolerates clocks of peers that run slightly behind ours; a pod must
 * not refuse a certificate issued "in the future".
 */
const BACKDATE_MS = 5 * 60_000;

export function createCertificateAuthority(commonName: string, now: Date, validityMs: number): KeyPairPem {
  const { publicKey, privateKey } = newKeyPair();
  const subject = name(commonName, "platform-operator");
  const keyId = keyIdentifier(publicKey.export({ type: "spki", format: "der" }));
  const { pem } = certificate({
    subject,
    issuer: subject,
    publicKey,
    signingKey: privateKey,
    issuerKeyId: keyId,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + validityMs),
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true), smallInteger(0))),
      extension(OID.keyUsage, true, namedBits([DIGITAL_SIGNATURE, KEY_CERT_SIGN, CRL_SIGN])),
    ],
  });
  return { certPem: pem, keyPem: keyPem(privateKey) };
}

export interface ServerCertificateRequest {
  commonName: string;
  /** DNS names and IP literals; the first DNS name is conventionally the common name too. */
  names: readonly string[];
  now: Date;
  validityMs: number;
}

/** A server (and client, for peer connections) certificate signed by `ca`. */
export function issueServerCertificate(ca: KeyPairPem, req: ServerCertificateRequest): KeyPairPem {
  const caCert = new X509Certificate(ca.certPem);
  const caKey = createPrivateKey(ca.keyPem);
  const caSpki = caCert.publicKey.export({ type: "spki", format: "der" });
  const { publicKey, privateKey } = newKeyPair();
  const notAfter = new Date(Math.min(req.now.getTime() + req.validityMs, Date.parse(caCert.validTo)));
  const { pem } = certificate({
    subject: name(req.commonName),
    issuer: issuerName(caCert),
    publicKey,
    signingKey: caKey,
    issuerKeyId: keyIdentifier(caSpki),
    notBefore: new Date(req.now.getTime() - BACKDATE_MS),
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.keyUsage, true, namedBits([DIGITAL_SIGNATURE])),
      extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth), oid(OID.clientAuth))),
      extension(OID.subjectAltName, false, subjectAltNames(req.names)),
    ],
  });
  return { certPem: pem, keyPem: keyPem(privateKey) };
}

/** The issuer of a leaf must be byte-for-byte the CA's subject: copied from the CA's own encoding. */
function issuerName(ca: X509Certificate): Buffer {
  const cert = children(ca.raw, 0)[0]!;
  const tbs = children(ca.raw, cert.contentStart, cert.end)[0]!;
  const fields = children(ca.raw, tbs.contentStart, tbs.end);
  // [0] version is present in v3 certificates: then serial, algorithm, issuer, validity, subject.
  const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[offset + 4];
  if (!subject) throw new Error("the CA certificate could not be read (no subject)");
  return ca.raw.subarray(subject.start, subject.end);
}
