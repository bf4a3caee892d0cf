// One VaultSeed spec on its own: compileSeed, which the planner and the controller use and the
// manifest checks (validate.ts) build on, so the controller and `validate` can never disagree.
import { VaultSeedReason } from "../../apis/vaultseed-names.js";
import { parseSeedPath, type RefTarget } from "./refs.js";
import { BCRYPT_MAX_INPUT_BYTES, isGenerated, maxValueBytes, parseLeaf, type Template } from "./templates.js";
import { flattenTree, isPlainObject } from "./tree.js";

// custom_metadata values are capped at 512 bytes, and the token is stored there.
export const MAX_ROTATION_TOKEN_BYTES = 512;

export type DeletionPolicy = "Retain" | "Delete";

export interface CompiledSeed {
  path: string;
  /** Every declared leaf by dotted key path, in key order. */
  declarations: ReadonlyMap<string, Template>;
  /** Distinct reference sources, to be read before planning. */
  refs: RefTarget[];
  /**
   * Present only when a non-empty token or a period is set. `keys` empty means every generated key;
   * `everyMs` is the period of rotate.every.
   */
  rotate: { token?: string; everyMs?: number; keys: string[] } | undefined;
  prune: boolean;
  deletionPolicy: DeletionPolicy;
}

export interface SpecProblem {
  key?: string;
  reason: typeof VaultSeedReason.InvalidSpec | typeof VaultSeedReason.InvalidRotation;
  message: string;
}

export type CompileResult = { ok: true; seed: CompiledSeed } | { ok: false; problems: SpecProblem[] };

export function compileSeed(spec: unknown): CompileResult {
  const problems: SpecProblem[] = [];
  const invalid = (message: string, key?: string): void => {
    problems.push(
      key === undefined
        ? { reason: VaultSeedReason.InvalidSpec, message }
        : { key, reason: VaultSeedReason.InvalidSpec, message },
    );
  };
  if (!isPlainObject(spec))
    return { ok: false, problems: [{ reason: VaultSeedReason.InvalidSpec, message: "spec is missing" }] };

  const path = typeof spec.path === "string" ? spec.path : undefined;
  if (path === undefined) invalid("spec.path is missing");
  else {
    const parsed = parseSeedPath(path);
    if (!parsed.ok) invalid(`spec.${parsed.message}`);
  }

  const declarations = compileData(spec.data, path, invalid);
  const rotate = compileRotate(spec.rotate, declarations, problems);

  if (spec.prune !== undefined && typeof spec.prune !== "boolean")
    invalid("spec.prune must be true or false");
  const policy = spec.deletionPolicy ?? "Retain";
  if (policy !== "Retain" && policy !== "Delete") invalid("spec.deletionPolicy must be Retain or Delete");

  if (problems.length > 0 || path === undefined) return { ok: false, problems };
  const refs = new Map<string, RefTarget>();
  for (const template of declarations.values()) {
    if (template.kind === "ref") refs.set(template.ref.id, template.ref);
  }
  return {
    ok: true,
    seed: {
      path,
      declarations,
      refs: [...refs.values()],
      rotate,
      prune: spec.prune === true,
      deletionPolicy: policy as DeletionPolicy,
    },
  };
}

function compileData(
  data: unknown,
  ownPath: string | undefined,
  invalid: (message: string, key?: string) => void,
): Map<string, Template> {
  const declarations = new Map<string, Template>();
  if (data === undefined) {
    invalid("spec.data is missing");
    return declarations;
  }
  const flat = flattenTree(data);
  for (const problem of flat.problems) invalid(problem.message, problem.key || undefined);
  for (const key of [...flat.leaves.keys()].sort()) {
    const leaf = flat.leaves.get(key)!;
    // Numbers and booleans are plain values: stored as given, never parsed as templates.
    const parsed =
      typeof leaf === "string"
        ? parseLeaf(leaf)
        : ({ ok: true, template: { kind: "literal", value: leaf } } as const);
    if (parsed.ok) declarations.set(key, parsed.template);
    else invalid(`${key}: ${parsed.message}`, key);
  }
  const ageSecrets: string[] = [];
  const agePublics: string[] = [];
  for (const [key, template] of declarations) {
    if (template.kind === "age-secret") ageSecrets.push(key);
    if (template.kind === "age-public") agePublics.push(key);
    if (template.kind === "bcrypt") {
      const target = declarations.get(template.target);
      if (target === undefined)
        invalid(`${key}: bcrypt target ${template.target} is not declared in data`, key);
      else if (target.kind === "bcrypt")
        invalid(`${key}: bcrypt target ${template.target} is itself a bcrypt`, key);
      else if ((maxValueBytes(target) ?? 0) > BCRYPT_MAX_INPUT_BYTES)
        invalid(
          `${key}: bcrypt target ${template.target} can be ${maxValueBytes(target)} bytes long, but bcrypt reads only the first ${BCRYPT_MAX_INPUT_BYTES}, so a change after byte ${BCRYPT_MAX_INPUT_BYTES} would go unnoticed`,
          key,
        );
    }
    if (template.kind === "ref" && template.ref.path === ownPath) {
      invalid(`${key}: a reference must name another path; use <bcrypt:> or a literal within one path`, key);
    }
  }
  // One pair per path: with two secrets there would be no telling which public belongs to which.
  if (ageSecrets.length > 1)
    invalid(
      `a path holds one age key pair; <age:secret> is declared at ${ageSecrets.join(", ")}`,
      ageSecrets[1],
    );
  if (agePublics.length > 1)
    invalid(
      `a path holds one age key pair; <age:public> is declared at ${agePublics.join(", ")}`,
      agePublics[1],
    );
  if (agePublics.length > 0 && ageSecrets.length === 0) {
    invalid(`${agePublics[0]}: <age:public> needs an <age:secret> in the same path`, agePublics[0]);
  }
  return declarations;
}

function compileRotate(
  rotate: unknown,
  declarations: ReadonlyMap<string, Template>,
  problems: SpecProblem[],
): CompiledSeed["rotate"] {
  if (rotate === undefined || rotate === null) return undefined;
  const bad = (message: string, key?: string): undefined => {
    problems.push(
      key === undefined
        ? { reason: VaultSeedReason.InvalidRotation, message }
        : { key, reason: VaultSeedReason.InvalidRotation, message },
    );
    return undefined;
  };
  if (!isPlainObject(rotate)) return bad("spec.rotate must be a map with token, every and keys");
  const token = rotate.token ?? "";
  if (typeof token !== "string") return bad("spec.rotate.token must be a string");
  if (Buffer.byteLength(token) > MAX_ROTATION_TOKEN_BYTES) {
    return bad(`spec.rotate.token is longer than ${MAX_ROTATION_TOKEN_BYTES} bytes`);
  }
  let everyMs: number | undefined;
  if (rotate.every !== undefined) {
    const parsed = parseRotationPeriod(rotate.every);
    if (typeof parsed === "string") return bad(`spec.rotate.every ${parsed}`);
    everyMs = parsed;
  }
  const keys = rotate.keys ?? [];
  if (!Array.isArray(keys) || keys.some((key) => typeof key !== "string")) {
    return bad("spec.rotate.keys must be a list of key paths");
  }
  const before = problems.length;
  for (const key of keys as string[]) {
    const template = declarations.get(key);
    if (template === undefined) bad(`rotate.keys names ${key}, which data does not declare`, key);
    else if (!isGenerated(template)) {
      bad(
        `rotate.keys names ${key}, which is not generated (only random, hex, uuid, policy and age keys rotate)`,
        key,
      );
    }
  }
  if (problems.length > before || (token === "" && everyMs === undefined)) return undefined;
  return {
    ...(token === "" ? {} : { token }),
    ...(everyMs === undefined ? {} : { everyMs }),
    keys: [...new Set(keys as string[])].sort(),
  };
}

/** The shortest rotate.every: a shorter period would rotate at nearly every resync. */
export const MIN_ROTATION_PERIOD_MS = 3_600_000;
const ROTATION_PERIOD = /^([0-9]{1,7})(h|m|s)$/;

/** rotate.every ("2160h", "90m") in milliseconds, or what is wrong with it. */
export function parseRotationPeriod(every: unknown): number | string {
  const m = typeof every === "string" ? ROTATION_PERIOD.exec(every) : null;
  if (!m) return 'must be a duration in hours, minutes or seconds, such as "2160h" (90 days)';
  const ms = Number(m[1]) * { h: 3_600_000, m: 60_000, s: 1000 }[m[2] as "h" | "m" | "s"];
  if (ms < MIN_ROTATION_PERIOD_MS) return "must be at least 1h";
  return ms;
}

/**
 * OpenBao's listener refuses a JSON request body with more strings (keys and string values) than
 * max_request_json_strings, 1000 by default since 2.4.1 (the fix of CVE-2025-59043). The limit is
 * the server's configuration, which a manifest cannot know: past it, a warning, not an error.
 */
export const OPENBAO_DEFAULT_MAX_JSON_STRINGS = 1000;

/** The strings of the KV write that would store `data`: every key at every level and every string value. */
export function kvWriteStrings(data: unknown): number {
  // {"options":{"cas":N},"data":{...}}: three keys of the envelope.
  let count = 3;
  const walk = (node: unknown, depth: number): void => {
    if (depth > 64) return; // deeper trees are refused by compileSeed already
    if (typeof node === "string") count++;
    else if (Array.isArray(node)) for (const item of node) walk(item, depth + 1);
    else if (isPlainObject(node))
      for (const value of Object.values(node)) {
        count++;
        walk(value, depth + 1);
      }
  };
  walk(data, 0);
  return count;
}

/** What the backend may refuse though the spec is valid; each a warning. */
export function seedWarnings(spec: unknown): SpecProblem[] {
  if (!isPlainObject(spec)) return [];
  const strings = kvWriteStrings(spec.data);
  if (strings <= OPENBAO_DEFAULT_MAX_JSON_STRINGS) return [];
  return [
    {
      reason: VaultSeedReason.InvalidSpec,
      key: "spec.data",
      message: `one write of this path carries ${strings} strings (keys and values); OpenBao refuses more than ${OPENBAO_DEFAULT_MAX_JSON_STRINGS} per request unless its listener's max_request_json_strings is raised`,
    },
  ];
}
