import { VaultSeedReason } from "../../apis/vaultseed-names.js";
// Checking VaultSeed specs: one spec on its own (compileSeed, which the planner uses too, so the
// controller and `validate` can never disagree), and a set of manifests together (validateDocuments,
// which adds what only shows across objects: shared paths, repeated names, reference cycles).

import { VaultSeedGroup, VaultSeedKind } from "../../apis/vaultseed-names.js";
import type { ManifestDocument, ManifestPlace, ManifestProblem } from "../../runtime/target.js";
import { analyseRefs, parseSeedPath, type RefTarget } from "./refs.js";
import { type ApplicationScopes, readRefusal, writeRefusal } from "./scope.js";
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

/** A problem always names its object: namespace/name, or the bare name when the manifest sets no namespace. */
export type ValidationProblem = ManifestProblem & { object: string };

interface SeedManifest {
  place: ManifestPlace;
  object: string;
  path: string | undefined;
  /** Referenced path by key, read even from a spec with other problems, so cycles show in the same pass. */
  refs: Map<string, string>;
}

export function isVaultSeed(doc: unknown): doc is Record<string, unknown> {
  return (
    isPlainObject(doc) &&
    doc.kind === VaultSeedKind &&
    typeof doc.apiVersion === "string" &&
    doc.apiVersion.startsWith(`${VaultSeedGroup}/`)
  );
}

function objectName(doc: Record<string, unknown>): { name: string | undefined; object: string } {
  const metadata = isPlainObject(doc.metadata) ? doc.metadata : {};
  const name = typeof metadata.name === "string" && metadata.name !== "" ? metadata.name : undefined;
  const namespace =
    typeof metadata.namespace === "string" && metadata.namespace !== "" ? metadata.namespace : undefined;
  const shown = name ?? "(unnamed)";
  return { name, object: namespace ? `${namespace}/${shown}` : shown };
}

// `kind: List` is what `kubectl get -o yaml` prints; accepting it costs nothing.
function* seedDocuments(
  docs: Iterable<ManifestDocument>,
): Generator<{ place: ManifestPlace; doc: Record<string, unknown> }> {
  for (const { doc, ...place } of docs) {
    if (isPlainObject(doc) && doc.kind === "List" && Array.isArray(doc.items)) {
      for (const item of doc.items) if (isVaultSeed(item)) yield { place, doc: item };
    } else if (isVaultSeed(doc)) yield { place, doc };
  }
}

export function validateDocuments(docs: Iterable<ManifestDocument>): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const manifests: SeedManifest[] = [];
  for (const { place, doc } of seedDocuments(docs)) {
    const { name, object } = objectName(doc);
    if (name === undefined) problems.push({ ...place, object, message: "metadata.name is missing" });
    const compiled = compileSeed(doc.spec);
    if (!compiled.ok) {
      for (const problem of compiled.problems) {
        problems.push(
          problem.key === undefined
            ? { ...place, object, message: problem.message }
            : { ...place, object, key: problem.key, message: problem.message },
        );
      }
    }
    for (const w of seedWarnings(doc.spec))
      problems.push({ ...place, object, key: w.key!, message: w.message, severity: "warning" });
    const spec = isPlainObject(doc.spec) ? doc.spec : {};
    const path = typeof spec.path === "string" && parseSeedPath(spec.path).ok ? spec.path : undefined;
    manifests.push({ place, object, path, refs: referencedPaths(spec.data, path) });
  }
  problems.push(...sharedProblems(manifests, (m) => m.object, "the name", "is also declared in"));
  problems.push(...sharedProblems(manifests, (m) => m.path, "path", "is also seeded by"));
  problems.push(...cycleProblems(manifests));
  return problems;
}

// An informer's objects are replaced, never changed, on update: what one says about its path and
// references is read once per object, not once per admission request.
const outlines = new WeakMap<object, Omit<SeedManifest, "place">>();

function seedOutline(doc: Record<string, unknown>): Omit<SeedManifest, "place"> {
  let outline = outlines.get(doc);
  if (!outline) {
    const spec = isPlainObject(doc.spec) ? doc.spec : {};
    const path = typeof spec.path === "string" && parseSeedPath(spec.path).ok ? spec.path : undefined;
    outline = { object: objectName(doc).object, path, refs: referencedPaths(spec.data, path) };
    outlines.set(doc, outline);
  }
  return outline;
}

/**
 * What only shows against the other objects (a path another object seeds, a reference cycle
 * through the subject), with validateDocuments' own words, for the subject alone. The others are
 * read for their path and references only, so a cache of thousands costs no compile per request.
 */
export function crossObjectProblems(
  subject: ManifestDocument,
  others: Iterable<ManifestDocument>,
): ValidationProblem[] {
  const { doc: subjectDoc, ...subjectPlace } = subject;
  if (!isVaultSeed(subjectDoc)) return [];
  const own: SeedManifest = { place: subjectPlace, ...seedOutline(subjectDoc) };
  const byPath = new Map<string, SeedManifest[]>();
  for (const { doc, ...place } of others) {
    if (!isVaultSeed(doc)) continue;
    const m = { place, ...seedOutline(doc) };
    if (m.path !== undefined) byPath.set(m.path, [...(byPath.get(m.path) ?? []), m]);
  }
  const mine = (p: ValidationProblem) => p.file === own.place.file && p.object === own.object;
  const samePath = own.path === undefined ? [] : (byPath.get(own.path) ?? []);
  // A cycle through the subject runs only through paths its references reach: the rest of the
  // cache is not looked at, so a request costs what its own references touch.
  const reachable = [own];
  const seen = new Set(own.path === undefined ? [] : [own.path]);
  const next = [...own.refs.values()];
  while (next.length > 0) {
    const path = next.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    for (const m of byPath.get(path) ?? []) {
      reachable.push(m);
      next.push(...m.refs.values());
    }
  }
  return [
    ...sharedProblems([own, ...samePath], (m) => m.path, "path", "is also seeded by").filter(mine),
    ...cycleProblems(reachable).filter(mine),
  ];
}

/**
 * What the controller would refuse with Forbidden, given the target's application namespaces: an
 * object of such a namespace seeding outside its prefixes, or referencing a path it may not read.
 * Objects without a namespace, or of a platform namespace, are not limited.
 */
export function validateApplicationScopes(
  docs: Iterable<ManifestDocument>,
  scopes: ApplicationScopes,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const { place, doc } of seedDocuments(docs)) {
    const { object } = objectName(doc);
    const meta = isPlainObject(doc.metadata) ? doc.metadata : {};
    const namespace = typeof meta.namespace === "string" ? meta.namespace : undefined;
    if (namespace === undefined || !scopes.has(namespace)) continue;
    const spec = isPlainObject(doc.spec) ? doc.spec : {};
    if (typeof spec.path !== "string") continue;
    const refused = writeRefusal(scopes, namespace, spec.path);
    if (refused) problems.push({ ...place, object, key: "spec.path", message: refused });
    for (const [key, path] of referencedPaths(spec.data, spec.path)) {
      const unreadable = readRefusal(scopes, namespace, key, path);
      if (unreadable) problems.push({ ...place, object, key, message: unreadable });
    }
  }
  return problems;
}

// A reference to the object's own path is already an InvalidSpec problem, not a cycle.
function referencedPaths(data: unknown, ownPath: string | undefined): Map<string, string> {
  const refs = new Map<string, string>();
  for (const [key, leaf] of flattenTree(data).leaves) {
    if (typeof leaf !== "string") continue; // numbers and booleans are plain values, never references
    const parsed = parseLeaf(leaf);
    if (parsed.ok && parsed.template.kind === "ref" && parsed.template.ref.path !== ownPath)
      refs.set(key, parsed.template.ref.path);
  }
  return refs;
}

function shownPlace(place: ManifestPlace): string {
  return place.line === undefined ? place.file : `${place.file}:${place.line}`;
}

function sharedProblems(
  manifests: SeedManifest[],
  keyOf: (manifest: SeedManifest) => string | undefined,
  what: string,
  verb: string,
): ValidationProblem[] {
  const groups = new Map<string, SeedManifest[]>();
  for (const manifest of manifests) {
    const key = keyOf(manifest);
    if (key === undefined) continue;
    groups.set(key, [...(groups.get(key) ?? []), manifest]);
  }
  const problems: ValidationProblem[] = [];
  for (const [key, group] of groups) {
    if (group.length < 2) continue;
    for (const manifest of group) {
      const others = group
        .filter((other) => other !== manifest)
        .map((other) => `${other.object} (${shownPlace(other.place)})`);
      problems.push({
        ...manifest.place,
        object: manifest.object,
        message: `${what} ${key} ${verb} ${others.join(", ")}`,
      });
    }
  }
  return problems;
}

function cycleProblems(manifests: SeedManifest[]): ValidationProblem[] {
  const seeds = manifests.filter((m) => m.path !== undefined);
  const analysis = analyseRefs(seeds.map((m) => ({ path: m.path!, dependsOn: [...m.refs.values()] })));
  const problems: ValidationProblem[] = [];
  for (const manifest of seeds) {
    const cycle = analysis.cycleOf.get(manifest.path!);
    if (!cycle) continue;
    for (const [key, target] of [...manifest.refs].sort(([a], [b]) => a.localeCompare(b))) {
      if (!cycle.includes(target)) continue;
      problems.push({
        ...manifest.place,
        object: manifest.object,
        key,
        message: `reference cycle between paths ${cycle.join(", ")}`,
      });
    }
  }
  return problems;
}
