// Builds objects from a CRD's structural schema, for exercising it on a real API server: a valid
// instance holding every field the schema declares, and, for each constraint met on the way (enum,
// length and numeric bounds, pattern, list size, required field), the one change that breaks it.

import type { JSONSchemaProps } from "../../src/apis/crd.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
export type Segment = string | number;

/**
 * Values known to match each pattern the schemas use. A pattern missing here stops the test with its
 * name, so a new pattern gets a real sample instead of a guess.
 */
const PATTERN_SAMPLES: Record<string, string> = {
  "^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h|d))+$": "90s",
  "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$":
    "example.org/tier",
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$":
    "10Gi",
  "^[-._a-zA-Z0-9]+$": "password",
  "^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$": "gitlab.example.org",
  "^[A-Z][A-Za-z0-9]*$": "ClusterIssuer",
  "^[0-9]+\\.[0-9]+$": "9.4",
  "^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$": "db.example.org",
  "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$": "Value_1",
  "^[A-Za-z_][A-Za-z0-9_-]*$": "enable_kv",
  "^[0-9a-fA-F]{64}$": "0f343b0931126a20f133d67c2b018a3b4fc8f4b03c21d8e3b7b4cd4e6b0d2a9c",
  "^[^/\\s]+(/[^/\\s]+)+$": "secret/apps/sample",
  "^[0-9]{1,7}(h|m|s)$": "2160h",
  "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$": "name-1",
  "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$":
    "2.4.1",
  "^v?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$": "9.4.1",
  "^[A-Za-z0-9][A-Za-z0-9_.-]*$": "security-officer",
  "^([0-9A-Fa-f]{40}|[0-9A-Fa-f]{64})$": "0f343b0931126a20f133d67c2b018a3b4fc8f4b0",
  "^system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?$":
    "system:serviceaccount:restore-ns:restore-sa",
  "^[A-Za-z_][A-Za-z0-9_]*$": "PKCS11_TOKEN",
  "^[-._A-Za-z0-9]+$": "token-pin",
  "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+$":
    "gateway.envoyproxy.io/gatewayclass-controller",
  "^[A-Za-z0-9_.\\-/]+$": "secret/data/restore-canary",
};

/** An instance of `schema` with every declared property filled with a value the schema accepts. */
export function fullInstance(schema: JSONSchemaProps, at = "<root>"): Json {
  if (schema["x-kubernetes-int-or-string"]) return 1;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0] as Json;
  switch (schema.type) {
    case "object": {
      const out: JsonObject = {};
      for (const [name, child] of Object.entries(schema.properties ?? {}))
        out[name] = fullInstance(child, `${at}.${name}`);
      if (schema.additionalProperties && Object.keys(out).length === 0)
        out["entry"] = fullInstance(schema.additionalProperties, `${at}.entry`);
      return out;
    }
    case "array":
      return schema.items ? [fullInstance(schema.items, `${at}[]`)] : [];
    case "string":
      return sampleString(schema, at);
    case "integer":
    case "number":
      return Math.max(schema.minimum ?? 1, 1);
    case "boolean":
      return false;
    default:
      // Free-form (preserve-unknown-fields without a type): anything goes.
      return {};
  }
}

function sampleString(schema: JSONSchemaProps, at: string): string {
  if (schema.format === "date-time") return "2026-01-01T00:00:00Z";
  let value = "value";
  if (schema.pattern !== undefined) {
    const sample = PATTERN_SAMPLES[schema.pattern];
    if (sample === undefined) throw new Error(`${at}: no sample value for pattern ${schema.pattern}`);
    value = sample;
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength)
    value = value.slice(0, schema.maxLength);
  return value;
}

/** The schema node at a path of property names ("[]" for list items, "{}" for map values). */
export function schemaAt(root: JSONSchemaProps, path: string): JSONSchemaProps {
  let at = root;
  for (const part of path.split(".").filter(Boolean)) {
    const next = part === "[]" ? at.items : part === "{}" ? at.additionalProperties : at.properties?.[part];
    if (!next) throw new Error(`no schema at ${path} (stopped at ${part})`);
    at = next;
  }
  return at;
}

/** A constraint of the schema, named by its schema path (".spec.audit[].type") and keyword. */
export interface Constraint {
  schemaPath: string;
  keyword: "enum" | "maxLength" | "minLength" | "pattern" | "minimum" | "maximum" | "maxItems" | "required";
  /** For `required`: the property. */
  property?: string;
}

export const constraintId = (c: Constraint): string =>
  `${c.schemaPath} ${c.keyword}${c.property ? ` ${c.property}` : ""}`;

/** Every enum, bound, pattern, list size and required property under `.spec` (or `.status`). */
export function sectionConstraints(root: JSONSchemaProps, section: "spec" | "status" = "spec"): Constraint[] {
  const out: Constraint[] = [];
  const walk = (s: JSONSchemaProps, path: string): void => {
    for (const c of constraintsOf(s, path)) out.push(c);
    for (const [name, child] of Object.entries(s.properties ?? {})) walk(child, `${path}.${name}`);
    if (s.items) walk(s.items, `${path}[]`);
    if (s.additionalProperties) walk(s.additionalProperties, `${path}{}`);
  };
  const top = root.properties?.[section];
  if (top) walk(top, `.${section}`);
  return out;
}

function constraintsOf(s: JSONSchemaProps, schemaPath: string): Constraint[] {
  if (s["x-kubernetes-int-or-string"]) return [];
  const out: Constraint[] = [];
  const add = (keyword: Constraint["keyword"], property?: string) =>
    out.push(property === undefined ? { schemaPath, keyword } : { schemaPath, keyword, property });
  if (s.enum) add("enum");
  if (s.type === "string" && !s.enum) {
    if (s.maxLength !== undefined) add("maxLength");
    if ((s.minLength ?? 0) > 0) add("minLength");
    if (s.pattern !== undefined) add("pattern");
  }
  if (s.type === "integer" || s.type === "number") {
    if (s.minimum !== undefined) add("minimum");
    if (s.maximum !== undefined) add("maximum");
  }
  if (s.type === "array" && s.maxItems !== undefined) add("maxItems");
  for (const property of s.required ?? []) add("required", property);
  return out;
}

/** One way to break a valid object: the change, and the field the API server must name. */
export interface Violation {
  constraint: Constraint;
  /** The field path the API server reports, e.g. `spec.audit[0].type`. */
  field: string;
  /**
   * A required property with a default cannot go missing: the API server fills it in before
   * validating. For those the check is that the stored object carries the default.
   */
  defaulted?: { path: Segment[]; value: Json };
  apply(obj: JsonObject): void;
}

/**
 * Walks a valid object with its schema and returns one violation per constraint met, keyed by
 * constraint id (the first place it is met wins).
 */
export function violationsOf(
  root: JSONSchemaProps,
  obj: JsonObject,
  section: "spec" | "status" = "spec",
): Map<string, Violation> {
  const found = new Map<string, Violation>();
  const walk = (s: JSONSchemaProps, value: Json, path: Segment[], schemaPath: string): void => {
    for (const constraint of constraintsOf(s, schemaPath)) {
      const id = constraintId(constraint);
      if (found.has(id)) continue;
      const v = violationFor(s, constraint, value, path);
      if (v) found.set(id, v);
    }
    if (s.type === "object" && value && typeof value === "object" && !Array.isArray(value)) {
      for (const [name, child] of Object.entries(value)) {
        const childSchema = s.properties?.[name] ?? s.additionalProperties;
        if (!childSchema) continue;
        const mark = s.properties?.[name] ? `.${name}` : "{}";
        walk(childSchema, child, [...path, name], `${schemaPath}${mark}`);
      }
    }
    if (s.type === "array" && Array.isArray(value) && s.items)
      value.forEach((item, i) => {
        walk(s.items!, item, [...path, i], `${schemaPath}[]`);
      });
  };
  const top = root.properties?.[section];
  if (top && obj[section] !== undefined) walk(top, obj[section], [section], `.${section}`);
  return found;
}

function violationFor(
  s: JSONSchemaProps,
  constraint: Constraint,
  value: Json,
  path: Segment[],
): Violation | undefined {
  const field = fieldPath(path);
  const set = (bad: Json): Violation => ({ constraint, field, apply: (o) => setAt(o, path, bad) });
  switch (constraint.keyword) {
    case "enum":
      return set("NotOneOfTheAllowedValues");
    case "maxLength":
      return set("a".repeat(s.maxLength! + 1));
    case "minLength":
      return set("");
    case "pattern": {
      const re = new RegExp(s.pattern!);
      const bad = ["bad value!", "-", "!"].find((candidate) => !re.test(candidate));
      return bad === undefined ? undefined : set(bad);
    }
    case "minimum":
      return set(s.minimum! - 1);
    case "maximum":
      return set(s.maximum! + 1);
    case "maxItems":
      return Array.isArray(value) && value.length > 0
        ? set(Array.from({ length: s.maxItems! + 1 }, () => structuredClone(value[0]!)))
        : undefined;
    case "required": {
      const property = constraint.property!;
      if (!value || typeof value !== "object" || Array.isArray(value) || !(property in value))
        return undefined;
      const fallback = s.properties?.[property]?.default;
      return {
        constraint,
        field: fieldPath([...path, property]),
        ...(fallback === undefined
          ? {}
          : { defaulted: { path: [...path, property], value: fallback as Json } }),
        apply: (o) => deleteAt(o, [...path, property]),
      };
    }
  }
}

/** `spec.audit[0].type`, as the API server writes field paths. */
export function fieldPath(path: Segment[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

export function getAt(obj: Json, path: Segment[]): Json | undefined {
  let at: Json | undefined = obj;
  for (const p of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string | number, Json>)[p];
  }
  return at;
}

export function setAt(obj: JsonObject, path: Segment[], value: Json): void {
  const parent = getAt(obj, path.slice(0, -1)) as Record<string | number, Json>;
  parent[path[path.length - 1]!] = value;
}

export function deleteAt(obj: JsonObject, path: Segment[]): void {
  const parent = getAt(obj, path.slice(0, -1)) as Record<string | number, Json>;
  delete parent[path[path.length - 1]!];
}
