import type { SignerIdentity } from "./certificate-fields.js";

/**
 * The signer a keyless check accepts, as upstream reads it from a verification block: issuer and
 * subject matched exactly, or issuerRegExp and subjectRegExp matched as patterns. Upstream takes a
 * pair, not a mix, and the exact pair when both are set. A pattern matches anywhere in the value,
 * as cosign's (Go's MatchString) does: anchor it with ^…$ to match a whole value. Pure.
 */

export type IdentityPolicy =
  | { kind: "exact"; issuer: string; subject: string }
  | { kind: "pattern"; issuer: RegExp; subject: RegExp; issuerText: string; subjectText: string };

export interface IdentityFields {
  issuer?: string;
  subject?: string;
  issuerRegExp?: string;
  subjectRegExp?: string;
}

// Go's RE2 has no lookaround or backreferences; a pattern using them would mean something else
// to the signer's cosign than here, so it is refused rather than read differently.
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]|\\k</;

function compile(pattern: string, field: string): RegExp {
  if (NOT_RE2.test(pattern))
    throw new Error(`${field} uses lookaround or a backreference, which cosign's RE2 syntax does not have`);
  try {
    return new RegExp(pattern);
  } catch (e) {
    throw new Error(`${field} is not a valid regular expression: ${(e as Error).message}`);
  }
}

/** The policy the fields ask for; undefined when they name no complete pair. Throws on a bad pattern. */
export function identityPolicy(f: IdentityFields, field: string): IdentityPolicy | undefined {
  if (f.issuer && f.subject) return { kind: "exact", issuer: f.issuer, subject: f.subject };
  if (f.issuerRegExp && f.subjectRegExp)
    return {
      kind: "pattern",
      issuer: compile(f.issuerRegExp, `${field}.issuerRegExp`),
      subject: compile(f.subjectRegExp, `${field}.subjectRegExp`),
      issuerText: f.issuerRegExp,
      subjectText: f.subjectRegExp,
    };
  return undefined;
}

/** Why the certificate's signer is not the accepted one; undefined when it is. */
export function identityMismatch(p: IdentityPolicy, who: SignerIdentity, field: string): string | undefined {
  const issuer = who.issuer;
  if (issuer === undefined) return "the certificate names no OIDC issuer (no Fulcio issuer extension)";
  if (p.kind === "exact" ? issuer !== p.issuer : !p.issuer.test(issuer))
    return p.kind === "exact"
      ? `the certificate's OIDC issuer ${JSON.stringify(issuer)} is not ${field}.issuer ${JSON.stringify(p.issuer)}`
      : `the certificate's OIDC issuer ${JSON.stringify(issuer)} does not match ${field}.issuerRegExp ${JSON.stringify(p.issuerText)}`;
  const ok = who.subjects.some((s) => (p.kind === "exact" ? s === p.subject : p.subject.test(s)));
  if (ok) return undefined;
  const names = who.subjects.length ? who.subjects.map((s) => JSON.stringify(s)).join(", ") : "none";
  return p.kind === "exact"
    ? `the certificate's subject (${names}) is not ${field}.subject ${JSON.stringify(p.subject)}`
    : `the certificate's subject (${names}) does not match ${field}.subjectRegExp ${JSON.stringify(p.subjectText)}`;
}
