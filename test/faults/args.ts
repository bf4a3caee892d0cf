export interface FaultArgs {
  all: boolean;
  seed: number;
  sample: number;
  paths: number;
  /** With --all, the first crash point (a long campaign resumed): 1 by default. */
  from: number;
  /** With --all, the last crash point (a long campaign in chunks); undefined: the last write. */
  to?: number;
  /** Crash points (off with --no-kills). */
  kills: boolean;
  /** Each lifecycle's outages (--outages). */
  outages: boolean;
  /** Lifecycle name prefixes to run (lower case); empty: all. */
  only: string[];
}

/**
 * `--all`, `--seed N`, `--sample K`, `--paths P`, `--lifecycle NAME` (repeatable), `--from N`,
 * `--to N`, `--outages`, `--no-kills`, `--openbao` (the OpenBao lifecycle, on the local node: only
 * run when asked, alone or with `--lifecycle` for others).
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
    else
      throw new Error(
        `unknown argument ${a}: use --all, --seed N, --sample K, --paths P, --lifecycle NAME, --from N, --to N, --outages, --no-kills, --openbao`,
      );
  }
  return out;
}
