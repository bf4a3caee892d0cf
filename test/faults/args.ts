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
  /** Lifecycle name prefixes to run (lower case); empty: all. */
  only: string[];
  /** Crash points only among the writes of this phase (--phase NAME). */
  phase?: string;
  /** Optional phases of the OpenBao lifecycle left out (--skip NAME, repeatable). */
  skip: SkippablePhase[];
}

/** The OpenBao lifecycle's phases a campaign may leave out, to spend its time on the others. */
export const SKIPPABLE = ["upgrade", "restore", "scale"] as const;
export type SkippablePhase = (typeof SKIPPABLE)[number];

/**
 * `--all`, `--seed N`, `--sample K`, `--paths P`, `--lifecycle NAME` (repeatable), `--from N`,
 * `--to N`, `--outages`, `--no-kills`, `--openbao` (the OpenBao lifecycle, on the local node: only
 * run when asked, alone or with `--lifecycle` for others), `--phase NAME` (crash points of one
 * phase only), `--skip upgrade|restore|scale` (an OpenBao phase left out).
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
    only: [],
    skip: [],
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
    else if (a === "--outages") out.outages = true;
    else if (a === "--no-kills") out.kills = false;
    else if (a === "--lifecycle") out.only.push((argv[++i] ?? "").toLowerCase());
    else if (a === "--phase") {
      const v = argv[++i];
      if (!v)
        throw new Error(
          "--phase: give a phase name (create, canary, backup, restore, upgrade, scale, delete)",
        );
      out.phase = v;
    } else if (a === "--skip") {
      const v = argv[++i];
      if (!SKIPPABLE.includes(v as SkippablePhase))
        throw new Error(`--skip: must be one of ${SKIPPABLE.join(", ")}, got ${v}`);
      out.skip.push(v as SkippablePhase);
    } else
      throw new Error(
        `unknown argument ${a}: use --all, --seed N, --sample K, --paths P, --lifecycle NAME, --from N, --to N, --outages, --no-kills, --openbao, --phase NAME, --skip PHASE`,
      );
  }
  return out;
}
