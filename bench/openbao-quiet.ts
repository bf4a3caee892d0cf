import { metricSum } from "../test/support/openbao-operator.js";
import { memoryMiB, type OperatorInNode } from "./operator-in-node.js";
import { cpuSeconds } from "./proc.js";

// The quiet window of bench:openbao: what a settled operator costs while nothing changes — CPU
// seconds of its process, its API requests by HTTP method (watches are GETs, counted with them) and
// its OpenBao requests, read from /proc and from its own /metrics before and after the window.

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export interface QuietWindow {
  clusters: number;
  seconds: number;
  cpuSeconds: number;
  apiByMethod: Record<string, number>;
  baoRequests: number;
  /** OpenBao requests by "METHOD endpoint", only those that happened. */
  baoByEndpoint: Record<string, number>;
  /** The cached reader's reads that went to the API server, by "verb resource reason". */
  liveReads: Record<string, number>;
  reconciles: number;
  rssMiB: number;
}

/** Sums of one counter by the values of some of its labels ("a b" keys), from a /metrics text. */
function samplesBy(text: string, metric: string, labels: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${metric}{`)) continue;
    const key = labels.map((l) => new RegExp(`${l}="([^"]*)"`).exec(line)?.[1] ?? "?").join(" ");
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return out;
}

/** What grew between two samplings, only the keys that did. */
function grown(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

const reconciles = (m: string) =>
  metricSum(m, "controller_runtime_reconcile_total", { controller: "openbaocluster" });

/** Measures `op` over `ms` of doing nothing but waiting. */
export async function quietWindow(op: OperatorInNode, clusters: number, ms: number): Promise<QuietWindow> {
  const before = await op.metrics();
  const cpu0 = cpuSeconds(op.pid);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const after = await op.metrics();
  const cpu1 = cpuSeconds(op.pid);
  const seconds = (performance.now() - t0) / 1000;
  const apiByMethod: Record<string, number> = {};
  for (const method of METHODS)
    apiByMethod[method] =
      metricSum(after, "rest_client_requests_total", { method }) -
      metricSum(before, "rest_client_requests_total", { method });
  const bao = (m: string) => samplesBy(m, "openbao_api_requests_total", ["method", "endpoint"]);
  const baoByEndpoint = grown(bao(before), bao(after));
  const baoRequests = Object.values(baoByEndpoint).reduce((a, b) => a + b, 0);
  const live = (m: string) => samplesBy(m, "cached_reader_live_reads_total", ["verb", "resource", "reason"]);
  const liveReads = grown(live(before), live(after));
  return {
    clusters,
    seconds,
    cpuSeconds: cpu1 - cpu0,
    apiByMethod,
    baoRequests,
    baoByEndpoint,
    liveReads,
    reconciles: reconciles(after) - reconciles(before),
    rssMiB: memoryMiB(op.pid, "VmRSS"),
  };
}

/** The windows as a table, one row per cluster count. */
export function quietTable(windows: QuietWindow[], resync: string): string[] {
  const header = [
    "clusters",
    "window",
    "CPU s",
    "API requests (by method)",
    "OpenBao requests",
    "passes",
    "RSS MiB",
  ];
  const rows = windows.map((w) => {
    const api = METHODS.filter((m) => w.apiByMethod[m]).map((m) => `${m} ${w.apiByMethod[m]}`);
    const total = Object.values(w.apiByMethod).reduce((a, b) => a + b, 0);
    return [
      String(w.clusters),
      `${w.seconds.toFixed(0)} s`,
      w.cpuSeconds.toFixed(2),
      `${total}${api.length ? ` (${api.join(", ")})` : ""}`,
      String(w.baoRequests),
      String(w.reconciles),
      w.rssMiB.toFixed(1),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const out = [
    `\nQuiet window (settled clusters, nothing changing; resyncInterval ${resync}):`,
    line(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.map(line),
  ];
  const listed = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([k, v]) => `${k} ×${v}`)
      .join(", ");
  for (const w of windows) {
    if (w.baoRequests) out.push(`OpenBao requests with ${w.clusters} cluster(s): ${listed(w.baoByEndpoint)}`);
    if (Object.keys(w.liveReads).length)
      out.push(`reads not served from the cache with ${w.clusters} cluster(s): ${listed(w.liveReads)}`);
  }
  return out;
}
