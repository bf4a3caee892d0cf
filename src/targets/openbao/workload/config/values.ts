/**
 * Turning free-form spec values into HCL values with the field named on every refusal, and the
 * upstream-camelCase to OpenBao-snake_case settings tables shared by the stanza renderers.
 */
import { ConfigError } from "./errors.js";
import type { HclObject, HclValue } from "./hcl.js";
import type { FreeForm, Scalar } from "./spec-view.js";

export function isObject(value: unknown): value is FreeForm {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Any JSON value except null, as an HCL value. */
export function toHcl(value: unknown, field: string): HclValue {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map((v, i) => toHcl(v, `${field}[${i}]`));
  if (isObject(value)) {
    const out: Record<string, HclValue> = record();
    for (const [k, v] of Object.entries(value)) out[k] = toHcl(v, `${field}.${k}`);
    return out as HclObject;
  }
  throw new ConfigError(
    field,
    value === null ? "null has no equivalent in the configuration" : "unsupported value",
  );
}

export function scalar(value: unknown, field: string): Scalar {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  throw new ConfigError(field, "must be a string, number or boolean");
}

/** OpenBao option maps (audit options, mount options) are string to string. */
export function stringValue(value: unknown, field: string): string {
  const s = scalar(value, field);
  return typeof s === "string" ? s : String(s);
}

/**
 * Maps the settings of a free-form block to OpenBao's names: a key may use the upstream project's
 * camelCase name (`kmsKeyID`) or OpenBao's own (`kms_key_id`). A name with no OpenBao equivalent, or
 * one neither table knows, is refused with its field, never dropped.
 */
export function mapSettings(
  block: FreeForm,
  field: string,
  names: Record<string, string | null>,
  what: string,
): Record<string, Scalar> {
  const known = new Set(Object.values(names).filter((n): n is string => n !== null));
  const out: Record<string, Scalar> = record();
  for (const [k, v] of Object.entries(block)) {
    if (v === undefined) continue;
    const at = `${field}.${k}`;
    const mapped = Object.hasOwn(names, k) ? names[k] : known.has(k) ? k : undefined;
    if (mapped === null) throw new ConfigError(at, `is not supported by ${what}`);
    if (mapped === undefined) throw new ConfigError(at, `is not a setting of ${what}`);
    out[mapped] = scalar(v, at);
  }
  return out;
}

/**
 * An empty map without a prototype: user keys such as `__proto__` or `constructor` become plain
 * entries instead of reaching Object.prototype.
 */
export function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A list of objects from the spec; anything else is refused by field rather than crashing later. */
export function objectList<T>(value: unknown, field: string): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(field, "must be a list");
  value.forEach((item, i) => {
    if (!isObject(item)) throw new ConfigError(`${field}[${i}]`, "must be an object");
  });
  return value as T[];
}

/** An optional string setting; anything else is refused by field. */
export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new ConfigError(field, "must be a string");
  return value;
}
