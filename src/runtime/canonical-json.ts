/**
 * RFC 8785 (JSON Canonicalization Scheme): one byte form for a JSON value, whoever wrote it. What a
 * signature over JSON covers when the signer canonicalized it (Rekor's SignedEntryTimestamp is over
 * the RFC 8785 form of its entry), and a sound key for comparing or hashing values. Object members
 * are sorted by their names' UTF-16 code units (JavaScript's default string order), there is no
 * whitespace, and strings and numbers are written as ECMAScript's JSON.stringify writes them, which
 * is what RFC 8785 prescribes for both. Members whose value is undefined are left out, as
 * JSON.stringify leaves them out.
 * Pure; throws on what JSON cannot hold (a non-finite number, undefined, a function).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`${value} has no JSON form`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  throw new Error(`a ${typeof value} has no JSON form`);
}
