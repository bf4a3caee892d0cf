const MIN_SECRET_LENGTH = 4;
const MASK = "[redacted]";

/** Every string (and number) leaf of the values, longest first, so a longer value is masked whole. */
function leaves(values: unknown): string[] {
  const found = new Set<string>();
  const stack: unknown[] = [values];
  let budget = 100_000; // values are user input: a huge tree must not stall the error path
  while (stack.length > 0 && budget-- > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.length >= MIN_SECRET_LENGTH) found.add(v);
    } else if (typeof v === "number" && String(v).length >= MIN_SECRET_LENGTH) {
      found.add(String(v));
    } else if (Array.isArray(v)) {
      stack.push(...v);
    } else if (v && typeof v === "object") {
      stack.push(...Object.values(v));
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * Masks every value of `values` that appears in `text`. Helm echoes values in schema violations
 * (pattern and enum checks quote them), in `fail`/`required` messages and in YAML errors, and the
 * free-form chart values may hold credentials, so a helm message is never shown unmasked. Values
 * shorter than four characters stay: they cannot be secrets worth the garbled message.
 */
export function redactValues(text: string, values: unknown): string {
  let out = text;
  for (const leaf of leaves(values)) {
    if (out.includes(leaf)) out = out.split(leaf).join(MASK);
  }
  return out;
}
