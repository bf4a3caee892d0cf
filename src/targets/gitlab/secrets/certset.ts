/**
 * A certificate set of spec.certificates, as the chart's self-signed certificate Job (cfssl) makes
 * it: an authority from `authority`, a wildcard certificate for `domain` signed by it, and three
 * Secrets — `tlsSecret` (kubernetes.io/tls: tls.crt, tls.key), `caSecret` (the authority's
 * certificate under caKey), `chainSecret` (wildcard and authority certificates concatenated under
 * chainKey). The set is generated whole; a missing chain is derived from the other two; any other
 * partial set is reported (the authority's key is never stored, so nothing can be signed again).
 * The set is data-bearing: once recorded ready, a set that is gone is reported, never reissued
 * (clients trust that authority). Nothing is renewed, as the Job never renews. Pure apart from the
 * injected sources.
 */
import type { KeyObject } from "node:crypto";
import type { GitLabSecretsSpec } from "../../../apis/gitlabsecrets.js";
import { cryptoKeyPair, type Sources } from "./generate.js";
import { issueCertificate } from "./x509.js";

type Certificate = NonNullable<GitLabSecretsSpec["certificates"]>[number];

export const TLS_CERT = "tls.crt";
export const TLS_KEY = "tls.key";
const DEFAULT_DAYS = 3650;
const DEFAULT_RSA = 4096;

/** The status name of a set (recorded on its tlsSecret). */
export const certificateUnit = (c: Certificate): string => `certificates/${c.domain}`;

/** Days of `expiry` (`3650d` or hours, `87600h`), else caDays, else ten years. */
export function authorityDays(c: Certificate): number {
  const m = /^(\d+)(d|h)$/.exec(c.authority.expiry ?? "");
  if (m) return m[2] === "d" ? Number(m[1]) : Math.max(1, Math.floor(Number(m[1]) / 24));
  return c.caDays ?? DEFAULT_DAYS;
}

export interface CertificateSetPlan {
  /** base64 per key, per Secret name. */
  data: Map<string, Record<string, string>>;
  reports: string[];
  ready: boolean;
}

const enc = (t: string) => Buffer.from(t, "utf8").toString("base64");
const dec = (b: string | undefined) =>
  b === undefined ? undefined : Buffer.from(b, "base64").toString("utf8");

export async function planCertificateSet(
  c: Certificate,
  present: (secret: string) => Record<string, string>,
  o: { sources: Sources; now: Date; recorded: boolean },
): Promise<CertificateSetPlan> {
  const tls = present(c.tlsSecret);
  const ca = present(c.caSecret);
  const chain = present(c.chainSecret);
  const unit = certificateUnit(c);
  const has = { tls: TLS_CERT in tls && TLS_KEY in tls, ca: c.caKey in ca, chain: c.chainKey in chain };
  const out: CertificateSetPlan = { data: new Map(), reports: [], ready: false };
  if (has.tls && has.ca && has.chain) return { ...out, ready: true };
  if (has.tls && has.ca) {
    out.data.set(c.chainSecret, {
      [c.chainKey]: enc(`${dec(tls[TLS_CERT])!.trimEnd()}\n${dec(ca[c.caKey])!.trimEnd()}\n`),
    });
    return { ...out, ready: true };
  }
  const none = !(TLS_CERT in tls) && !(TLS_KEY in tls) && !has.ca && !has.chain;
  if (!none) {
    out.reports.push(
      `${unit}: part of the set is present (${c.tlsSecret}, ${c.caSecret}, ${c.chainSecret}); the authority's key is not kept, nothing can be derived`,
    );
    return out;
  }
  if (o.recorded) {
    out.reports.push(`${unit}: the certificate set recorded ready is gone; not issued again`);
    return out;
  }
  const keyPair = o.sources.keyPair ?? cryptoKeyPair;
  const ecdsa = c.authority.algorithm === "ecdsa";
  const newKey = (): Promise<KeyObject> =>
    ecdsa ? keyPair({ type: "ecdsa" }) : keyPair({ type: "rsa", bits: c.authority.keySize ?? DEFAULT_RSA });
  const caKey = await newKey();
  const caPem = issueCertificate({
    subject: {
      commonName: c.authority.commonName ?? "GitLab Helm Chart",
      ...(c.authority.organization ? { organization: c.authority.organization } : {}),
      ...(c.authority.organizationalUnit ? { organizationalUnit: c.authority.organizationalUnit } : {}),
    },
    key: caKey,
    ca: true,
    notBefore: o.now,
    days: authorityDays(c),
  });
  const leafKey = await newKey();
  const leafPem = issueCertificate({
    subject: { commonName: `*.${c.domain}` },
    key: leafKey,
    issuer: { certPem: caPem, key: caKey },
    ca: false,
    dnsNames: [`*.${c.domain}`, c.domain],
    notBefore: o.now,
    days: c.certDays ?? authorityDays(c),
  });
  out.data.set(c.tlsSecret, {
    [TLS_CERT]: enc(leafPem),
    [TLS_KEY]: enc(leafKey.export({ type: "pkcs8", format: "pem" }).toString()),
  });
  out.data.set(c.caSecret, { [c.caKey]: enc(caPem) });
  out.data.set(c.chainSecret, { [c.chainKey]: enc(`${leafPem}${caPem}`) });
  return { ...out, ready: true };
}
