/**
 * Checks an object against a CRD's structural schema (the `openAPIV3Schema` the generator writes to
 * deploy/crds) the way the API server does before any CEL rule: types, bounds, patterns, enums,
 * required fields, list uniqueness, and the fields the schema does not declare, which pruning drops
 * silently and strict field validation (kubectl's default since 1.27) refuses. CEL rules are left
 * to each kind's own checks: they need a CEL evaluator and, for transition rules, the old object.
 * Every problem is reported, not just the first, so one run shows all of them.
 */
import type { JSONSchemaProps } from "./crd.js";
import type { FieldError } from "./validate.js";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** JSON's name of a value's type, as the API server words it ("string", "array", ...). */
export function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

// Go's regexp is RE2; the patterns the generator writes are in the common subset of RE2 and
// JavaScript. Compiled once per pattern.
const patterns = new Map<string, RegExp | null>();
function compiled(pattern: string): RegExp | null {
  let re = patterns.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, "u");
    } catch {
      re = null;
    }
    patterns.set(pattern, re);
  }
  return re;
}

function typeMatches(schema: JSONSchemaProps, v: unknown): boolean {
  if (schema["x-kubernetes-int-or-string"]) return typeof v === "string" || Number.isInteger(v);
  switch (schema.type) {
    case undefined:
      return true; // only with x-kubernetes-preserve-unknown-fields: anything goes
    case "object":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    case "integer":
      return Number.isInteger(v);
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    default:
      return typeof v === schema.type;
  }
}

/**
 * Problems of `value` at `path` against `schema`. `path` is the dotted field path of `value`
 * (`spec.rotate`), used in every message so each names its field.
 */
export function structuralErrors(schema: JSONSchemaProps, value: unknown, path: string): FieldError[] {
  const out: FieldError[] = [];
  check(schema, value, path, out);
  return out;
}

function check(schema: JSONSchemaProps, v: unknown, path: string, out: FieldError[]): void {
  if (v === null) {
    // A null where the schema has a default is pruned and defaulted; anywhere else it is a type error.
    if (!schema.nullable && schema.default === undefined && !schema["x-kubernetes-preserve-unknown-fields"])
      out.push({ path, message: `must be of type ${expected(schema)}, not null` });
    return;
  }
  if (!typeMatches(schema, v)) {
    out.push({ path, message: `must be of type ${expected(schema)}, not ${jsonType(v)}` });
    return;
  }
  if (schema.enum && !schema.enum.some((e) => e === v))
    out.push({ path, message: `must be one of: ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}` });
  if (typeof v === "string") checkString(schema, v, path, out);
  else if (typeof v === "number") checkNumber(schema, v, path, out);
  else if (Array.isArray(v)) checkArray(schema, v, path, out);
  else if (isObject(v)) checkObject(schema, v, path, out);
}

function expected(schema: JSONSchemaProps): string {
  return schema["x-kubernetes-int-or-string"] ? "integer or string" : (schema.type ?? "any");
}

function checkString(schema: JSONSchemaProps, v: string, path: string, out: FieldError[]): void {
  // The API server counts characters (runes), not bytes.
  const length = [...v].length;
  if (schema.minLength !== undefined && length < schema.minLength)
    out.push({ path, message: `must be at least ${schema.minLength} characters long` });
  if (schema.maxLength !== undefined && length > schema.maxLength)
    out.push({ path, message: `may not be longer than ${schema.maxLength} characters` });
  if (schema.pattern !== undefined) {
    const re = compiled(schema.pattern);
    if (re && !re.test(v)) out.push({ path, message: `must match the pattern ${schema.pattern}` });
  }
  if (schema.format === "date-time" && Number.isNaN(Date.parse(v)))
    out.push({ path, message: "must be a date-time (RFC 3339)" });
}

function checkNumber(schema: JSONSchemaProps, v: number, path: string, out: FieldError[]): void {
  if (schema.minimum !== undefined && v < schema.minimum)
    out.push({ path, message: `must be greater than or equal to ${schema.minimum}` });
  if (schema.maximum !== undefined && v > schema.maximum)
    out.push({ path, message: `must be less than or equal to ${schema.maximum}` });
  if (schema.multipleOf !== undefined && v % schema.multipleOf !== 0)
    out.push({ path, message: `must be a multiple of ${schema.multipleOf}` });
}

function checkArray(schema: JSONSchemaProps, v: unknown[], path: string, out: FieldError[]): void {
  if (schema.minItems !== undefined && v.length < schema.minItems)
    out.push({ path, message: `must have at least ${schema.minItems} items` });
  if (schema.maxItems !== undefined && v.length > schema.maxItems)
    out.push({ path, message: `must have at most ${schema.maxItems} items` });
  if (schema.items) for (const [i, item] of v.entries()) check(schema.items, item, `${path}[${i}]`, out);
  const listType = schema["x-kubernetes-list-type"];
  if (listType === "set") {
    const seen = new Set<string>();
    v.forEach((item, i) => {
      const key = JSON.stringify(item);
      if (seen.has(key)) out.push({ path: `${path}[${i}]`, message: `duplicate value ${key}` });
      seen.add(key);
    });
  } else if (listType === "map") {
    const keys = schema["x-kubernetes-list-map-keys"] ?? [];
    const seen = new Set<string>();
    v.forEach((item, i) => {
      if (!isObject(item)) return;
      const key = JSON.stringify(keys.map((k) => item[k]));
      if (seen.has(key))
        out.push({ path: `${path}[${i}]`, message: `duplicate entry for ${keys.join(", ")} ${key}` });
      seen.add(key);
    });
  }
}

// What an embedded resource (x-kubernetes-embedded-resource) always carries besides its schema.
const EMBEDDED_FIELDS = ["apiVersion", "kind", "metadata"];

function checkObject(schema: JSONSchemaProps, v: Obj, path: string, out: FieldError[]): void {
  const count = Object.keys(v).length;
  if (schema.minProperties !== undefined && count < schema.minProperties)
    out.push({ path, message: `must have at least ${schema.minProperties} fields` });
  if (schema.maxProperties !== undefined && count > schema.maxProperties)
    out.push({ path, message: `must have at most ${schema.maxProperties} fields` });
  // The API server defaults before it validates: a required field with a default is never missing
  // (upstream's `tokenSecretRef: {}` is `{name: ""}` by the time `required` is checked).
  for (const name of schema.required ?? [])
    if (v[name] === undefined && schema.properties?.[name]?.default === undefined)
      out.push({ path: join(path, name), message: "is required" });
  const preserves = schema["x-kubernetes-preserve-unknown-fields"] === true;
  for (const [key, child] of Object.entries(v)) {
    const sub = schema.properties?.[key] ?? schema.additionalProperties;
    if (sub) check(sub, child, join(path, key), out);
    else if (!preserves && !(schema["x-kubernetes-embedded-resource"] && EMBEDDED_FIELDS.includes(key)))
      out.push({ path: join(path, key), message: "unknown field: the schema does not declare it" });
  }
}
