import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import { extension, KeyUsageBit, signCertificate, subjectOf } from "../../src/runtime/pki/certificate.js";
import { implicit, namedBits, oid, sequence, utf8String } from "../../src/runtime/pki/der.js";
import { createCertificateAuthority, type KeyPairPem } from "../../src/runtime/pki/x509.js";

/**
 * A private CA in Fulcio's role, for keyless image verification offline: it certifies a signer's
 * public key for a short time with the identity an OIDC token would have given (the issuer in
 * Fulcio's extensions, the subject as the SAN), and describes itself as a Sigstore trusted root
 * (`trusted_root.json`), the form the operator is given its trust root in. Real cosign signs with
 * such a certificate (`--certificate`, `--certificate-chain`) and its own key; no Fulcio, Rekor or
 * CT log exists, so nothing here has an SCT or a transparency-log entry.
 */

/** Fulcio's certificate extensions: the OIDC issuer, legacy (raw string) and v2 (DER UTF8String). */
export const FULCIO_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1";
export const FULCIO_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8";
const CODE_SIGNING = "1.3.6.1.5.5.7.3.3";

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

export interface KeylessCa {
  ca: KeyPairPem;
  /** The CA certificate, what `cosign verify --certificate-chain` is given. */
  rootPem: string;
  /** Issues a code-signing certificate for the signer's key. */
  issue(req: SignerCertificateRequest): string;
  /** The CA as a Sigstore trusted root: one certificate authority, no logs. */
  trustedRootJson(): string;
}

const derOf = (pem: string): Buffer => new X509Certificate(pem).raw;

/**
 * A CA valid from a day before `now` to two days after: cosign checks a certificate's chain at the
 * certificate's own notBefore when it signs, so an already expired signing certificate (issued
 * yesterday) still gets signed with, and the verifier is what must refuse it.
 */
export function createKeylessCa(name: string, now = new Date()): KeylessCa {
  const ca = createCertificateAuthority(name, new Date(now.getTime() - 24 * 3600_000), 3 * 24 * 3600_000);
  const caCert = new X509Certificate(ca.certPem);
  const caKey = createPrivateKey(ca.keyPem);
  return {
    ca,
    rootPem: ca.certPem,
    issue(req) {
      const spki = createPublicKey(req.publicKeyPem).export({ type: "spki", format: "der" });
      const san = req.subject.includes("://")
        ? implicit(6, Buffer.from(req.subject, "ascii"))
        : implicit(1, Buffer.from(req.subject, "ascii"));
      const which = req.issuerExtensions ?? "both";
      return signCertificate({
        // Fulcio leaves the subject empty; the identity is the SAN, then critical (RFC 5280).
        subject: sequence(),
        issuer: subjectOf(caCert),
        spki,
        signingKey: caKey,
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
            uri: `https://${name}.invalid`,
            certChain: { certificates: [{ rawBytes: derOf(ca.certPem).toString("base64") }] },
            validFor: { start: new Date(caCert.validFrom).toISOString() },
          },
        ],
        ctlogs: [],
        timestampAuthorities: [],
      });
    },
  };
}
