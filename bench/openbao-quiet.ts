import { NODE_ADMIN_USER } from "../src/testenv/node/pki.js";
import { metricSum } from "../test/support/openbao-operator.js";
import { auditLines, describeRequests, requestsInWindow, warnLines } from "./audit-window.js";
import { memoryMiB, type OperatorInNode } from "./operator-in-node.js";
import { cpuSeconds } from "./proc.js";

// The quiet window of bench:openbao: what a settled operator costs while nothing changes — CPU
// seconds of its process, its API requests by HTTP method (watches are GETs, counted with them) and
// its OpenBao requests, read from /proc and from its own /metrics before and after the window; what
// the node's API server logged for it in its audit log and its own lines at warn or above then.

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
  /** The operator's requests by "verb resource" in the node API server's audit log. */
  audited: Record<string, number>;
  /** The operator's lines at warn or above (their messages). */
  warnings: string[];
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

/** Measures `op` over `ms` of doing nothing but waiting; `auditLog` is the node API server's. */
export async function quietWindow(
  op: OperatorInNode,
  clusters: number,
  ms: number,
  auditLog: string,
): Promise<QuietWindow> {
  const before = await op.metrics();
  const cpu0 = cpuSeconds(op.pid);
  const out0 = op.output().length;
  const wall0 = Date.now();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const after = await op.metrics();
  const cpu1 = cpuSeconds(op.pid);
  const seconds = (performance.now() - t0) / 1000;
  const wall1 = Date.now();
  const warnings = warnLines(op.output().slice(out0));
  // The operator's user is the node's admin; its clients' user agents tell it from the rest.
  const who = { user: NODE_ADMIN_USER, userAgentPrefix: "platform-operator" };
  const audited = requestsInWindow(auditLines(auditLog), who, wall0, wall1);
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
    audited,
    warnings,
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
    const a = describeRequests(w.audited);
    out.push(
      `audit log, operator's requests in the window with ${w.clusters} cluster(s): ${a.listed}${a.listed !== "none" && a.onlyWatches ? " — only re-watches" : ""}`,
    );
    out.push(
      `operator's lines at warn or above in the window with ${w.clusters} cluster(s): ${w.warnings.length}${w.warnings.length ? ` (first: ${w.warnings.slice(0, 5).join(" | ")})` : ""}`,
    );
  }
  return out;
}
