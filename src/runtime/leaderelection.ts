import { sleep } from "./backoff.js";
import { LEASE } from "./builtin-types.js";
import type { KubeClient } from "./client.js";
import { errorMessage, isConflict, isNotFound } from "./errors.js";
import type { Logger } from "./log.js";
import { leaderElectionMasterStatus } from "./metrics.js";
import type { KubeObject } from "./types.js";
import { isoMicros } from "./utc-time.js";

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  /** How long a holder's claim lasts without renewal (default 15 s, as client-go). */
  leaseDurationMs?: number;
  /**
   * The leader stops when it has not renewed for this long, counted from the start of its last
   * successful renewal (default 10 s). Must be shorter than the lease duration: the gap is the
   * margin by which the old leader stops before a standby may take over.
   */
  renewDeadlineMs?: number;
  /** Pause between attempts (default 2 s). */
  retryPeriodMs?: number;
  log: Logger;
  /** The wall clock of the Lease's acquire and renew times (timing itself is monotonic). */
  now?: () => Date;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };

type Attempt = "leading" | "held" | "failed";

const microTime = (d: Date) => isoMicros(d);

/** Milliseconds on a monotonic clock: a wall-clock step (NTP, a manual change) must not stretch a lease. */
const monotonicMs = (): number => performance.now();

/**
 * Lease-based leader election.
 *
 * Like client-go, a standby judges expiry by when *it* last saw the Lease record change, not by
 * the timestamps written in it, so clock skew between replicas cannot make two of them leader.
 * Every write is an update carrying the resourceVersion read.
 *
 * The leader's side is bounded by a timer, not by any request: if no renewal has succeeded within
 * the renew deadline, the timer declares the lease lost even while a renewal is still waiting for
 * an answer (that request is aborted). Time is measured from the *start* of the last successful
 * attempt, which is never later than the moment the API server recorded it, so the leader always
 * stops at least (lease duration − renew deadline) before any standby can see the Lease expire.
 */
export class LeaderElector {
  private observed?: { record: string; at: number };
  private leading = false;
  private renewedAt = 0;
  /** When the API server last answered an acquire or renew attempt (monotonic); undefined before acquire(). */
  private answeredAt?: number;
  private deadlineTimer?: NodeJS.Timeout;
  /** Ends the acquire/renew loop; release() aborts it and waits, so no renewal writes after it. */
  private readonly loopAbort = new AbortController();
  private loop?: Promise<void>;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: LeaderElectionOptions,
  ) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.now = opts.now ?? (() => new Date());
    if (this.renewDeadlineMs >= this.leaseDurationMs)
      throw new Error("leader election: renewDeadlineMs must be shorter than leaseDurationMs");
    if (this.retryPeriodMs >= this.renewDeadlineMs)
      throw new Error("leader election: retryPeriodMs must be shorter than renewDeadlineMs");
    leaderElectionMasterStatus.set({ name: opts.name }, 0);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Resolves true once this process holds the Lease (it then renews in the background), or false
   * when `signal` aborts or release() is called first. `onLost` is called once, synchronously from
   * the deadline timer, when the renew deadline passes without a successful renewal.
   */
  acquire(signal: AbortSignal, onLost: () => void): Promise<boolean> {
    if (this.loop) throw new Error("leader election: acquire() called twice");
    this.answeredAt = monotonicMs();
    const stop = AbortSignal.any([signal, this.loopAbort.signal]);
    return new Promise<boolean>((became) => {
      this.loop = this.run(stop, onLost, became).finally(() => became(false));
    });
  }

  private async run(stop: AbortSignal, onLost: () => void, became: (ok: boolean) => void): Promise<void> {
    while (!stop.aborted && !this.leading) {
      const started = monotonicMs();
      // An acquisition that does not answer within the renew deadline is abandoned and retried.
      // Once it succeeded the Lease is ours even if we are stopping: release() then gives it back.
      if ((await this.bounded(stop, this.renewDeadlineMs, (signal) => this.attempt(signal))) === "leading") {
        this.leading = true;
        this.renewed(started, onLost);
        leaderElectionMasterStatus.set({ name: this.opts.name }, 1);
        this.opts.log.info({ lease: this.opts.name, identity: this.opts.identity }, "became leader");
        became(true);
        break;
      }
      await sleep(this.retryPeriodMs, stop);
    }
    while (!stop.aborted && this.leading) {
      await sleep(this.retryPeriodMs, stop);
      if (stop.aborted || !this.leading) return;
      const started = monotonicMs();
      const left = this.renewedAt + this.renewDeadlineMs - started;
      const outcome = await this.bounded(stop, left, (signal) => this.attempt(signal));
      if (!this.leading) return;
      if (outcome === "leading") this.renewed(started, onLost);
      else if (outcome === "held") this.lose(onLost, "another process holds the Lease");
    }
  }

  /** Records a successful renewal and re-arms the deadline timer from its start. */
  private renewed(startedAt: number, onLost: () => void): void {
    this.renewedAt = startedAt;
    clearTimeout(this.deadlineTimer);
    const due = Math.max(0, startedAt + this.renewDeadlineMs - monotonicMs());
    this.deadlineTimer = setTimeout(
      () => this.lose(onLost, "the Lease could not be renewed within the renew deadline"),
      due,
    );
  }

  private lose(onLost: () => void, why: string): void {
    if (!this.leading) return;
    this.leading = false;
    clearTimeout(this.deadlineTimer);
    this.loopAbort.abort();
    leaderElectionMasterStatus.set({ name: this.opts.name }, 0);
    this.opts.log.error(
      {
        lease: this.opts.name,
        sinceLastRenewalMs: Math.round(monotonicMs() - this.renewedAt),
        renewDeadlineMs: this.renewDeadlineMs,
      },
      `leader election lost: ${why}`,
    );
    onLost();
  }

  /**
   * Runs `fn` with a signal aborted by `stop` or after `ms`. Built by hand, not with
   * AbortSignal.any: some Node versions keep every dependant of a long-lived signal alive, and
   * this runs every retry period for the life of the process.
   */
  private async bounded<T>(
    stop: AbortSignal,
    ms: number,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const attempt = new AbortController();
    const onStop = () => attempt.abort(stop.reason);
    if (stop.aborted) attempt.abort(stop.reason);
    else stop.addEventListener("abort", onStop, { once: true });
    const timer = setTimeout(() => attempt.abort(new Error("renew deadline")), Math.max(1, Math.floor(ms)));
    try {
      return await fn(attempt.signal);
    } finally {
      clearTimeout(timer);
      stop.removeEventListener("abort", onStop);
    }
  }

  /**
   * Why this elector is stuck, for /healthz: no attempt answered by the API server for longer than
   * the lease duration (a standby that can never take an expired Lease, a request path that hangs).
   * Undefined while attempts are answered, before acquire() and after release().
   */
  stuckReason(now = monotonicMs()): string | undefined {
    if (this.answeredAt === undefined || this.loopAbort.signal.aborted) return undefined;
    const silent = now - this.answeredAt;
    if (silent <= this.leaseDurationMs) return undefined;
    return `leader election ${this.opts.name}: no acquire or renew attempt answered for ${Math.round(silent / 1000)}s (deadline ${Math.round(this.leaseDurationMs / 1000)}s)`;
  }

  private async attempt(signal: AbortSignal): Promise<Attempt> {
    const outcome = await this.attemptOnce(signal);
    if (outcome !== "failed") this.answeredAt = monotonicMs();
    return outcome;
  }

  private async attemptOnce(signal: AbortSignal): Promise<Attempt> {
    const { namespace, name, identity } = this.opts;
    const path = this.client.resourcePath(LEASE, namespace, name);
    try {
      let current: Lease | undefined;
      try {
        current = await this.client.request<Lease>({ method: "GET", path, signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      const now = this.now();
      const durationSeconds = Math.round(this.leaseDurationMs / 1000);
      if (!current) {
        await this.client.request({
          method: "POST",
          path: this.client.resourcePath(LEASE, namespace),
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: microTime(now),
              renewTime: microTime(now),
              leaseTransitions: 0,
            },
          },
          signal,
        });
        return "leading";
      }
      const spec = current.spec ?? {};
      const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.acquireTime]);
      if (!this.observed || this.observed.record !== record) this.observed = { record, at: monotonicMs() };
      const holder = spec.holderIdentity ?? "";
      const heldByOther = holder !== "" && holder !== identity;
      const durationMs = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (heldByOther && (this.leading || monotonicMs() - this.observed.at < durationMs)) return "held";
      const takingOver = holder !== identity;
      await this.client.request({
        method: "PUT",
        path,
        body: {
          ...current,
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: takingOver ? microTime(now) : spec.acquireTime,
            renewTime: microTime(now),
            leaseTransitions: (spec.leaseTransitions ?? 0) + (takingOver ? 1 : 0),
          },
        },
        signal,
      });
      return "leading";
    } catch (e) {
      if (this.loopAbort.signal.aborted) return "failed";
      // A conflict or a missing Lease is the API server answering: the path works.
      if (isConflict(e) || isNotFound(e)) this.answeredAt = monotonicMs();
      if (signal.aborted) {
        this.opts.log.warn({ lease: name }, "leader election request abandoned: no answer in time");
      } else if (!isConflict(e) && !isNotFound(e)) {
        this.opts.log.warn({ err: errorMessage(e), lease: name }, "leader election request failed");
      }
      return "failed";
    }
  }

  /**
   * Gives the Lease up so a standby takes over at once instead of after the lease duration. The
   * renew loop is stopped and awaited first (its request in flight aborted), so a renewal can
   * never land after the release and re-take the Lease. Bounded by `timeoutMs`.
   */
  async release(timeoutMs = this.renewDeadlineMs): Promise<void> {
    this.loopAbort.abort();
    await this.loop;
    clearTimeout(this.deadlineTimer);
    if (!this.leading) return;
    this.leading = false;
    leaderElectionMasterStatus.set({ name: this.opts.name }, 0);
    const signal = AbortSignal.timeout(Math.max(1, Math.floor(timeoutMs)));
    const path = this.client.resourcePath(LEASE, this.opts.namespace, this.opts.name);
    try {
      const current = await this.client.request<Lease>({ method: "GET", path, signal });
      if (current.spec?.holderIdentity !== this.opts.identity) return;
      await this.client.request({
        method: "PUT",
        path,
        body: {
          ...current,
          spec: {
            ...current.spec,
            holderIdentity: null,
            leaseDurationSeconds: 1,
            renewTime: microTime(this.now()),
          },
        },
        signal,
      });
      this.opts.log.info({ lease: this.opts.name }, "released the Lease");
    } catch (e) {
      this.opts.log.warn(
        { err: signal.aborted ? "no answer in time" : errorMessage(e), lease: this.opts.name },
        "could not release the Lease; a standby takes over when it expires",
      );
    }
  }
}

export { LEASE };
