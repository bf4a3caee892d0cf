/** Below this length a value is masked where it stands as a whole token, not inside other words. */
const SHORT = 4;
const MASK = "[redacted]";

/** Every string (and number) leaf of the values, longest first, so a longer value is masked whole. */
function leaves(values: unknown): string[] {
  const found = new Set<string>();
  const stack: unknown[] = [values];
  let budget = 100_000; // values are user input: a huge tree must not stall the error path
  while (stack.length > 0 && budget-- > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.length > 0) found.add(v);
    } else if (typeof v === "number" && String(v).length >= SHORT) {
      found.add(String(v));
    } else if (Array.isArray(v)) {
      stack.push(...v);
    } else if (v && typeof v === "object") {
      stack.push(...Object.values(v));
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Masks every value of `values` that appears in `text`. Helm echoes values in schema violations
 * (pattern and enum checks quote them), in `fail`/`required` messages and in YAML errors, and the
 * free-form chart values may hold credentials, so a helm message is never shown unmasked. A string
 * value of any length is withheld: one of four characters or more wherever it appears, a shorter
 * one (a PIN, a three-letter password) where it stands alone between non-word characters, so
 * that a value `ab` does not garble every word containing those letters. Short numbers stay: they
 * are line numbers and counts far more often than settings.
 */
export function redactValues(text: string, values: unknown): string {
  let out = text;
  for (const leaf of leaves(values)) {
    if (!out.includes(leaf)) continue;
    if (leaf.length >= SHORT) out = out.split(leaf).join(MASK);
    else out = out.replace(new RegExp(`(?<![\\w])${escapeRegExp(leaf)}(?![\\w])`, "g"), MASK);
  }
  return out;
}
