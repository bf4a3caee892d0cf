/**
 * Kubernetes label selectors in their string form ("a=b,c!=d,e in (f,g),!h"), parsed so a cache can
 * answer a list with a selector the way the API server would, and tell whether one selector is
 * narrower than another (every requirement of the wider one is among the narrower one's).
 */

export type Requirement =
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "in" | "notin"; values: string[] }
  | { key: string; op: "exists" | "!exists" };

const KEY = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;

/** Splits on the commas that are not inside "(...)". */
function splitTop(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function checkKey(key: string, selector: string): string {
  if (!KEY.test(key)) throw new Error(`label selector "${selector}": "${key}" is not a label key`);
  return key;
}

/** Parses a selector; an empty one selects everything. Throws naming the part it cannot read. */
export function parseLabelSelector(selector: string | undefined): Requirement[] {
  if (!selector?.trim()) return [];
  return splitTop(selector).map((part): Requirement => {
    const set = /^(\S+)\s+(in|notin)\s+\((.*)\)$/.exec(part);
    if (set) {
      const values = set[3]!
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "")
        .sort();
      return { key: checkKey(set[1]!, selector), op: set[2] as "in" | "notin", values };
    }
    const neq = /^([^=!\s]+)\s*!=\s*(\S*)$/.exec(part);
    if (neq) return { key: checkKey(neq[1]!, selector), op: "!=", value: neq[2]! };
    const eq = /^([^=!\s]+)\s*==?\s*(\S*)$/.exec(part);
    if (eq) return { key: checkKey(eq[1]!, selector), op: "=", value: eq[2]! };
    if (part.startsWith("!")) return { key: checkKey(part.slice(1).trim(), selector), op: "!exists" };
    return { key: checkKey(part, selector), op: "exists" };
  });
}

/** Whether labels satisfy every requirement (an absent label is "not equal" and "not in"). */
export function matchesLabels(
  reqs: readonly Requirement[],
  labels: Record<string, string> | undefined,
): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case "=":
        return has && v === r.value;
      case "!=":
        return !has || v !== r.value;
      case "in":
        return has && r.values.includes(v!);
      case "notin":
        return !has || !r.values.includes(v!);
      case "exists":
        return has;
      // "!exists"
      default:
        return !has;
    }
  });
}

function canonical(r: Requirement): string {
  if (r.op === "in" || r.op === "notin") return `${r.key} ${r.op} (${r.values.join(",")})`;
  if (r.op === "exists") return r.key;
  if (r.op === "!exists") return `!${r.key}`;
  return `${r.key}${r.op}${(r as { value: string }).value}`;
}

/**
 * Whether everything `narrow` selects is also selected by `wide`: true when each requirement of
 * `wide` appears in `narrow` (a sufficient test, not a complete one: "a=b" is not seen to imply "a").
 */
export function selectorWithin(narrow: readonly Requirement[], wide: readonly Requirement[]): boolean {
  const have = new Set(narrow.map(canonical));
  // "k=v" and "k in (...)" also say the label exists.
  const present = new Set(narrow.filter((r) => r.op === "=" || r.op === "in").map((r) => r.key));
  return wide.every((r) => have.has(canonical(r)) || (r.op === "exists" && present.has(r.key)));
}
