import { ConfigError } from "./target.js";

/** Checked readers for configuration values; each error names the field. */
export function asObject(v: unknown, field: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new ConfigError(field, "must be a mapping");
  return v as Record<string, unknown>;
}

export function asString(v: unknown, field: string): string {
  if (typeof v !== "string" || v === "") throw new ConfigError(field, "must be a non-empty string");
  return v;
}

export function asBool(v: unknown, field: string): boolean {
  if (typeof v !== "boolean") throw new ConfigError(field, "must be true or false");
  return v;
}

export function asPort(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 65535) {
    throw new ConfigError(field, "must be a port number from 0 to 65535");
  }
  return v;
}

export function asStringList(v: unknown, field: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string" || x === "")) {
    throw new ConfigError(field, "must be a list of non-empty strings");
  }
  return v as string[];
}
