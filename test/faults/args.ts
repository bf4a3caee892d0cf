export interface FaultArgs {
  all: boolean;
  seed: number;
  sample: number;
  paths: number;
  /** With --all, the first crash point (a long campaign resumed; with --phase, of that phase's writes): 1 by default. */
  from: number;
  /** With --all, the last crash point (a long campaign in chunks); undefined: the last write. */
  to?: number;
  /** Crash points (off with --no-kills). */
  kills: boolean;
  /** Each lifecycle's outages (--outages). */
  outages: boolean;
  /** Only the outages whose backend is, or whose label contains, one of these (--outage TEXT, repeatable; implies --outages). */
  outageFilter: string[];
  /** Lifecycle name prefixes to run (lower case); empty: all. */
  only: string[];
  /** Crash points only among the writes of this phase (--phase NAME). */
  phase?: string;
  /** Optional phases of the OpenBao lifecycle left out (--skip NAME, repeatable). */
  skip: SkippablePhase[];
  /** The OpenBao lifecycle's upgrade blue-green instead of rolling (--bluegreen). */
  blueGreen: boolean;
  /** Exactly these crash points (--points 7,18-25; of the phase's writes with --phase). */
  points?: number[];
  /** The OpenBao lifecycle's OpenBao writes counted as crash points too (--bao-writes). */
  baoWrites: boolean;
  /** One crash point per kind of write (method and path) instead of per write, at its first (--kinds). */
  kinds?: boolean;
  /** Crash points only among this backend's writes (--backend kube|bao). */
  backend?: string;
  /**
   * The voter count the OpenBao scale phase goes to and back from (--scale-to N): 5 by default
   * (3 → 5 → 3); 1 scales in first (3 → 1 → 3), where the departing pods may hold Raft's lead.
   */
  scaleTo?: number;
}

/** The OpenBao lifecycle's phases a campaign may leave out, to spend its time on the others. */
export const SKIPPABLE = ["backup", "upgrade", "restore", "scale"] as const;
export type SkippablePhase = (typeof SKIPPABLE)[number];

/**
 * `--all`, `--seed N`, `--sample K`, `--paths P`, `--lifecycle NAME` (repeatable), `--from N`,
 * `--to N`, `--outages`, `--no-kills`, `--openbao` (the OpenBao lifecycle, on the local node: only
 * run when asked, alone or with `--lifecycle` for others), `--phase NAME` (crash points of one
 * phase only), `--skip backup|upgrade|restore|scale` (an OpenBao phase left out; no backup, no
 * restore), `--bluegreen` (the OpenBao upgrade blue-green, its phase `bluegreen`), `--points 7,18-25`
 * (exactly those crash points: several ranges after one run without faults), `--bao-writes` (the
 * operator's OpenBao writes are crash points too), `--backend kube|bao` (crash points among that
 * backend's writes only; N then counts that backend's writes), `--kinds` (one crash point per kind
 * of write — method and path — at its first in the phase: a kill lands on that very write however
 * many writes before it differ between runs), `--scale-to N` (the OpenBao scale
 * phase goes to N voters and back: 1 scales in first), `--outage TEXT` (only the outages whose
 * backend is TEXT or whose label contains it; repeatable; implies --outages).
 */
export function parseFaultArgs(argv: string[], now: number): FaultArgs {
  const out: FaultArgs = {
    all: false,
    seed: now % 1_000_000,
    sample: 5,
    paths: 200,
    from: 1,
    kills: true,
    outages: false,
    outageFilter: [],
    only: [],
    skip: [],
    blueGreen: false,
    baoWrites: false,
  };
  const count = (flag: string, value: string | undefined, min: number): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`${flag}: must be a whole number of at least ${min}, got ${value}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--all") out.all = true;
    else if (a === "--seed") out.seed = count(a, argv[++i], 0);
    else if (a === "--sample") out.sample = count(a, argv[++i], 1);
    else if (a === "--paths") out.paths = count(a, argv[++i], 1);
    else if (a === "--from") out.from = count(a, argv[++i], 1);
    else if (a === "--to") out.to = count(a, argv[++i], 1);
    else if (a === "--openbao") out.only.push("openbao");
    else if (a === "--bluegreen") out.blueGreen = true;
    else if (a === "--bao-writes") out.baoWrites = true;
    else if (a === "--kinds") out.kinds = true;
    else if (a === "--scale-to") out.scaleTo = count(a, argv[++i], 1);
    else if (a === "--backend") {
      const v = argv[++i];
      if (v !== "kube" && v !== "bao") throw new Error(`--backend: must be kube or bao, got ${v}`);
      out.backend = v;
    } else if (a === "--outages") out.outages = true;
    else if (a === "--outage") {
      const v = argv[++i];
      if (!v)
        throw new Error("--outage: give a backend (kube, bao-net, s3, …) or words of an outage's label");
      out.outages = true;
      out.outageFilter.push(v.toLowerCase());
    } else if (a === "--no-kills") out.kills = false;
    else if (a === "--lifecycle") out.only.push((argv[++i] ?? "").toLowerCase());
    else if (a === "--phase") {
      const v = argv[++i];
      if (!v)
        throw new Error(
          "--phase: give a phase name (create, canary, backup, restore, upgrade, bluegreen, scale, delete)",
        );
      out.phase = v;
    } else if (a === "--skip") {
      const v = argv[++i];
      if (!SKIPPABLE.includes(v as SkippablePhase))
        throw new Error(`--skip: must be one of ${SKIPPABLE.join(", ")}, got ${v}`);
      out.skip.push(v as SkippablePhase);
    } else if (a === "--points") out.points = parsePoints(argv[++i]);
    else
      throw new Error(
        `unknown argument ${a}: use --all, --seed N, --sample K, --paths P, --lifecycle NAME, --from N, --to N, --outages, --outage TEXT, --no-kills, --openbao, --phase NAME, --skip PHASE, --points LIST, --bluegreen, --bao-writes, --kinds, --backend kube|bao, --scale-to N`,
      );
  }
  return out;
}

/** "7,18-25" → [7, 18, 19, …, 25], sorted, each once; anything else is refused by the flag's name. */
export function parsePoints(v: string | undefined): number[] {
  const bad = () =>
    new Error(`--points: give crash points as N, N-M, comma-separated (e.g. 7,18-25), got ${v}`);
  if (!v) throw bad();
  const out = new Set<number>();
  for (const part of v.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw bad();
    const lo = Number(m[1]);
    const hi = Number(m[2] ?? m[1]);
    if (lo < 1 || hi < lo) throw bad();
    for (let n = lo; n <= hi; n++) out.add(n);
  }
  return [...out].sort((a, b) => a - b);
}

/** Whether outage `o` is one `--outage` chose (every one when none was given). */
export function outageChosen(filter: readonly string[], o: { backend: string; label?: string }): boolean {
  return (
    filter.length === 0 ||
    filter.some((f) => o.backend.toLowerCase() === f || (o.label ?? "").toLowerCase().includes(f))
  );
}
