import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  X509Certificate,
} from "node:crypto";
import {
  distinguishedName,
  extension,
  KeyUsageBit,
  serialNumber,
  signCertificate,
  subjectOf,
  tbsCertificate,
} from "../../src/runtime/pki/certificate.js";
import {
  boolean,
  implicit,
  namedBits,
  octetString,
  oid,
  sequence,
  smallInteger,
  utf8String,
} from "../../src/runtime/pki/der.js";

/**
 * A private CA in Fulcio's role, for keyless image verification offline: it certifies a signer's
 * public key for a short time with the identity an OIDC token would have given (the issuer in
 * Fulcio's extensions, the subject as the SAN), and describes itself as a Sigstore trusted root
 * (`trusted_root.json`), the form the operator is given its trust root in. Real cosign signs with
 * such a certificate (`--certificate`, `--certificate-chain`) and its own key; no Fulcio, Rekor or
 * CT log exists unless asked for: with `ctLog`, a stand-in CT log (its own P-256 key) signs an SCT
 * for each precertificate (RFC 6962: the TBSCertificate with the poison extension, which is then
 * left out), and the certificate carries the SCT list, as Fulcio's do. Like Fulcio's, the CA may
 * be a root and an intermediate that issues.
 */

/** Fulcio's certificate extensions: the OIDC issuer, legacy (raw string) and v2 (DER UTF8String). */
export const FULCIO_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1";
export const FULCIO_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8";
const CODE_SIGNING = "1.3.6.1.5.5.7.3.3";
const DAY = 24 * 3600_000;

export interface SignerCertificateRequest {
  /** The signer's public key (PEM SubjectPublicKeyInfo): cosign.pub of a generated key pair. */
  publicKeyPem: string;
  /** The OIDC issuer the certificate names. */
  issuer: string;
  /** The identity: a URI (`https://…`) goes in the SAN as a URI, anything else as an email address. */
  subject: string;
  notBefore: Date;
  notAfter: Date;
  /** Which issuer extensions to write; both by default, as Fulcio does. */
  issuerExtensions?: "v1" | "v2" | "both";
  /**
   * With a CT log: an SCT it signed ("valid", the default), one signed by a log the root does not
   * list, one whose signature is broken, or none.
   */
  sct?: "valid" | "unknown-log" | "tampered" | "none";
}

/** The embedded SCT list extension and the precertificate poison (RFC 6962 §3.1, §3.3). */
export const OID_SCT_LIST = "1.3.6.1.4.1.11129.2.4.2";
export const OID_CT_POISON = "1.3.6.1.4.1.11129.2.4.3";

export interface KeylessCaOptions {
  /**
   * Issue through an intermediate CA under a root whose basicConstraints allow `rootPathLength`
   * CAs below it (0 makes the intermediate, and every chain through it, invalid).
   */
  intermediate?: { rootPathLength: number };
  /** Run a CT log stand-in: certificates carry SCTs, and the trusted root lists the log. */
  ctLog?: boolean;
}

export interface KeylessCa {
  /** The issuing CA's certificate first, the root last: `cosign sign/verify --certificate-chain`. */
  chainPem: string;
  /** Issues a code-signing certificate for the signer's key. */
  issue(req: SignerCertificateRequest): string;
  /** The CA as a Sigstore trusted root: one certificate authority, its chain, the CT log if any. */
  trustedRootJson(): string;
  /** The CT log stand-in's public key (PEM), when `ctLog`. */
  ctLogPublicKeyPem?: string;
  /** From when the CT log's key is valid (the trusted root's validFor.start), when `ctLog`. */
  ctLogStart?: Date;
}

interface Ca {
  cert: X509Certificate;
  key: KeyObject;
  pem: string;
}

function caCertificate(name: string, parent: Ca | undefined, pathLength: number | undefined, now: Date): Ca {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const subject = distinguishedName({ commonName: name, organization: "platform-operator" });
  const pem = signCertificate({
    subject,
    issuer: parent ? subjectOf(parent.cert) : subject,
    spki: publicKey.export({ type: "spki", format: "der" }),
    signingKey: parent?.key ?? privateKey,
    // From a day before `now`: cosign checks a chain at the signing certificate's own notBefore
    // when it signs, so an already expired certificate (issued yesterday) still gets signed with.
    notBefore: new Date(now.getTime() - DAY),
    notAfter: new Date(now.getTime() + 2 * DAY),
    extensions: [
      extension(
        "2.5.29.19",
        true,
        sequence(boolean(true), ...(pathLength === undefined ? [] : [smallInteger(pathLength)])),
      ),
      extension(
        "2.5.29.15",
        true,
        namedBits([KeyUsageBit.digitalSignature, KeyUsageBit.keyCertSign, KeyUsageBit.cRLSign]),
      ),
    ],
  });
  return { cert: new X509Certificate(pem), key: privateKey, pem };
}

export function createKeylessCa(name: string, now = new Date(), opts: KeylessCaOptions = {}): KeylessCa {
  const root = caCertificate(name, undefined, opts.intermediate ? opts.intermediate.rootPathLength : 0, now);
  const issuing = opts.intermediate ? caCertificate(`${name} intermediate`, root, 0, now) : root;
  const chain = issuing === root ? [root] : [issuing, root];
  const ctLog = opts.ctLog ? generateKeyPairSync("ec", { namedCurve: "prime256v1" }) : undefined;
  const stranger = opts.ctLog ? generateKeyPairSync("ec", { namedCurve: "prime256v1" }) : undefined;
  const ctSpki = ctLog?.publicKey.export({ type: "spki", format: "der" });
  return {
    chainPem: chain.map((c) => c.pem).join(""),
    ...(ctLog
      ? {
          ctLogPublicKeyPem: ctLog.publicKey.export({ type: "spki", format: "pem" }).toString(),
          ctLogStart: new Date(root.cert.validFrom),
        }
      : {}),
    issue(req) {
      const spki = createPublicKey(req.publicKeyPem).export({ type: "spki", format: "der" });
      const san = req.subject.includes("://")
        ? implicit(6, Buffer.from(req.subject, "ascii"))
        : implicit(1, Buffer.from(req.subject, "ascii"));
      const which = req.issuerExtensions ?? "both";
      const body = {
        // Fulcio leaves the subject empty; the identity is the SAN, then critical (RFC 5280).
        subject: sequence(),
        issuer: subjectOf(issuing.cert),
        spki,
        signingKey: issuing.key,
        notBefore: req.notBefore,
        notAfter: req.notAfter,
        extensions: [
          extension("2.5.29.15", true, namedBits([KeyUsageBit.digitalSignature])),
          extension("2.5.29.37", false, sequence(oid(CODE_SIGNING))),
          extension("2.5.29.17", true, sequence(san)),
          ...(which !== "v2" ? [extension(FULCIO_ISSUER_V1, false, Buffer.from(req.issuer, "utf8"))] : []),
          ...(which !== "v1" ? [extension(FULCIO_ISSUER_V2, false, utf8String(req.issuer))] : []),
        ],
        serial: serialNumber(),
      };
      const kind = req.sct ?? "valid";
      if (!ctLog || !stranger || kind === "none") return signCertificate(body);
      // The precertificate (with the poison) goes to the log, which signs its TBS without the poison.
      const precert = new X509Certificate(
        signCertificate({
          ...body,
          extensions: [...body.extensions, extension(OID_CT_POISON, true, Buffer.from([5, 0]))],
        }),
      );
      const sct = signedCertificateTimestamp(
        kind === "unknown-log" ? stranger : ctLog,
        issuing.cert,
        tbsCertificate(body),
        precert.validFrom,
      );
      if (kind === "tampered") sct[sct.length - 5]! ^= 1;
      const list = Buffer.concat([u16(sct.length + 2), u16(sct.length), sct]);
      return signCertificate({
        ...body,
        extensions: [...body.extensions, extension(OID_SCT_LIST, false, octetString(list))],
      });
    },
    trustedRootJson() {
      return JSON.stringify({
        mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        tlogs: [],
        certificateAuthorities: [
          {
            subject: { organization: "platform-operator", commonName: name },
            uri: `https://${name.replace(/[^a-z0-9-]/gi, "-")}.invalid`,
            certChain: { certificates: chain.map((c) => ({ rawBytes: c.cert.raw.toString("base64") })) },
            validFor: { start: new Date(root.cert.validFrom).toISOString() },
          },
        ],
        ctlogs: ctSpki
          ? [
              {
                baseUrl: "https://ct.invalid",
                hashAlgorithm: "SHA2_256",
                publicKey: {
                  rawBytes: ctSpki.toString("base64"),
                  keyDetails: "PKIX_ECDSA_P256_SHA_256",
                  validFor: { start: new Date(root.cert.validFrom).toISOString() },
                },
                logId: { keyId: createHash("sha256").update(ctSpki).digest("base64") },
              },
            ]
          : [],
        timestampAuthorities: [],
      });
    },
  };
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};

/**
 * An SCT (RFC 6962 §3.2) the log with `log`'s key issues for a precertificate entry: version,
 * log ID (sha256 of its key), timestamp, no extensions, and its ECDSA/SHA-256 signature over
 * version, type, timestamp, entry type 1, the issuer's key hash, the TBS (u24 length) and the
 * extensions (u16 length). Written from the RFC, independently of the operator's checker.
 */
function signedCertificateTimestamp(
  log: { publicKey: KeyObject; privateKey: KeyObject },
  issuer: X509Certificate,
  tbs: Buffer,
  at: string,
): Buffer {
  const logId = createHash("sha256")
    .update(log.publicKey.export({ type: "spki", format: "der" }))
    .digest();
  const stamp = Buffer.alloc(8);
  stamp.writeBigUInt64BE(BigInt(Date.parse(at)));
  const tbsLength = Buffer.alloc(3);
  tbsLength.writeUIntBE(tbs.length, 0, 3);
  const issuerKeyHash = createHash("sha256")
    .update(issuer.publicKey.export({ type: "spki", format: "der" }))
    .digest();
  const signed = Buffer.concat([Buffer.from([0, 0]), stamp, u16(1), issuerKeyHash, tbsLength, tbs, u16(0)]);
  const signature = sign("sha256", signed, log.privateKey);
  return Buffer.concat([
    Buffer.from([0]),
    logId,
    stamp,
    u16(0),
    Buffer.from([4, 3]),
    u16(signature.length),
    signature,
  ]);
}
