import { readFileSync } from "node:fs";
import { join } from "node:path";

const MiB = 1024 * 1024;

/**
 * The memory limit of the container this process runs in, in bytes: cgroup v2's memory.max, else
 * cgroup v1's memory.limit_in_bytes. Undefined when there is none ("max", or v1's huge sentinel) or
 * no cgroup file is readable.
 */
export function containerMemoryLimit(root = "/sys/fs/cgroup"): number | undefined {
  for (const file of ["memory.max", join("memory", "memory.limit_in_bytes")]) {
    let text: string;
    try {
      text = readFileSync(join(root, file), "utf8").trim();
    } catch {
      continue;
    }
    if (text === "max") return undefined;
    const bytes = Number(text);
    // cgroup v1 reports "no limit" as a page-rounded 2^63-1.
    if (!Number.isSafeInteger(bytes) || bytes <= 0 || bytes >= 2 ** 52) return undefined;
    return bytes;
  }
  return undefined;
}

/**
 * V8 heap flags for a container memory limit. Node derives its default heap limit from the memory it
 * sees (the host's, or the cgroup's) and lets the heap grow to about all of it, leaving nothing for
 * what lives outside the heap: under a limit the process can be OOM-killed before V8 feels any
 * pressure to collect. What the operator needs beyond its heap is about 60 MiB (on Node 24 the node
 * binary's own pages are ~47 MiB of it once the run path is loaded; then code, TLS and socket
 * buffers), so the old space gets three quarters of what is left and the young generation shrinks
 * with small limits (Node 24 lets it grow to 64 MiB, two 32 MiB semi-spaces, on a large host).
 * A semi-space of 1 MiB per 256 MiB of limit (16 at most): at the chart's default 256 MiB,
 * 1 MiB semi-spaces lowered the peak resident set of a 1,000-VaultSeed seed by ~4 MiB against
 * 4 MiB ones (bench:vault, median of 5 runs each) for no measurable CPU: what the seed allocates
 * is short-lived, and a small young generation is scavenged more often at the same cost per byte.
 */
export function heapFlagsFor(limitBytes: number): string[] {
  const limit = Math.floor(limitBytes / MiB);
  const oldSpace = Math.max(32, Math.floor((limit - 64) * 0.75));
  const semiSpace = Math.min(16, Math.max(1, 2 ** Math.floor(Math.log2(Math.max(1, limit / 256)))));
  return [`--max-old-space-size=${oldSpace}`, `--max-semi-space-size=${semiSpace}`];
}

/**
 * The environment the operator's container sets beside NODE_OPTIONS (the chart's operator.yaml).
 * glibc gives each thread that allocates its own malloc arena, up to eight per core, and node runs
 * about ten threads (V8's compiler and GC workers, libuv's pool): the compilers' zone memory, freed
 * on a worker, stays in that worker's arena. With one arena it is reused by the next compilation
 * wherever that runs: at 1,000 VaultSeeds the peak resident set was ~5 MiB lower (bench:vault,
 * medians of interleaved runs) for no measurable CPU — V8's heap itself does not use malloc.
 */
export const RUNTIME_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" };

export const nodeOptionsHelp = `Usage: platform-operator node-options

Prints the V8 heap flags for this container's memory limit (cgroup v2 memory.max or v1
memory.limit_in_bytes), or nothing when there is no limit. A container starts the operator with
  NODE_OPTIONS="$(platform-operator node-options)" exec platform-operator run --config ...
so the heap is collected before the limit is reached instead of being OOM-killed.`;

export function nodeOptionsCommand(): number {
  const limit = containerMemoryLimit();
  if (limit !== undefined) process.stdout.write(`${heapFlagsFor(limit).join(" ")}\n`);
  return 0;
}
