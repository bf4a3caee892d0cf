import { createPublicKey, generateKeyPairSync, type KeyObject, X509Certificate } from "node:crypto";
import {
  distinguishedName,
  extension,
  KeyUsageBit,
  signCertificate,
  subjectOf,
} from "../../src/runtime/pki/certificate.js";
import {
  boolean,
  implicit,
  namedBits,
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
 * CT log exists, so nothing here has an SCT or a transparency-log entry. Like Fulcio's, the CA may
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
}

export interface KeylessCaOptions {
  /**
   * Issue through an intermediate CA under a root whose basicConstraints allow `rootPathLength`
   * CAs below it (0 makes the intermediate, and every chain through it, invalid).
   */
  intermediate?: { rootPathLength: number };
}

export interface KeylessCa {
  /** The issuing CA's certificate first, the root last: `cosign sign/verify --certificate-chain`. */
  chainPem: string;
  /** Issues a code-signing certificate for the signer's key. */
  issue(req: SignerCertificateRequest): string;
  /** The CA as a Sigstore trusted root: one certificate authority, its chain, no logs. */
  trustedRootJson(): string;
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
  return {
    chainPem: chain.map((c) => c.pem).join(""),
    issue(req) {
      const spki = createPublicKey(req.publicKeyPem).export({ type: "spki", format: "der" });
      const san = req.subject.includes("://")
        ? implicit(6, Buffer.from(req.subject, "ascii"))
        : implicit(1, Buffer.from(req.subject, "ascii"));
      const which = req.issuerExtensions ?? "both";
      return signCertificate({
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
        ctlogs: [],
        timestampAuthorities: [],
      });
    },
  };
}
