import { formed, observeFormation, votersOf } from "../src/cli/openbao-formation.js";
import type { KubeClient } from "../src/runtime/client.js";
import { auditLogPath } from "../src/testenv/node/components.js";
import type { LocalNode } from "../src/testenv/node/node.js";
import { makeTempDir, removeTempDir } from "../src/testenv/tempdirs.js";
import { metricSum } from "../test/support/openbao-operator.js";
import { createCluster, freshNamespace, say, seconds, settled, until } from "./openbao-common.js";
import { type QuietWindow, quietTable, quietWindow } from "./openbao-quiet.js";
import { memoryMiB, startOperatorInNode } from "./operator-in-node.js";

// bench:openbao's fleet mode (`--clusters N`, or BENCH_FLEET=N): N one-voter clusters created at
// once under a fresh operator on its default intervals — the time each took from the apply to
// formed (initialized, its voter ready and listed by OpenBao as a Raft voter), the operator's API
// requests from the apply to the last one formed, its peak RSS then and what the heap held at the
// largest RSS seen, and one quiet window once all settled; every cost also per cluster (memory as
// the growth over the idle operator's RSS, divided by N).

export interface FleetResult {
  clusters: number;
  /** Milliseconds from the apply to formed, per cluster, in creation order. */
  formedMs: number[];
  allFormedMs: number;
  apiRequests: number;
  peakMiB: number;
  /** VmRSS of the operator once its caches synced, before any cluster. */
  idleMiB: number;
  /** What V8 held once idle (before any cluster), then when the largest RSS was sampled during
   * formation (the bench samples every 2 s), then after the quiet window. */
  atIdle: MemorySample;
  atLargest: MemorySample;
  atSteady: MemorySample;
  window: QuietWindow;
}

export interface MemorySample {
  rssMiB: number;
  /** V8's heap spaces' committed size (new, old, code, large_object…), MiB. */
  spaces: Record<string, number>;
  /** Memory of JavaScript objects held outside the heap (Buffers), MiB. */
  externalMiB: number;
}

const MiB = 1024 * 1024;

/** The heap's committed size by space and the external memory, from the operator's /metrics. */
export function heapSample(metrics: string, rssMiB: number): MemorySample {
  const spaces: Record<string, number> = {};
  let externalMiB = 0;
  for (const line of metrics.split("\n")) {
    const space = /^nodejs_heap_space_size_total_bytes\{space="([^"]+)"\} (\S+)/.exec(line);
    if (space) spaces[space[1]!] = Number(space[2]) / MiB;
    const ext = /^nodejs_external_memory_bytes (\S+)/.exec(line);
    if (ext) externalMiB = Number(ext[1]) / MiB;
  }
  return { rssMiB, spaces, externalMiB };
}

const requests = (m: string) => metricSum(m, "rest_client_requests_total");

export async function fleet(
  node: LocalNode,
  client: KubeClient,
  n: number,
  windowMs: number,
): Promise<FleetResult> {
  say(`fleet: making ${n} namespaces...`);
  const namespaces: string[] = [];
  for (let i = 0; i < n; i++) namespaces.push(await freshNamespace(client, "bench-fleet"));
  const dir = makeTempDir("bench-openbao-fleet");
  const op = await startOperatorInNode(node, namespaces, dir, {}, "openbao operator (bench, fleet)");
  try {
    // Its start-up lists and watches are not the clusters' cost.
    await settled(op, 0);
    const before = requests(await op.metrics());
    const idleMiB = memoryMiB(op.pid, "VmRSS");
    const atIdle = heapSample(await op.metrics(), idleMiB);
    say(`fleet: creating ${n} one-voter clusters...`);
    const t0 = performance.now();
    for (const ns of namespaces) await createCluster(client, ns, 1);
    const formedMs: (number | undefined)[] = namespaces.map(() => undefined);
    let peakMiB = 0;
    let atLargest: MemorySample = { rssMiB: 0, spaces: {}, externalMiB: 0 };
    let lastSaid = performance.now();
    await until(
      `${n} formed clusters`,
      async () => {
        for (let i = 0; i < n; i++) {
          if (formedMs[i] !== undefined) continue;
          const f = await observeFormation(
            client,
            { name: "bao", namespace: namespaces[i]! },
            { withPeers: true },
          ).catch(() => undefined);
          if (f && formed(f) && votersOf(f) === 1) formedMs[i] = performance.now() - t0;
        }
        peakMiB = memoryMiB(op.pid, "VmHWM");
        const rss = memoryMiB(op.pid, "VmRSS");
        if (rss > atLargest.rssMiB) atLargest = heapSample(await op.metrics(), rss);
        const left = formedMs.filter((t) => t === undefined).length;
        // Progress on stderr, so a run cut short still says how far it got.
        if (performance.now() - lastSaid > 30_000) {
          lastSaid = performance.now();
          say(
            `fleet: ${n - left}/${n} formed after ${seconds(lastSaid - t0)}, peak RSS ${peakMiB.toFixed(1)} MiB`,
          );
        }
        return left === 0 ? true : undefined;
      },
      3_600_000,
      2000,
    );
    const allFormedMs = performance.now() - t0;
    const apiRequests = requests(await op.metrics()) - before;
    say(`fleet: all ${n} formed in ${seconds(allFormedMs)}; waiting for them to settle...`);
    await settled(op, n);
    say(`fleet: measuring ${n} clusters for ${seconds(windowMs)}...`);
    const window = await quietWindow(op, n, windowMs, auditLogPath(node.dir));
    const atSteady = heapSample(await op.metrics(), memoryMiB(op.pid, "VmRSS"));
    return {
      clusters: n,
      formedMs: formedMs as number[],
      allFormedMs,
      apiRequests,
      peakMiB,
      idleMiB,
      atIdle,
      atLargest,
      atSteady,
      window,
    };
  } finally {
    await op.stop();
    removeTempDir(dir);
  }
}

/** The fleet's figures as lines: totals, then per cluster. */
export function fleetTable(r: FleetResult, resync: string, flags: string): string[] {
  const sorted = [...r.formedMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const w = r.window;
  const apiQuiet = Object.values(w.apiByMethod).reduce((a, b) => a + b, 0);
  const per = (x: number, digits = 2) => (x / r.clusters).toFixed(digits);
  const mib = (x: number) => `${x.toFixed(1)} MiB`;
  const heap = (m: MemorySample) => {
    const spaces = Object.entries(m.spaces)
      .filter(([, v]) => v >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(", ");
    const total = Object.values(m.spaces).reduce((a, b) => a + b, 0);
    return `RSS ${mib(m.rssMiB)}: V8 heap committed ${mib(total)} (${spaces || "not read"}), external ${mib(m.externalMiB)}`;
  };
  return [
    `\nFleet: ${r.clusters} one-voter clusters created at once, a fresh operator on its default intervals (${flags})`,
    `all formed (apply → initialized, ready, Raft voter): ${seconds(r.allFormedMs)}; per cluster: first ${seconds(sorted[0]!)}, median ${seconds(at(0.5))}, 90th ${seconds(at(0.9))}, last ${seconds(sorted.at(-1)!)}`,
    `API requests apply → all formed: ${r.apiRequests} (${per(r.apiRequests, 1)} per cluster)`,
    `operator RSS: idle ${mib(r.idleMiB)} before any cluster, peak ${mib(r.peakMiB)} by the time all formed, steady ${mib(w.rssMiB)} after the quiet window; per cluster over idle: peak ${per(r.peakMiB - r.idleMiB)} MiB, steady ${per(w.rssMiB - r.idleMiB)} MiB`,
    `memory idle: ${heap(r.atIdle)}`,
    `memory at the largest RSS sampled in formation: ${heap(r.atLargest)}`,
    `memory steady: ${heap(r.atSteady)}`,
    `quiet ${seconds(w.seconds * 1000)}: CPU ${w.cpuSeconds.toFixed(2)} s (${per(w.cpuSeconds, 3)} s per cluster), API requests ${apiQuiet} (${per(apiQuiet)} per cluster), OpenBao requests ${w.baoRequests} (${per(w.baoRequests)} per cluster), passes ${w.reconciles}`,
    `formed per cluster (s, creation order): ${r.formedMs.map((t) => (t / 1000).toFixed(0)).join(" ")}`,
    ...quietTable([w], resync).slice(1),
  ];
}
