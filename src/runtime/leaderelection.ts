import { sleep } from "./backoff.js";
import { LEASE } from "./builtin-types.js";
import type { KubeClient } from "./client.js";
import { errorMessage, isConflict, isNotFound } from "./errors.js";
import type { Logger } from "./log.js";
import { leaderElectionMasterStatus } from "./metrics.js";
import type { KubeObject } from "./types.js";

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  /** How long a holder's claim lasts without renewal (default 15 s). */
  leaseDurationMs?: number;
  /** The leader gives up when it could not renew for this long (default 10 s). */
  renewDeadlineMs?: number;
  /** Pause between attempts (default 2 s). */
  retryPeriodMs?: number;
  log: Logger;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };

const microTime = (d: Date) => d.toISOString().replace("Z", "000Z");

/**
 * Lease-based leader election. Like client-go, expiry is judged by when *this* process last saw
 * the Lease record change, not by the timestamps written in it, so clock skew between replicas
 * cannot make two of them leader. Every write is an update with the resourceVersion read.
 */
export class LeaderElector {
  private observed?: { record: string; at: number; rv?: string; lease: Lease };
  private leading = false;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: LeaderElectionOptions,
  ) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    leaderElectionMasterStatus.set({ name: opts.name }, 0);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Blocks until this process holds the Lease (or `signal` aborts: resolves false), then renews
   * it in the background. `onLost` is called once if a renewal misses the deadline.
   */
  async acquire(signal: AbortSignal, onLost: () => void): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) {
        this.leading = true;
        leaderElectionMasterStatus.set({ name: this.opts.name }, 1);
        this.opts.log.info({ lease: this.opts.name, identity: this.opts.identity }, "became leader");
        void this.renewLoop(signal, onLost);
        return true;
      }
      await sleep(this.retryPeriodMs, signal);
    }
    return false;
  }

  private async renewLoop(signal: AbortSignal, onLost: () => void): Promise<void> {
    let lastRenew = Date.now();
    while (!signal.aborted && this.leading) {
      await sleep(this.retryPeriodMs, signal);
      if (signal.aborted) return;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = Date.now();
        continue;
      }
      if (Date.now() - lastRenew >= this.renewDeadlineMs) {
        this.leading = false;
        leaderElectionMasterStatus.set({ name: this.opts.name }, 0);
        this.opts.log.error(
          { lease: this.opts.name },
          "leader election lost: the Lease could not be renewed in time",
        );
        onLost();
        return;
      }
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const now = new Date();
    try {
      const current = await this.client.getOrUndefined<Lease>(LEASE, name, namespace);
      if (!current) {
        await this.client.create(LEASE, {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: Math.round(this.leaseDurationMs / 1000),
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        });
        return true;
      }
      const spec = current.spec ?? {};
      const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.acquireTime]);
      if (!this.observed || this.observed.record !== record) {
        this.observed = { record, at: Date.now(), rv: current.metadata.resourceVersion, lease: current };
      }
      const holder = spec.holderIdentity ?? "";
      const held = holder !== "" && holder !== identity;
      const durationMs = (spec.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000;
      if (held && Date.now() - this.observed.at < durationMs) return false;
      const takingOver = holder !== identity;
      await this.client.replace(LEASE, {
        ...current,
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: Math.round(this.leaseDurationMs / 1000),
          acquireTime: takingOver ? microTime(now) : spec.acquireTime,
          renewTime: microTime(now),
          leaseTransitions: (spec.leaseTransitions ?? 0) + (takingOver ? 1 : 0),
        },
      });
      return true;
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) {
        this.opts.log.warn({ err: errorMessage(e), lease: name }, "leader election request failed");
      }
      return false;
    }
  }

  /** Gives the Lease up so a standby takes over at once instead of after the lease duration. */
  async release(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    leaderElectionMasterStatus.set({ name: this.opts.name }, 0);
    try {
      const current = await this.client.get<Lease>(LEASE, this.opts.name, this.opts.namespace);
      if (current.spec?.holderIdentity !== this.opts.identity) return;
      await this.client.replace(LEASE, {
        ...current,
        spec: {
          ...current.spec,
          holderIdentity: null,
          leaseDurationSeconds: 1,
          renewTime: microTime(new Date()),
        },
      });
    } catch (e) {
      this.opts.log.warn({ err: errorMessage(e) }, "could not release the Lease");
    }
  }
}

export { LEASE };
