import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  X509Certificate,
} from "node:crypto";
import { isIP } from "node:net";
import {
  distinguishedName,
  extension,
  KeyUsageBit,
  CertOID as OID,
  signCertificate,
  subjectOf,
} from "./certificate.js";
import { boolean, implicit, namedBits, octetString, oid, sequence, smallInteger } from "./der.js";

/**
 * Issues the operator's CA and server certificates with node:crypto: ECDSA P-256 keys, SHA-256
 * signatures, X.509 v3 with the extensions TLS clients check. Pure apart from the key generation's
 * randomness; the caller passes the time.
 */

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

const { digitalSignature: DIGITAL_SIGNATURE, keyCertSign: KEY_CERT_SIGN, cRLSign: CRL_SIGN } = KeyUsageBit;

function name(commonName: string, organization?: string): Buffer {
  return distinguishedName({ commonName, ...(organization ? { organization } : {}) });
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

/** The key identifiers here are the SHA-1 of the whole SubjectPublicKeyInfo (kept: issued CAs carry them). */
function certificate(i: Issue): { pem: string; keyId: Buffer } {
  const spki = i.publicKey.export({ type: "spki", format: "der" });
  const keyId = keyIdentifier(spki);
  const pem = signCertificate({
    subject: i.subject,
    issuer: i.issuer,
    spki,
    signingKey: i.signingKey,
    notBefore: i.notBefore,
    notAfter: i.notAfter,
    extensions: [
      extension(OID.subjectKeyIdentifier, false, octetString(keyId)),
      extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, i.issuerKeyId))),
      ...i.extensions,
    ],
  });
  return { pem, keyId };
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
    issuer: subjectOf(caCert),
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
