/**
 * RFC 8785 (JSON Canonicalization Scheme): one byte form for a JSON value, whoever wrote it. What a
 * signature over JSON covers when the signer canonicalized it (Rekor's SignedEntryTimestamp is over
 * the RFC 8785 form of its entry), and a sound key for comparing or hashing values. Object members
 * are sorted by their names' UTF-16 code units (JavaScript's default string order), there is no
 * whitespace, and strings and numbers are written as ECMAScript's JSON.stringify writes them, which
 * is what RFC 8785 prescribes for both. Members whose value is undefined are left out, as
 * JSON.stringify leaves them out.
 * Pure; throws on what JSON cannot hold (a non-finite number, undefined, a function), unless
 * `loose` is set.
 */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  return write(value, options.loose === true);
}

export interface CanonicalOptions {
  /**
   * Write what JSON cannot hold as JSON.stringify does (undefined, functions and non-finite numbers
   * become null) instead of throwing: for comparing and hashing values built in memory, where a
   * field left undefined or a NaN must give a key, not an error. Never for bytes a signature covers.
   */
  loose?: boolean;
}

function write(value: unknown, loose: boolean): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (Number.isFinite(value)) return JSON.stringify(value);
    if (loose) return "null";
    throw new Error(`${value} has no JSON form`);
  }
  if (Array.isArray(value)) return `[${value.map((v) => write(v, loose)).join(",")}]`;
  if (typeof value === "object") {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${write(v, loose)}`).join(",")}}`;
  }
  if (loose) return "null";
  throw new Error(`a ${typeof value} has no JSON form`);
}
