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

/**
 * Refuses keys a section does not know. A misspelt key would otherwise be ignored and leave its
 * default in force (a misspelt `observeOnly` would leave writes on), so it must stop the start.
 */
export function rejectUnknownKeys(
  section: Record<string, unknown>,
  known: readonly string[],
  field: string,
): void {
  for (const key of Object.keys(section)) {
    if (known.includes(key)) continue;
    const near = known.find((k) => k.toLowerCase() === key.toLowerCase());
    const hint = near ? `did you mean ${near}?` : `known keys: ${[...known].sort().join(", ")}`;
    throw new ConfigError(field === "(config)" ? key : `${field}.${key}`, `unknown key (${hint})`);
  }
}

/** A mapping whose keys must all be among `known`. */
export function asSection(v: unknown, field: string, known: readonly string[]): Record<string, unknown> {
  const section = asObject(v, field);
  rejectUnknownKeys(section, known, field);
  return section;
}

const DURATION = /^(\d+)(ms|s|m|h)$/;

/** "30s", "10m", "1h", "500ms" in milliseconds. */
export function asDuration(v: unknown, field: string): number {
  const m = typeof v === "string" ? DURATION.exec(v) : null;
  if (!m) throw new ConfigError(field, 'must be a duration such as "30s", "10m" or "1h"');
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
  return Number(m[1]) * unit;
}
