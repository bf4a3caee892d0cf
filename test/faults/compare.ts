import { isDeepStrictEqual } from "node:util";
import type { Checkpoints } from "./lifecycle.js";

/** "the same end state as the run without faults": each checkpoint equal, every difference named. */
export function sameAsBaseline(run: Checkpoints, baseline: Checkpoints): string[] {
  const out: string[] = [];
  for (const [name, want] of baseline) {
    const got = run.get(name);
    if (got === undefined) out.push(`checkpoint ${name}: not reached`);
    else differences(got, want, name, out);
  }
  return out;
}

function differences(got: unknown, want: unknown, at: string, out: string[]): void {
  if (isDeepStrictEqual(got, want)) return;
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (isRecord(got) && isRecord(want)) {
    const keys = new Set([...Object.keys(got), ...Object.keys(want)]);
    for (const k of [...keys].sort()) differences(got[k], want[k], `${at}.${k}`, out);
    return;
  }
  out.push(`${at}: ${JSON.stringify(got)} where the run without faults had ${JSON.stringify(want)}`);
}
