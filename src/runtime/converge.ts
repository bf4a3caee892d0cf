import type { KubeObject } from "./types.js";

/**
 * Decides, without asking the API server, whether a server-side apply of `intent` by `fieldManager`
 * would change nothing on `live`. Three things must hold:
 *
 * - the manager's Apply entry in live.metadata.managedFields is for the intent's apiVersion;
 * - that entry's field set is exactly the set of fields the intent names: nothing the intent names
 *   is unowned (applying would take it over), nothing owned is missing from the intent (applying
 *   would remove it);
 * - every value the intent names equals the live value.
 *
 * Field sets (FieldsV1) name map keys as `f:<name>`, associative list items as `k:{<keys>}`, set
 * items as `v:<value>` and positions as `i:<n>`; `{}` marks a leaf or an atomic value. The check
 * reads only those, so it needs no schema. It is conservative: when unsure (defaulted values written
 * differently, lists that others extended) it answers "no", and the caller falls back to a dry run.
 */
export function applyWouldBeNoop(
  intent: KubeObject,
  live: KubeObject,
  fieldManager: string,
  subresource = "",
): { noop: true } | { noop: false; reason: string } {
  const raw = live.metadata.managedFields;
  const entries = (Array.isArray(raw) ? raw.filter(isMap) : []) as ManagedFieldsEntry[];
  if (entries.length === 0) return { noop: false, reason: "the live object carries no managedFields" };
  const entry = entries.find(
    (e) => e.manager === fieldManager && e.operation === "Apply" && (e.subresource ?? "") === subresource,
  );
  if (!entry) return { noop: false, reason: `${fieldManager} has not applied this object yet` };
  if (intent.apiVersion && entry.apiVersion !== intent.apiVersion)
    return { noop: false, reason: `last applied as ${entry.apiVersion}, now ${intent.apiVersion}` };
  if (!isMap(entry.fieldsV1) || Object.keys(entry.fieldsV1).length === 0)
    return { noop: false, reason: `the field set of ${fieldManager} is empty or unreadable` };
  const fields = entry.fieldsV1 as FieldSet;
  const body = appliedBody(intent);
  const uncovered = firstUncovered(fields, body, "");
  if (uncovered !== undefined) return { noop: false, reason: `${uncovered} is not owned by ${fieldManager}` };
  const dropped = firstDropped(fields, body, "");
  if (dropped !== undefined)
    return { noop: false, reason: `${dropped} is owned but no longer in the intent` };
  const differs = firstDifference(body, live, "");
  if (differs !== undefined) return { noop: false, reason: `${differs} differs from the live object` };
  return { noop: true };
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
  fieldsV1?: unknown;
  time?: string;
}

type FieldSet = { [member: string]: FieldSet };
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The part of an intent that field sets describe: identity fields are not tracked as owned. */
function appliedBody(intent: KubeObject): Record<string, Json> {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = intent;
  const { name: _n, namespace: _ns, uid: _u, resourceVersion: _rv, managedFields: _mf, ...meta } = metadata;
  const body = { ...(rest as Record<string, Json>) };
  if (Object.keys(meta).length > 0) body["metadata"] = meta as Record<string, Json>;
  return dropUndefined(body) as Record<string, Json>;
}

function dropUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropUndefined);
  if (isMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = dropUndefined(x);
    return out;
  }
  return v;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isEmpty = (s: FieldSet | undefined): boolean => !s || Object.keys(s).length === 0;

function parseKey(member: string): Record<string, unknown> | undefined {
  try {
    const k = JSON.parse(member.slice(2)) as unknown;
    return isMap(k) ? k : undefined;
  } catch {
    return undefined;
  }
}

/** An item matches an associative key when every key field it sets equals the key (unset ones were defaulted). */
function matchesKey(item: unknown, key: Record<string, unknown>): boolean {
  if (!isMap(item)) return false;
  let named = 0;
  for (const [k, v] of Object.entries(key)) {
    if (item[k] === undefined) continue;
    if (!deepEqual(item[k], v)) return false;
    named++;
  }
  return named > 0;
}

function itemMember(set: FieldSet, item: unknown, index: number): FieldSet | undefined {
  if (!isMap(item) && !Array.isArray(item)) return set[`v:${JSON.stringify(item)}`] ?? set[`i:${index}`];
  for (const [member, child] of Object.entries(set)) {
    if (!member.startsWith("k:")) continue;
    const key = parseKey(member);
    if (key && matchesKey(item, key)) return child;
  }
  return set[`i:${index}`] ?? (isMap(item) ? undefined : set[`v:${JSON.stringify(item)}`]);
}

/** The first path the intent sets that the field set does not own. */
function firstUncovered(set: FieldSet, value: unknown, path: string): string | undefined {
  if (isEmpty(set)) return undefined; // a leaf, or an atomic map or list: owned whole
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child = itemMember(set, value[i], i);
      if (!child) return `${path}[${i}]`;
      const deeper = firstUncovered(child, value[i], `${path}[${i}]`);
      if (deeper !== undefined) return deeper;
    }
    return undefined;
  }
  if (isMap(value)) {
    for (const [k, v] of Object.entries(value)) {
      const child = set[`f:${k}`];
      const p = path ? `${path}.${k}` : k;
      if (!child) return p;
      const deeper = firstUncovered(child, v, p);
      if (deeper !== undefined) return deeper;
    }
  }
  return undefined;
}

/** The first owned path the intent no longer sets (applying would remove or release it). */
function firstDropped(set: FieldSet, value: unknown, path: string): string | undefined {
  for (const [member, child] of Object.entries(set)) {
    if (member === ".") continue;
    let next: unknown;
    let p: string;
    if (member.startsWith("f:")) {
      const k = member.slice(2);
      p = path ? `${path}.${k}` : k;
      if (!isMap(value) || value[k] === undefined) return p;
      next = value[k];
    } else if (member.startsWith("k:")) {
      const key = parseKey(member);
      p = `${path}[${member.slice(2)}]`;
      next = Array.isArray(value) && key ? value.find((item) => matchesKey(item, key)) : undefined;
      if (next === undefined) return p;
    } else if (member.startsWith("v:")) {
      p = `${path}[${member.slice(2)}]`;
      let wanted: unknown;
      try {
        wanted = JSON.parse(member.slice(2));
      } catch {
        return p;
      }
      if (!Array.isArray(value) || !value.some((item) => deepEqual(item, wanted))) return p;
      continue;
    } else if (member.startsWith("i:")) {
      const i = Number(member.slice(2));
      p = `${path}[${i}]`;
      if (!Array.isArray(value) || i >= value.length) return p;
      next = value[i];
    } else {
      return `${path}(${member})`; // a member form this check does not know: let a dry run decide
    }
    if (!isEmpty(child)) {
      const deeper = firstDropped(child, next, p);
      if (deeper !== undefined) return deeper;
    }
  }
  return undefined;
}

/** The first path where the intent's value is not what the live object holds (live may hold more). */
function firstDifference(want: unknown, have: unknown, path: string): string | undefined {
  if (isMap(want)) {
    if (!isMap(have)) return path || "(object)";
    for (const [k, v] of Object.entries(want)) {
      const deeper = firstDifference(v, have[k], path ? `${path}.${k}` : k);
      if (deeper !== undefined) return deeper;
    }
    return undefined;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return path;
    for (let i = 0; i < want.length; i++) {
      const deeper = firstDifference(want[i], have[i], `${path}[${i}]`);
      if (deeper !== undefined) return deeper;
    }
    return undefined;
  }
  return want === have ? undefined : path;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isMap(a)) {
    if (!isMap(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Whether a dry-run apply's answer leaves the object as it is: equal to live apart from the
 * resourceVersion (a dry run never stores, so it cannot tell) and managedFields timestamps.
 */
export function dryRunChangesNothing(dryRun: KubeObject, live: KubeObject): boolean {
  return deepEqual(comparable(dryRun), comparable(live));
}

function comparable(o: KubeObject): unknown {
  const { resourceVersion: _rv, managedFields, ...meta } = o.metadata;
  const entries = Array.isArray(managedFields) ? managedFields : [];
  const fields = entries.map((e) => {
    if (!isMap(e)) return e;
    const { time: _t, ...rest } = e;
    return rest;
  });
  return { ...o, metadata: { ...meta, managedFields: fields } };
}
