import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { heapFlagsFor, RUNTIME_ENV } from "../src/cli/heap.js";

// The node flags the benches start the operator with: the heap flags the chart derives from its
// default memory limit (what `platform-operator node-options` prints in such a container), and the
// environment the chart sets beside them (RUNTIME_ENV), so memory is measured on the runtime we
// ship. BENCH_MEMORY_LIMIT=N takes another limit in MiB; 0 runs it with node's defaults for this
// host and none of that environment. BENCH_NODE_FLAGS adds flags after those (a later V8 flag
// wins), and a variable of RUNTIME_ENV set for the bench overrides the shipped value, to compare
// settings.

const CHART_VALUES = fileURLToPath(
  new URL("../../deploy/chart/platform-operator/values.yaml", import.meta.url),
);

/** resources.limits.memory of the chart's values (Mi or Gi), the limit the operator ships with. */
export function chartMemoryLimitMiB(): number {
  const values = parse(readFileSync(CHART_VALUES, "utf8")) as {
    resources?: { limits?: { memory?: string } };
  };
  const m = /^(\d+)(Mi|Gi)$/.exec(values.resources?.limits?.memory ?? "");
  if (!m) throw new Error(`${CHART_VALUES}: resources.limits.memory is not in Mi or Gi`);
  return Number(m[1]) * (m[2] === "Gi" ? 1024 : 1);
}

export interface ShippedFlags {
  /** The limit the heap flags are for, MiB; 0: node's defaults. */
  memoryLimitMiB: number;
  flags: string[];
  /** Environment variables to start the operator with (over the bench's own). */
  env: Record<string, string>;
  /** How the operator ran, for a report line: node version, flags and environment. */
  note: string;
}

export function shippedFlags(env: NodeJS.ProcessEnv = process.env): ShippedFlags {
  const raw = env["BENCH_MEMORY_LIMIT"];
  const memoryLimitMiB = raw === undefined ? chartMemoryLimitMiB() : Number(raw);
  if (!Number.isInteger(memoryLimitMiB) || memoryLimitMiB < 0)
    throw new Error(`BENCH_MEMORY_LIMIT must be a whole number of MiB (0: node's defaults), got ${raw}`);
  const flags = [
    ...(memoryLimitMiB > 0 ? heapFlagsFor(memoryLimitMiB * 1024 * 1024) : []),
    ...(env["BENCH_NODE_FLAGS"] ?? "").split(" ").filter(Boolean),
  ];
  const shippedEnv: Record<string, string> = {};
  if (memoryLimitMiB > 0)
    for (const [name, value] of Object.entries(RUNTIME_ENV)) shippedEnv[name] = env[name] ?? value;
  const limitNote = memoryLimitMiB > 0 ? ` (the chart's flags for a ${memoryLimitMiB} MiB limit)` : "";
  const envNote = Object.entries(shippedEnv)
    .map(([k, v]) => `${k}=${v} `)
    .join("");
  const note =
    flags.length > 0
      ? `${envNote}node ${process.version} ${flags.join(" ")}${limitNote}`
      : `node ${process.version} with its default heap sizing`;
  return { memoryLimitMiB, flags, env: shippedEnv, note };
}
