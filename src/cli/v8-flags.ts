import { setFlagsFromString } from "node:v8";

/**
 * V8 flags the `run` command sets for itself before it loads anything else. Node accepts only a
 * few V8 flags in NODE_OPTIONS (the chart's heap flags among them), so these are set from inside,
 * where they hold however the image is started.
 *
 * --no-maglev-inlining: Maglev, the mid-tier compiler, builds one graph per hot function with its
 * callees inlined; the graphs live in zone memory taken from malloc, and when the workers start a
 * dozen compilations of the reconcile path run together. At 1,000 VaultSeeds (bench:vault, the
 * shipped runtime) the peak resident set's median went from 97.6 MiB (17 runs) to 93.7 (11), for
 * about 6 % more operator CPU in the first seed; TurboFan, which optimizes what stays hot, still
 * inlines.
 */
export const RUNTIME_V8_FLAGS: readonly string[] = ["--no-maglev-inlining"];

/** Sets RUNTIME_V8_FLAGS; call before the run path's modules are loaded, so nothing is compiled yet. */
export function applyRuntimeV8Flags(): void {
  for (const flag of RUNTIME_V8_FLAGS) setFlagsFromString(flag);
}
