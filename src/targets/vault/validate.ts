// A set of VaultSeed manifests checked together (validateDocuments, the admission's cross-object
// checks): what only shows across objects, such as shared paths, repeated names and reference
// cycles, on top of each spec's own problems (compile.ts, re-exported here for the callers that
// check manifests).
import { VaultSeedGroup, VaultSeedKind } from "../../apis/vaultseed-names.js";
import type { ManifestDocument, ManifestPlace, ManifestProblem } from "../../runtime/target.js";
import { collate } from "../../runtime/text-order.js";
import { compileSeed, seedWarnings } from "./compile.js";
import { analyseRefs, parseSeedPath } from "./refs.js";
import { type ApplicationScopes, readRefusal, writeRefusal } from "./scope.js";
import { parseLeaf } from "./templates.js";
import { flattenTree, isPlainObject } from "./tree.js";

export * from "./compile.js";

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
    for (const [key, target] of [...manifest.refs].sort(([a], [b]) => collate(a, b))) {
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
