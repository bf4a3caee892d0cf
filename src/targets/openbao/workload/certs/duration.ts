/** Go-style durations as the CRD's pattern accepts them ("720h", "1h30m", "1.5h", "30d"). Pure. */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

export function parseDurationMs(text: string, field: string): number {
  const part = /([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h|d)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m) break;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    at = part.lastIndex;
  }
  if (text.length === 0 || at !== text.length)
    throw new Error(`${field}: ${JSON.stringify(text)} is not a duration such as "720h" or "1h30m"`);
  if (total <= 0) throw new Error(`${field}: must be longer than zero`);
  return total;
}
