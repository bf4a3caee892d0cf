/**
 * The generators that produce a unit of several keys (x509, sshHostKeys) or edit a document in place
 * (railsSecrets), planned against the Secret's stored data. A unit is made whole or not at all; what
 * can be derived from the part that exists (a certificate from its key, a `.pub` from its private
 * key) is derived; any other partial unit is reported and left as it is. A data-bearing unit that
 * status recorded as ready (the SSH host key pairs, each secrets.yml field) is reported when it is
 * gone, never generated again: new host keys or a new db_key_base would silently break clients and
 * the encrypted columns. Pure apart from the injected sources.
 */
import { createPrivateKey, type KeyObject } from "node:crypto";
import type { Generator } from "../../../apis/gitlabsecrets.js";
import { cryptoKeyPair, type Sources } from "./generate.js";
import { fillRailsSecrets } from "./rails.js";
import {
  opensshPrivateKey,
  privateKeyName,
  publicBlob,
  publicKeyLine,
  publicKeyName,
  publicKeyOf,
  RSA_BITS,
  SshHostKeyTypes,
} from "./ssh.js";
import { issueCertificate } from "./x509.js";

export interface UnitContext {
  sources: Sources;
  now: Date;
  /** Whether status recorded this data-bearing unit of the Secret as ready. */
  recorded: (unit: string) => boolean;
}

export interface UnitPlan {
  /** base64 per key: keys added, or secrets.yml rewritten with the fields it gained. */
  data: Record<string, string>;
  /** `<unit>: <why>` for each unit left as it is; never a value. */
  reports: string[];
  /** Data-bearing units that hold their data once the writes are done (recorded in status). */
  readyUnits: string[];
}

const decode = (present: Record<string, string>, key: string): string | undefined =>
  key in present ? Buffer.from(present[key]!, "base64").toString("utf8") : undefined;
const enc = (text: string): string => Buffer.from(text, "utf8").toString("base64");
const pkcs8 = (k: KeyObject): string => k.export({ type: "pkcs8", format: "pem" }).toString();

/** The status name of a secrets.yml field unit. */
export const railsUnit = (g: Generator, path: string): string => `${g.key}#${g.env}.${path}`;

async function x509(g: Generator, present: Record<string, string>, ctx: UnitContext): Promise<UnitPlan> {
  const out: UnitPlan = { data: {}, reports: [], readyUnits: [] };
  const certKey = g.certKey!;
  const keyKey = g.keyKey!;
  const keyText = decode(present, keyKey);
  const hasCert = certKey in present;
  if (hasCert && keyText !== undefined) return out;
  if (hasCert) {
    out.reports.push(`${certKey}/${keyKey}: the certificate is present without its key`);
    return out;
  }
  let key: KeyObject;
  if (keyText !== undefined) {
    try {
      key = createPrivateKey(keyText);
    } catch {
      out.reports.push(`${certKey}/${keyKey}: ${keyKey} is not a private key, no certificate can be derived`);
      return out;
    }
  } else {
    key = await (ctx.sources.keyPair ?? cryptoKeyPair)({ type: "rsa", bits: g.bits! });
    out.data[keyKey] = enc(pkcs8(key));
  }
  out.data[certKey] = enc(
    issueCertificate({
      subject: { commonName: g.commonName! },
      key,
      ca: true,
      notBefore: ctx.now,
      days: g.days!,
    }),
  );
  return out;
}

async function sshHostKeys(present: Record<string, string>, ctx: UnitContext): Promise<UnitPlan> {
  const out: UnitPlan = { data: {}, reports: [], readyUnits: [] };
  for (const t of SshHostKeyTypes) {
    const priv = privateKeyName(t);
    const pub = publicKeyName(t);
    const privText = decode(present, priv);
    if (privText !== undefined) {
      if (!(pub in present)) {
        try {
          out.data[pub] = enc(publicKeyOf(privText));
        } catch {
          out.reports.push(`${priv}: not a private key, its .pub cannot be derived`);
          continue;
        }
      }
      out.readyUnits.push(priv);
    } else if (pub in present) out.reports.push(`${priv}: only the public key is present`);
    else if (ctx.recorded(priv))
      out.reports.push(`${priv}: the host key pair recorded ready is gone; not generated again`);
    else {
      const key = await (ctx.sources.keyPair ?? cryptoKeyPair)(
        t === "rsa" ? { type: "rsa", bits: RSA_BITS } : { type: t },
      );
      out.data[priv] = enc(opensshPrivateKey(key));
      out.data[pub] = enc(publicKeyLine(publicBlob(key)));
      out.readyUnits.push(priv);
    }
  }
  return out;
}

async function railsSecrets(
  g: Generator,
  present: Record<string, string>,
  ctx: UnitContext,
): Promise<UnitPlan> {
  const out: UnitPlan = { data: {}, reports: [], readyUnits: [] };
  const fill = await fillRailsSecrets(g, decode(present, g.key!), ctx.sources, (path) =>
    ctx.recorded(railsUnit(g, path)),
  );
  if (fill.report) out.reports.push(`${g.key}: ${fill.report}; left as it is`);
  for (const f of fill.lost)
    out.reports.push(`${railsUnit(g, f)}: recorded ready, now absent or empty; not generated again`);
  if (fill.text !== undefined) out.data[g.key!] = enc(fill.text);
  out.readyUnits.push(...fill.present.map((p) => railsUnit(g, p)));
  return out;
}

/** Plans one multi-key generator against the Secret's stored data (base64 per key). */
export function planUnit(g: Generator, present: Record<string, string>, ctx: UnitContext): Promise<UnitPlan> {
  switch (g.type) {
    case "x509":
      return x509(g, present, ctx);
    case "sshHostKeys":
      return sshHostKeys(present, ctx);
    case "railsSecrets":
      return railsSecrets(g, present, ctx);
    default:
      throw new Error(`generator type ${g.type} is not a unit`);
  }
}

/** The data-bearing units a generator declares (status names), recorded ones kept while declared. */
export function declaredUnits(g: Generator): string[] {
  if (g.type === "sshHostKeys") return SshHostKeyTypes.map((t) => privateKeyName(t));
  if (g.type === "railsSecrets") return (g.fields ?? []).map((f) => railsUnit(g, f.path));
  return [];
}

/** The keys a unit generator may write, for overlap checks: a key generated twice is refused. */
export function unitKeys(g: Generator): string[] {
  if (g.type === "x509") return [g.certKey!, g.keyKey!];
  if (g.type === "sshHostKeys") return SshHostKeyTypes.flatMap((t) => [privateKeyName(t), publicKeyName(t)]);
  return g.key !== undefined ? [g.key] : [];
}
