import { cores, cpuOf, type PhaseCpu, SELF } from "./cpu-ledger.js";

// The CPU table `bench:vault` prints and the lower bounds that follow from it for the first seed.

export const OPERATOR = "operator";
export const OPENBAO = "OpenBao";
export const APISERVER = "kube-apiserver";
export const ETCD = "etcd";
const SERVERS = [OPENBAO, APISERVER, ETCD];
const LABELS = [OPERATOR, ...SERVERS, SELF];

export const PHASE = {
  floorBefore: "OpenBao floor, before",
  seed: "first seed",
  floorAfter: "OpenBao floor, after",
  statusFloor: "API server floor",
  quiet: "quiet pass (from ready)",
} as const;

const s = (v: number) => v.toFixed(1);
const pct = (v: number) => `${(v * 100).toFixed(0)} %`;

/** phase × process CPU seconds, wall seconds, the host's busy CPU seconds, for one object count. */
export function cpuTable(n: number, phases: PhaseCpu[]): string {
  const header = ["phase", "wall s", ...LABELS, "ours, all", "host busy (all users)", "loadavg at end"];
  const rows = phases.map((p) => [
    p.phase,
    s(p.wall),
    ...LABELS.map((l) => s(p.cpu[l] ?? 0)),
    s(cpuOf(p, LABELS)),
    s(p.host),
    p.loadavg,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return (
    `\nCPU seconds by process, ${n.toLocaleString("en-US")} objects (${cores} cores; host busy: every process on the machine)\n` +
    `${line(header)}\n|${widths.map((w) => "-".repeat(w + 2)).join("|")}|\n` +
    rows.map((r) => `${line(r)}\n`).join("")
  );
}

export interface SeedBounds {
  /** Every process the seed needs (operator, OpenBao, API server, etcd) ÷ cores, seconds. */
  all: number;
  /** The same without the operator's own CPU: what a zero-cost operator would get. */
  servers: number;
  /**
   * The servers' CPU for the work the seed cannot skip: OpenBao's in its floor (mean of before and
   * after) plus the API server's and etcd's in the status floor, ÷ cores.
   */
  required: number | undefined;
  /** CPU seconds of the seed's processes, and of the OpenBao floor's (OpenBao + its client, mean of the runs). */
  seedCpu: number;
  floorCpu: number;
  /** Share of the seed's core-seconds (wall × cores) the host was busy, and ours of it. */
  hostBusy: number;
  oursBusy: number;
}

export function seedBounds(phases: PhaseCpu[]): SeedBounds | undefined {
  const seed = phases.find((p) => p.phase === PHASE.seed);
  if (!seed) return undefined;
  const floors = phases.filter((p) => p.phase === PHASE.floorBefore || p.phase === PHASE.floorAfter);
  const status = phases.find((p) => p.phase === PHASE.statusFloor);
  const mean = (labels: string[]) =>
    floors.length ? floors.reduce((a, p) => a + cpuOf(p, labels), 0) / floors.length : 0;
  const baoFloor = mean([OPENBAO]);
  return {
    all: cpuOf(seed, [OPERATOR, ...SERVERS]) / cores,
    servers: cpuOf(seed, SERVERS) / cores,
    required: status && floors.length ? (baoFloor + cpuOf(status, [APISERVER, ETCD])) / cores : undefined,
    seedCpu: cpuOf(seed, [OPERATOR, ...SERVERS]),
    floorCpu: mean([OPENBAO, SELF]),
    hostBusy: seed.host / (seed.wall * cores),
    oursBusy: cpuOf(seed, LABELS) / (seed.wall * cores),
  };
}

/** The lines saying what those bounds mean against the OpenBao floor. */
export function boundLines(n: number, seedSeconds: number, floorSeconds: number, b: SeedBounds): string {
  const x = (v: number) => `${(v / floorSeconds).toFixed(2)}×`;
  return (
    `  first seed of ${n}, lower bounds on this host (CPU-s ÷ ${cores} cores) against the OpenBao floor of ${s(floorSeconds)} s:\n` +
    `    real seed ${s(seedSeconds)} s = ${x(seedSeconds)}; ` +
    `all its processes' CPU ÷ cores ${s(b.all)} s = ${x(b.all)}; ` +
    `without the operator's CPU (a zero-cost operator) ${s(b.servers)} s = ${x(b.servers)}` +
    (b.required === undefined
      ? "\n"
      : `; the two floors' server CPU (OpenBao's floor + the API server's and etcd's status floor) ${s(b.required)} s = ${x(b.required)}\n`) +
    `    CPU, whatever the load: the seed's processes ${s(b.seedCpu)} CPU-s, the OpenBao floor's (OpenBao and its plain client) ${s(b.floorCpu)}: ${(b.seedCpu / b.floorCpu).toFixed(2)}×\n` +
    `    during the seed the host was busy ${pct(b.hostBusy)} of its core-seconds, the bench's processes ${pct(b.oursBusy)}\n`
  );
}
