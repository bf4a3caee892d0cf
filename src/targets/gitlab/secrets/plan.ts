/**
 * What one GitLabSecrets pass writes, decided from the spec and the Secrets as read (pure, with the
 * sources of random values and RSA keys injected; async only because key generation is). fill-missing, as GitLab's contract for the resource says: a missing
 * Secret is created with every key; a missing key is added to an existing Secret; a key that exists
 * keeps its bytes, even empty; no key is removed and no Secret's type changes. No owner reference
 * is set: deleting the resource must not take the values (db_key_base) with it.
 */
import type { GitLabSecretsSpec } from "../../../apis/gitlabsecrets.js";
import {
  type GeneratorType,
  GitLabSecretsReason,
  type GitLabSecretsReasonType,
  ImplementedGeneratorTypes,
  RandomCharsets,
  RandomEncodings,
  RandomWraps,
} from "../../../apis/gitlabsecrets-names.js";
import { certificateUnit, planCertificateSet } from "./certset.js";
import { generateValue, type Sources } from "./generate.js";
import { declaredUnits, planUnit, unitKeys } from "./units.js";

/** A Secret as read: its data as the API holds it (base64 per key). */
export interface ObservedSecret {
  resourceVersion?: string;
  type?: string;
  labels?: Record<string, string>;
  data?: Record<string, string>;
}

export type SecretWrite =
  | {
      op: "create";
      name: string;
      type: string;
      labels: Record<string, string>;
      /** base64 per key, as the API takes it. */
      data: Record<string, string>;
    }
  | {
      op: "patch";
      name: string;
      /** The read's version: the patch fails (conflict) when the Secret changed since. */
      resourceVersion: string;
      /** Only the labels that are absent or differ. */
      labels: Record<string, string>;
      /** The keys that were absent, and a secrets.yml that gained fields (its other content kept). */
      data: Record<string, string>;
    };

export interface SecretsPlan {
  /** Bad input: nothing is written, the message names the field. */
  invalid?: string;
  writes: SecretWrite[];
  /**
   * Per declared Secret: whether it holds every declared key once the writes are done, and the
   * data-bearing units (SSH host key pairs, secrets.yml fields) that then hold their data.
   */
  statuses: SecretStatus[];
  /** Units left as they are (`<Secret>: <unit>: <why>`), never naming a value. */
  reports: string[];
  /** Entries (or spec.certificates) not produced, each naming the generator type refused. */
  refused: string[];
  reason: GitLabSecretsReasonType;
  message: string;
}

export interface SecretStatus {
  name: string;
  ready: boolean;
  readyUnits?: string[];
}

const DEFAULT_SECRET_TYPE = "Opaque";
const TLS_SECRET_TYPE = "kubernetes.io/tls";
const UNIT_TYPES: readonly GeneratorType[] = ["x509", "sshHostKeys", "railsSecrets"];

/** The first problem with an implemented generator's fields, naming the field; undefined when none. */
function fieldProblem(g: Record<string, unknown>, at: string): string | undefined {
  const need = (f: string) =>
    g[f] === undefined ? `${at}.${f}: required for a ${String(g["type"])} generator` : undefined;
  const oneOf = (f: string, allowed: readonly string[]) =>
    g[f] !== undefined && !allowed.includes(String(g[f]))
      ? `${at}.${f}: "${String(g[f])}" is not one of ${allowed.join(", ")}`
      : undefined;
  const positive = (f: string) =>
    g[f] !== undefined && !(Number.isInteger(g[f]) && (g[f] as number) > 0)
      ? `${at}.${f}: must be a positive integer`
      : undefined;
  switch (g["type"]) {
    case "random":
      return (
        need("key") ??
        need("charset") ??
        need("length") ??
        oneOf("charset", RandomCharsets) ??
        positive("length") ??
        oneOf("encoding", RandomEncodings) ??
        oneOf("wrap", RandomWraps)
      );
    case "bytes":
      return (
        need("key") ??
        need("length") ??
        need("encoding") ??
        positive("length") ??
        oneOf("encoding", ["raw", "base64"])
      );
    case "static":
      return (
        need("key") ??
        need("value") ??
        (typeof g["value"] === "string" ? undefined : `${at}.value: must be a string`)
      );
    case "rsa":
      return (
        need("key") ??
        need("bits") ??
        (Number.isInteger(g["bits"]) && (g["bits"] as number) >= 1024
          ? undefined
          : `${at}.bits: must be an integer of at least 1024`)
      );
    case "x509":
      return (
        need("commonName") ??
        need("bits") ??
        need("days") ??
        need("certKey") ??
        need("keyKey") ??
        (Number.isInteger(g["bits"]) && (g["bits"] as number) >= 1024
          ? undefined
          : `${at}.bits: must be an integer of at least 1024`) ??
        positive("days") ??
        (g["certKey"] === g["keyKey"] ? `${at}.keyKey: must differ from certKey` : undefined)
      );
    case "railsSecrets":
      return need("key") ?? need("env") ?? need("fields") ?? railsFieldsProblem(g["fields"], at);
    default:
      return undefined;
  }
}

/** Each secrets.yml field needs what its shape generates: charset and length, or bits. */
function railsFieldsProblem(fields: unknown, at: string): string | undefined {
  if (!Array.isArray(fields) || fields.length === 0) return `${at}.fields: at least one field is required`;
  const seen = new Set<string>();
  for (const [i, f] of (fields as Record<string, unknown>[]).entries()) {
    const fat = `${at}.fields[${i}]`;
    if (typeof f["path"] !== "string" || !f["path"]) return `${fat}.path: required`;
    if (seen.has(f["path"])) return `${fat}.path: "${f["path"]}" is declared twice`;
    seen.add(f["path"]);
    if (f["shape"] === "pem") {
      if (!(Number.isInteger(f["bits"]) && (f["bits"] as number) >= 1024))
        return `${fat}.bits: a pem field needs bits, an integer of at least 1024`;
    } else if (f["shape"] === "scalar" || f["shape"] === "list") {
      if (!RandomCharsets.includes(f["charset"] as never))
        return `${fat}.charset: a ${f["shape"]} field needs one of ${RandomCharsets.join(", ")}`;
      if (!(Number.isInteger(f["length"]) && (f["length"] as number) > 0))
        return `${fat}.length: a ${f["shape"]} field needs a positive integer`;
    } else return `${fat}.shape: "${String(f["shape"])}" is not one of scalar, pem, list`;
  }
  return undefined;
}

/** Structure and fields of the spec; the definition refuses all of this already, offline input may not. */
export function validateSpec(spec: GitLabSecretsSpec | undefined): string | undefined {
  const seen = new Set<string>();
  for (const [i, s] of (spec?.secrets ?? []).entries()) {
    const at = `spec.secrets[${i}]`;
    if (!s.name) return `${at}.name: required`;
    if (seen.has(s.name)) return `${at}.name: "${s.name}" is declared twice`;
    seen.add(s.name);
    if (!s.generators?.length) return `${at}.generators: at least one generator is required`;
    const keys = new Set<string>();
    for (const [j, g] of s.generators.entries()) {
      const gat = `${at}.generators[${j}]`;
      if (!g.type) return `${gat}.type: required`;
      const problem = fieldProblem(g as Record<string, unknown>, gat);
      if (problem) return problem;
      for (const k of UNIT_TYPES.includes(g.type) ? unitKeys(g) : g.key !== undefined ? [g.key] : []) {
        if (keys.has(k))
          return UNIT_TYPES.includes(g.type)
            ? `${gat}: key "${k}" is generated twice in Secret ${s.name}`
            : `${gat}.key: "${k}" is generated twice in Secret ${s.name}`;
        keys.add(k);
      }
    }
  }
  for (const [i, c] of (spec?.certificates ?? []).entries())
    for (const f of ["tlsSecret", "caSecret", "chainSecret"] as const) {
      const at = `spec.certificates[${i}].${f}`;
      if (!c[f]) return `${at}: required`;
      if (seen.has(c[f])) return `${at}: Secret "${c[f]}" is declared twice`;
      seen.add(c[f]);
    }
  return undefined;
}

const implemented = (t: GeneratorType) => ImplementedGeneratorTypes.includes(t);

/**
 * The writes that make every declared Secret hold every declared key, and the status they lead to.
 * `labels` are the resource's own, carried onto every declared Secret it can produce; `recorded`
 * the data-bearing units status recorded ready per Secret (such a unit, once gone, is reported).
 */
export async function planSecrets(input: {
  spec: GitLabSecretsSpec | undefined;
  labels: Record<string, string>;
  observed: ReadonlyMap<string, ObservedSecret | undefined>;
  sources: Sources;
  recorded?: ReadonlyMap<string, readonly string[]>;
  now?: Date;
}): Promise<SecretsPlan> {
  const invalid = validateSpec(input.spec);
  if (invalid)
    return {
      invalid,
      writes: [],
      statuses: [],
      refused: [],
      reports: [],
      reason: GitLabSecretsReason.InvalidSpec,
      message: `spec refused, nothing written: ${invalid}`,
    };
  const now = input.now ?? new Date();
  const writes: SecretWrite[] = [];
  const statuses: SecretStatus[] = [];
  const refused: string[] = [];
  const reports: string[] = [];
  /** A create with every key, or a patch with the keys and labels the live Secret lacks. */
  const pushWrite = (name: string, type: string, data: Record<string, string>) => {
    const live = input.observed.get(name);
    if (!live) {
      writes.push({ op: "create", name, type, labels: { ...input.labels }, data });
      return;
    }
    const labels = Object.fromEntries(
      Object.entries(input.labels).filter(([k, v]) => live.labels?.[k] !== v),
    );
    if (Object.keys(data).length || Object.keys(labels).length)
      writes.push({ op: "patch", name, resourceVersion: live.resourceVersion ?? "", labels, data });
  };
  for (const s of input.spec?.secrets ?? []) {
    const notImplemented = [...new Set(s.generators.map((g) => g.type).filter((t) => !implemented(t)))];
    if (notImplemented.length) {
      // A unit is made whole or not at all: no Secret with some of its keys generated here.
      refused.push(`${s.name} (generator type ${notImplemented.join(", ")})`);
      statuses.push({ name: s.name, ready: false });
      continue;
    }
    const live = input.observed.get(s.name);
    const present = live?.data ?? {};
    const recorded = new Set(input.recorded?.get(s.name) ?? []);
    const data: Record<string, string> = {};
    const readyUnits: string[] = [];
    let reported = false;
    for (const g of s.generators) {
      if (UNIT_TYPES.includes(g.type)) {
        const u = await planUnit(g, present, {
          sources: input.sources,
          now,
          recorded: (x) => recorded.has(x),
        });
        Object.assign(data, u.data);
        readyUnits.push(...u.readyUnits);
        reports.push(...u.reports.map((r) => `${s.name}: ${r}`));
        reported ||= u.reports.length > 0;
      } else if (!(g.key! in present))
        data[g.key!] = (await generateValue(g, input.sources)).toString("base64");
    }
    pushWrite(s.name, s.type ?? DEFAULT_SECRET_TYPE, data);
    // A unit once recorded stays recorded while declared, gone or not: that is what keeps it from
    // being generated again on a later pass.
    const declared = s.generators.flatMap(declaredUnits);
    const units = [
      ...declared.filter((u) => readyUnits.includes(u) || recorded.has(u)),
      ...readyUnits.filter((u) => !declared.includes(u)),
    ];
    statuses.push({ name: s.name, ready: !reported, ...(units.length ? { readyUnits: units } : {}) });
  }
  for (const c of input.spec?.certificates ?? []) {
    const unit = certificateUnit(c);
    const recordedSet = (input.recorded?.get(c.tlsSecret) ?? []).includes(unit);
    const set = await planCertificateSet(c, (n) => input.observed.get(n)?.data ?? {}, {
      sources: input.sources,
      now,
      recorded: recordedSet,
    });
    reports.push(...set.reports);
    for (const [name, type] of [
      [c.tlsSecret, TLS_SECRET_TYPE],
      [c.caSecret, DEFAULT_SECRET_TYPE],
      [c.chainSecret, DEFAULT_SECRET_TYPE],
    ] as const) {
      pushWrite(name, type, set.data.get(name) ?? {});
      const keep = name === c.tlsSecret && (set.ready || recordedSet);
      statuses.push({ name, ready: set.ready, ...(keep ? { readyUnits: [unit] } : {}) });
    }
  }
  const base = { writes, statuses, refused, reports };
  if (reports.length)
    return {
      ...base,
      reason: GitLabSecretsReason.SecretsReported,
      message:
        `left as they are, reported: ${reports.join("; ")}` +
        (refused.length ? `; not generated, not implemented by this operator: ${refused.join("; ")}` : "") +
        "; the other Secrets are filled in",
    };
  if (refused.length)
    return {
      ...base,
      reason: GitLabSecretsReason.GeneratorNotImplemented,
      message: `not generated, not implemented by this operator: ${refused.join("; ")}; the other Secrets are filled in`,
    };
  return {
    ...base,
    reason: GitLabSecretsReason.SecretsReady,
    message: `${statuses.length} Secret(s) hold every declared key`,
  };
}

/** Key names a write adds (never values), for the event. */
export function describeWrite(w: SecretWrite): string {
  const keys = Object.keys(w.data);
  if (w.op === "create") return `created ${w.name} (${keys.join(", ") || "no keys"})`;
  return keys.length ? `added ${keys.join(", ")} to ${w.name}` : `labelled ${w.name}`;
}
