import { X509Certificate } from "node:crypto";
import { isoTime } from "../../../runtime/utc-time.js";
import { pathLengthLimit, signerIdentity } from "./certificate-fields.js";
import { type IdentityPolicy, identityMismatch } from "./identity.js";
import { sctProblem } from "./sct.js";
import { verifiesWith } from "./signature.js";
import type { CertificateAuthority, TrustRoot } from "./trust-root.js";

/**
 * One keyless signature checked the way cosign checks it without a transparency log: the signing
 * certificate chains to a certificate authority of the trust root (each link's signature, the
 * issuer being a CA, every certificate and the authority's range valid when the certificate was
 * issued), it is a code-signing certificate valid when the signature was made — when a verified
 * transparency-log entry says it was logged (`signedAt`), which is how a short-lived certificate is
 * accepted after it expired; with no log entry there is no signing time but the present, as cosign's
 * `--insecure-ignore-tlog` has it — its OIDC issuer and subject
 * are the accepted ones, and the signature over the payload verifies with its key. Only the trust
 * root's certificates anchor a chain: the chain a signer attaches is not trusted. Path-length
 * constraints are kept as Go's x509 keeps them; other critical extensions are not looked at. When the
 * trust root lists CT logs, the certificate must carry an SCT one of them signed (sct.ts). Pure.
 */

const CODE_SIGNING = "1.3.6.1.5.5.7.3.3";
const MAX_DEPTH = 5;

export interface KeylessCheck {
  policy: IdentityPolicy;
  trustRoot: TrustRoot;
  /** The spec path the settings come from, for messages. */
  field: string;
  now: number;
  /** When a verified transparency-log entry says the signature was logged (ms). */
  signedAt?: number;
}

/** `notAfter`: until when the verdict holds (the certificate's end, or forever when it was logged in time). */
export type KeylessVerdict = { ok: true; notAfter: number } | { ok: false; why: string };

const validAt = (c: X509Certificate, t: number) => Date.parse(c.validFrom) <= t && t <= Date.parse(c.validTo);
const selfSigned = (c: X509Certificate) => c.checkIssued(c) && c.verify(c.publicKey);

/** The trust root's CA certificate that issued `cert` (its signature verifies with its key). */
function issuerOf(cert: X509Certificate, root: TrustRoot): X509Certificate | undefined {
  return root.authorities
    .flatMap((a) => a.certificates)
    .find((c) => c.ca && cert.checkIssued(c) && cert.verify(c.publicKey));
}

/** Why the certificate does not chain to the trust root at `t`; undefined when it does. */
function chainProblem(leaf: X509Certificate, root: TrustRoot, t: number): string | undefined {
  const pool = root.authorities.flatMap((a: CertificateAuthority) =>
    a.certificates.map((cert) => ({ cert, a })),
  );
  let current = leaf;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const parent = pool.find(
      (p) => p.cert.ca && current.checkIssued(p.cert) && current.verify(p.cert.publicKey),
    );
    if (!parent) return "the certificate does not chain to a certificate authority of the trusted root";
    const { cert, a } = parent;
    // `depth` CA certificates stand between this one and the leaf: its pathLenConstraint must allow them.
    const limit = pathLengthLimit(cert);
    if (limit !== undefined && depth > limit)
      return `the chain to the trusted root is longer than its CA certificate ${cert.subject.replace(/\n/g, ", ")} allows (pathLenConstraint ${limit})`;
    if (!validAt(cert, t))
      return `the trusted root's CA certificate ${cert.subject.replace(/\n/g, ", ")} was not valid when the certificate was issued`;
    if ((a.validFrom !== undefined && t < a.validFrom) || (a.validTo !== undefined && t > a.validTo))
      return "the certificate was issued outside its certificate authority's validFor range in the trusted root";
    if (selfSigned(cert)) return undefined;
    current = cert;
  }
  return "the certificate's chain to the trusted root is too long";
}

export function checkKeyless(
  certificatePem: string | undefined,
  payload: Buffer,
  signature: Buffer,
  c: KeylessCheck,
): KeylessVerdict {
  if (!certificatePem)
    return { ok: false, why: "the signature carries no certificate (signed with a key, not keylessly)" };
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certificatePem);
  } catch {
    return { ok: false, why: "the signature's certificate is not a PEM X.509 certificate" };
  }
  const issued = Date.parse(cert.validFrom);
  let chain: string | undefined;
  try {
    chain = chainProblem(cert, c.trustRoot, issued);
  } catch (e) {
    chain = `a certificate of the chain could not be read: ${(e as Error).message}`;
  }
  if (chain) return { ok: false, why: chain };
  // A root listing CT logs asks for proof the certificate was logged: an SCT, as cosign checks by default.
  if (c.trustRoot.ctLogs.length > 0) {
    const issuer = issuerOf(cert, c.trustRoot);
    const sct = issuer
      ? sctProblem(cert, issuer, c.trustRoot.ctLogs)
      : "the certificate's issuer is not in the trusted root";
    if (sct) return { ok: false, why: sct };
  }
  const notAfter = Date.parse(cert.validTo);
  if (c.signedAt !== undefined) {
    const at = isoTime(c.signedAt);
    if (c.signedAt > notAfter)
      return {
        ok: false,
        why: `certificate expired before signatures were entered in log: ${isoTime(notAfter)} is before ${at}`,
      };
    if (c.signedAt < issued)
      return {
        ok: false,
        why: `certificate was issued after signatures were entered in log: ${isoTime(issued)} is after ${at}`,
      };
  } else {
    if (c.now > notAfter) return { ok: false, why: `the certificate expired at ${cert.validTo}` };
    if (c.now < issued) return { ok: false, why: `the certificate is not valid before ${cert.validFrom}` };
  }
  const usages = cert.keyUsage;
  if (Array.isArray(usages) && usages.length > 0 && !usages.includes(CODE_SIGNING))
    return { ok: false, why: "the certificate is not for code signing (no codeSigning extended key usage)" };
  let who: ReturnType<typeof signerIdentity>;
  try {
    who = signerIdentity(cert);
  } catch (e) {
    return { ok: false, why: `the certificate could not be read: ${(e as Error).message}` };
  }
  const mismatch = identityMismatch(c.policy, who, c.field);
  if (mismatch) return { ok: false, why: mismatch };
  if (!verifiesWith(cert.publicKey, payload, signature))
    return { ok: false, why: "the signature does not verify with the certificate's key" };
  return { ok: true, notAfter: c.signedAt !== undefined ? Infinity : notAfter };
}
