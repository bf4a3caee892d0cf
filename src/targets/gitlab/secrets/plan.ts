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
import { generateValue, type Sources } from "./generate.js";

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
      /** Only the keys that were absent. */
      data: Record<string, string>;
    };

export interface SecretsPlan {
  /** Bad input: nothing is written, the message names the field. */
  invalid?: string;
  writes: SecretWrite[];
  /** Per declared Secret: whether it holds every declared key once the writes are done. */
  statuses: { name: string; ready: boolean }[];
  /** Entries (or spec.certificates) not produced, each naming the generator type refused. */
  refused: string[];
  reason: GitLabSecretsReasonType;
  message: string;
}

const DEFAULT_SECRET_TYPE = "Opaque";

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
    default:
      return undefined;
  }
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
      if (g.key !== undefined) {
        if (keys.has(g.key)) return `${gat}.key: "${g.key}" is generated twice in Secret ${s.name}`;
        keys.add(g.key);
      }
    }
  }
  return undefined;
}

const implemented = (t: GeneratorType) => ImplementedGeneratorTypes.includes(t);

/**
 * The writes that make every declared Secret hold every declared key, and the status they lead to.
 * `labels` are the resource's own, carried onto every declared Secret it can produce.
 */
export async function planSecrets(input: {
  spec: GitLabSecretsSpec | undefined;
  labels: Record<string, string>;
  observed: ReadonlyMap<string, ObservedSecret | undefined>;
  sources: Sources;
}): Promise<SecretsPlan> {
  const invalid = validateSpec(input.spec);
  if (invalid)
    return {
      invalid,
      writes: [],
      statuses: [],
      refused: [],
      reason: GitLabSecretsReason.InvalidSpec,
      message: `spec refused, nothing written: ${invalid}`,
    };
  const writes: SecretWrite[] = [];
  const statuses: SecretsPlan["statuses"] = [];
  const refused: string[] = [];
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
    const data: Record<string, string> = {};
    for (const g of s.generators)
      if (!(g.key! in present)) data[g.key!] = (await generateValue(g, input.sources)).toString("base64");
    if (!live) {
      writes.push({
        op: "create",
        name: s.name,
        type: s.type ?? DEFAULT_SECRET_TYPE,
        labels: { ...input.labels },
        data,
      });
    } else {
      const labels = Object.fromEntries(
        Object.entries(input.labels).filter(([k, v]) => live.labels?.[k] !== v),
      );
      if (Object.keys(data).length || Object.keys(labels).length)
        writes.push({ op: "patch", name: s.name, resourceVersion: live.resourceVersion ?? "", labels, data });
    }
    statuses.push({ name: s.name, ready: true });
  }
  if (input.spec?.certificates?.length) refused.push("spec.certificates (certificate sets)");
  if (refused.length)
    return {
      writes,
      statuses,
      refused,
      reason: GitLabSecretsReason.GeneratorNotImplemented,
      message: `not generated, not implemented by this operator: ${refused.join("; ")}; the other Secrets are filled in`,
    };
  return {
    writes,
    statuses,
    refused,
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
