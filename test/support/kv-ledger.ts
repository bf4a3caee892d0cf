// The bookkeeping of the KV load client (kv-load.ts), kept free of I/O so its arithmetic is unit
// tested: counters, the windows during which requests failed, leader changes, and the verdict on
// acknowledged writes once they are read back.

export type LoadOp = "write" | "read";

/** One finished request of the load loop. Times are milliseconds on one clock (Date.now()). */
export interface RequestOutcome {
  op: LoadOp;
  ok: boolean;
  startedAt: number;
  endedAt: number;
  /** Why it failed: an HTTP status and OpenBao's error strings, or a transport error code. */
  error?: string;
  /** A read that answered but with another value than the one acknowledged: a stale or lost write. */
  mismatch?: boolean;
  /**
   * A read that first found the write missing (a standby that had not applied it yet) and then
   * found it within the client's retry time: eventual consistency, not a failure.
   */
  stale?: boolean;
}

/** A run of consecutive failed requests, from the first one's start to the next success's start. */
export interface Outage {
  from: number;
  to: number;
  failures: number;
}

export interface LeaderSighting {
  at: number;
  /** The active node's API address; "" while no node answers as active. */
  address: string;
}

export type ReadBack = "ok" | "missing" | "mismatch" | "error";

export interface KvLoadReport {
  startedAt: number;
  stoppedAt: number;
  writesAttempted: number;
  writesAcknowledged: number;
  writesFailed: number;
  readsAttempted: number;
  readsFailed: number;
  /** Reads answered with a value other than the acknowledged one (counted in readsFailed too). */
  readsMismatched: number;
  /** Reads that succeeded only on retry, after a standby answered without the newest write. */
  readsStale: number;
  /** 307s from a standby that the client followed to the active node. */
  redirectsFollowed: number;
  /** First failed request's start, last failed request's end (undefined without failures). */
  firstFailureAt?: number;
  lastFailureAt?: number;
  /** lastFailureAt - firstFailureAt: the span within which every failure fell. */
  failureWindowMs: number;
  /** Sum of the outages: the time during which the client saw requests fail. */
  failedTimeMs: number;
  longestOutageMs: number;
  outages: Outage[];
  /** Times the active node changed from one address to another (an interval without one is not a change). */
  leaderChanges: number;
  leaders: LeaderSighting[];
  /** Acknowledged writes that read back missing or with another value after stop(): must be 0. */
  lostWrites: number;
  /** Sequence numbers of the first lost writes (at most 20), to look them up. */
  lostSequences: number[];
  /** Acknowledged writes whose read-back kept failing, so neither found nor proven lost. */
  unverified: number;
  /** Distinct failure reasons with their counts, most frequent first. */
  errors: Array<{ error: string; count: number }>;
}

const MAX_LOST_LISTED = 20;
const MAX_ERROR_KINDS = 20;

export class LoadLedger {
  private writesAttempted = 0;
  private writesFailed = 0;
  private readsAttempted = 0;
  private readsFailed = 0;
  private readsMismatched = 0;
  private readsStale = 0;
  private redirects = 0;
  private readonly acked = new Map<number, string>();
  private readonly outages: Outage[] = [];
  private open: { from: number; lastEnd: number; failures: number } | undefined;
  private firstFailureAt: number | undefined;
  private lastFailureAt: number | undefined;
  private readonly leaders: LeaderSighting[] = [];
  private leaderChanges = 0;
  private lastLeader = "";
  private readonly errorCounts = new Map<string, number>();
  private verdict: { lost: number[]; unverified: number } | undefined;

  constructor(readonly startedAt: number) {}

  /**
   * Records one request. The load loop is sequential, so outcomes arrive in start order and a run
   * of failures is one outage; it ends when a later request succeeds, at that request's start (the
   * first moment the client had evidence that service was back).
   */
  record(r: RequestOutcome): void {
    if (r.op === "write") {
      this.writesAttempted++;
      if (!r.ok) this.writesFailed++;
    } else {
      this.readsAttempted++;
      if (!r.ok) this.readsFailed++;
      if (r.mismatch) this.readsMismatched++;
      if (r.ok && r.stale) this.readsStale++;
    }
    if (r.ok) {
      if (this.open) {
        this.outages.push({ from: this.open.from, to: r.startedAt, failures: this.open.failures });
        this.open = undefined;
      }
      return;
    }
    const reason = r.mismatch ? "read answered another value" : (r.error ?? "failed");
    this.errorCounts.set(reason, (this.errorCounts.get(reason) ?? 0) + 1);
    this.firstFailureAt ??= r.startedAt;
    this.lastFailureAt = Math.max(this.lastFailureAt ?? r.endedAt, r.endedAt);
    if (this.open) {
      this.open.failures++;
      this.open.lastEnd = Math.max(this.open.lastEnd, r.endedAt);
    } else {
      this.open = { from: r.startedAt, lastEnd: r.endedAt, failures: 1 };
    }
  }

  redirectFollowed(): void {
    this.redirects++;
  }

  /** A write OpenBao acknowledged: from now on it must be readable with this value. */
  acknowledge(seq: number, value: string): void {
    if (this.acked.has(seq)) throw new Error(`sequence ${seq} acknowledged twice`);
    this.acked.set(seq, value);
  }

  get acknowledged(): number {
    return this.acked.size;
  }

  /** The acknowledged writes in sequence order, for reading back. */
  acknowledgedWrites(): Array<{ seq: number; value: string }> {
    return [...this.acked].sort((a, b) => a[0] - b[0]).map(([seq, value]) => ({ seq, value }));
  }

  latestAcknowledged(): { seq: number; value: string } | undefined {
    let best: number | undefined;
    for (const seq of this.acked.keys()) if (best === undefined || seq > best) best = seq;
    return best === undefined ? undefined : { seq: best, value: this.acked.get(best)! };
  }

  observeLeader(address: string, at: number): void {
    const previous = this.leaders.at(-1);
    if (previous?.address === address) return;
    this.leaders.push({ at, address });
    if (address === "") return;
    if (this.lastLeader !== "" && this.lastLeader !== address) this.leaderChanges++;
    this.lastLeader = address;
  }

  /** The read-back of every acknowledged write, as `verify` in kv-load.ts obtained it. */
  settle(results: Map<number, ReadBack>): void {
    const lost: number[] = [];
    let unverified = 0;
    for (const seq of [...this.acked.keys()].sort((a, b) => a - b)) {
      const r = results.get(seq);
      if (r === "missing" || r === "mismatch") lost.push(seq);
      else if (r !== "ok") unverified++;
    }
    this.verdict = { lost, unverified };
  }

  report(stoppedAt: number): KvLoadReport {
    const outages = [...this.outages];
    if (this.open)
      outages.push({ from: this.open.from, to: this.open.lastEnd, failures: this.open.failures });
    const lengths = outages.map((o) => o.to - o.from);
    const lost = this.verdict?.lost ?? [];
    return {
      startedAt: this.startedAt,
      stoppedAt,
      writesAttempted: this.writesAttempted,
      writesAcknowledged: this.acked.size,
      writesFailed: this.writesFailed,
      readsAttempted: this.readsAttempted,
      readsFailed: this.readsFailed,
      readsMismatched: this.readsMismatched,
      readsStale: this.readsStale,
      redirectsFollowed: this.redirects,
      firstFailureAt: this.firstFailureAt,
      lastFailureAt: this.lastFailureAt,
      failureWindowMs:
        this.firstFailureAt === undefined
          ? 0
          : (this.lastFailureAt ?? this.firstFailureAt) - this.firstFailureAt,
      failedTimeMs: lengths.reduce((a, b) => a + b, 0),
      longestOutageMs: lengths.length ? Math.max(...lengths) : 0,
      outages,
      leaderChanges: this.leaderChanges,
      leaders: [...this.leaders],
      lostWrites: lost.length,
      lostSequences: lost.slice(0, MAX_LOST_LISTED),
      // Before settle() nothing was read back: every acknowledged write is still unverified.
      unverified: this.verdict ? this.verdict.unverified : this.acked.size,
      errors: [...this.errorCounts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, MAX_ERROR_KINDS)
        .map(([error, count]) => ({ error, count })),
    };
  }
}

/** One line for logs and bench output: the numbers a person compares between runs. */
export function summarizeLoad(r: KvLoadReport): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    `writes ${r.writesAcknowledged}/${r.writesAttempted} acknowledged (${r.writesFailed} failed)`,
    `reads ${r.readsAttempted - r.readsFailed}/${r.readsAttempted} ok (${r.readsStale} after a stale answer)`,
    `failed-request window ${s(r.failureWindowMs)} (time failing ${s(r.failedTimeMs)}, longest ${s(r.longestOutageMs)}, ${r.outages.length} outages)`,
    `leader changes ${r.leaderChanges}`,
    `lost writes ${r.lostWrites}${r.unverified ? ` (${r.unverified} unverified)` : ""}`,
  ].join("; ");
}
