/**
 * The operation lock on the API server: status.operationLock, written only under
 * LOCK_FIELD_MANAGER through the status subresource, each write conditional on the resourceVersion
 * its decision was made from (cas.ts). Two holders racing for a free lock: one apply wins, the other
 * gets 409, re-reads, and sees the winner.
 */
import type { OpenBaoCluster, OperationLock } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import { isInvalid } from "../../../runtime/errors.js";
import { casRemoveStatusFields, forceApplyStatus } from "../../../runtime/status.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { ClusterRef } from "../identity.js";
import { type CasResult, casStatus } from "./cas.js";
import {
  type AcquireDecision,
  type AcquireOptions,
  decideAcquire,
  decideRelease,
  decideTakeover,
  type LockIdentity,
  type ReleaseDecision,
  type TakeoverDecision,
  type TakeoverReason,
} from "./lock.js";
import { LOCK_FIELD_MANAGER } from "./planes.js";

export type AcquireResult =
  | {
      acquired: true;
      lock: OperationLock;
      wrote: boolean;
      /** The cluster after the write (or as read when none was needed). */
      cluster: OpenBaoCluster;
    }
  | { acquired: false; heldBy: OperationLock };

export type ReleaseResult = { released: true; wrote: boolean } | { released: false; heldBy: OperationLock };

export interface TakeoverResult {
  lock: OperationLock;
  /** Who held it before, when someone did; the caller records an event naming them. */
  previous?: OperationLock;
  wrote: boolean;
}

export interface LockStoreOptions {
  fieldManager?: string;
  now?: () => Date;
  signal?: AbortSignal;
}

export class OperationLockStore {
  private readonly fieldManager: string;
  private readonly now: () => Date;

  constructor(
    private readonly client: KubeClient,
    opts: Omit<LockStoreOptions, "signal"> = {},
  ) {
    this.fieldManager = opts.fieldManager ?? LOCK_FIELD_MANAGER;
    this.now = opts.now ?? (() => new Date());
  }

  /**
   * Takes a free lock, or renews the caller's own exact lock. Held by another identity: nothing is
   * written and `heldBy` says who, for the caller's contention condition (contention.ts).
   * A field conflict on operationLock (another manager wrote it by hand) is recovered by forcing,
   * since the decision was made on a fresh read of that very value.
   */
  async acquire(
    ref: ClusterRef,
    id: LockIdentity,
    opts: Omit<AcquireOptions, "now"> & { signal?: AbortSignal } = {},
  ): Promise<AcquireResult> {
    const r = await casStatus<AcquireDecision>(
      this.client,
      ref,
      (fresh) => {
        const d = decideAcquire(fresh.status?.operationLock, id, { ...opts, now: this.now() });
        return d.kind === "acquire" || d.kind === "renew"
          ? { decision: d, plane: { operationLock: d.lock } }
          : { decision: d };
      },
      this.casOptions(opts.signal),
    );
    const d = r.decision;
    if (d.kind === "contended") return { acquired: false, heldBy: d.heldBy };
    return {
      acquired: true,
      lock: d.kind === "held" ? r.cluster.status!.operationLock! : d.lock,
      wrote: r.wrote,
      cluster: r.cluster,
    };
  }

  /**
   * Renews the caller's own exact lock (rate-limited like acquire) and never takes a free one: an
   * operation in flight whose lock was taken over (a restore override) and then released must not
   * get it back by renewing. `held` false means the lock is no longer the caller's.
   */
  async renew(
    ref: ClusterRef,
    id: LockIdentity,
    opts: Omit<AcquireOptions, "now"> & { signal?: AbortSignal } = {},
  ): Promise<{ held: boolean; current?: OperationLock }> {
    const r = await casStatus<AcquireDecision>(
      this.client,
      ref,
      (fresh) => {
        const d = decideAcquire(fresh.status?.operationLock, id, { ...opts, now: this.now() });
        return d.kind === "renew" ? { decision: d, plane: { operationLock: d.lock } } : { decision: d };
      },
      this.casOptions(opts.signal),
    );
    const d = r.decision;
    const current = d.kind === "renew" ? d.lock : r.cluster.status?.operationLock;
    return { held: d.kind === "renew" || d.kind === "held", ...(current ? { current } : {}) };
  }

  /** Removes the lock only if `id` holds it exactly; a free lock is a successful no-op. */
  async release(ref: ClusterRef, id: LockIdentity, signal?: AbortSignal): Promise<ReleaseResult> {
    return this.releaseOnce(ref, id, signal, true);
  }

  private async releaseOnce(
    ref: ClusterRef,
    id: LockIdentity,
    signal: AbortSignal | undefined,
    recover: boolean,
  ): Promise<ReleaseResult> {
    let r: CasResult<ReleaseDecision>;
    try {
      r = await casStatus<ReleaseDecision>(
        this.client,
        ref,
        (fresh) => {
          const d = decideRelease(fresh.status?.operationLock, id);
          return d.kind === "release" ? { decision: d, plane: {} } : { decision: d };
        },
        this.casOptions(signal),
      );
    } catch (e) {
      if (!isInvalid(e)) throw e;
      return this.releaseLastField(ref, id, signal);
    }
    if (r.decision.kind === "not-holder") return { released: false, heldBy: r.decision.heldBy };
    if (r.wrote && r.cluster.status?.operationLock?.holder === id.holder) {
      if (!recover)
        throw new Error(`${ref.namespace}/${ref.name}: operation lock of ${id.holder} survived its release`);
      await this.dropForeignCopy(ref, id, r, signal);
    }
    return { released: true, wrote: r.wrote };
  }

  /**
   * Takes the lock whoever holds it. Only for the two cases the spec allows (TakeoverReason); normal
   * backup and upgrade work calls acquire and waits.
   */
  async forceTakeover(
    ref: ClusterRef,
    id: LockIdentity,
    reason: TakeoverReason,
    signal?: AbortSignal,
  ): Promise<TakeoverResult> {
    const r = await casStatus<TakeoverDecision>(
      this.client,
      ref,
      (fresh) => {
        const d = decideTakeover(fresh.status?.operationLock, id, reason, this.now());
        return d.kind === "take" ? { decision: d, plane: { operationLock: d.lock } } : { decision: d };
      },
      this.casOptions(signal),
    );
    const d = r.decision;
    if (d.kind === "held") return { lock: r.cluster.status!.operationLock!, wrote: false };
    return { lock: d.lock, previous: d.previous, wrote: r.wrote };
  }

  /**
   * When the lock is the only field in status, the release apply leaves status empty, and server-side
   * apply stores an emptied map as null, which the schema refuses (422). Then the lock is removed
   * with a JSON merge patch instead, with the same resourceVersion precondition and exact-holder
   * check, which leaves an empty status object behind.
   */
  private async releaseLastField(
    ref: ClusterRef,
    id: LockIdentity,
    signal?: AbortSignal,
  ): Promise<ReleaseResult> {
    const r = await casRemoveStatusFields<OpenBaoCluster, ReleaseDecision>(
      this.client,
      OPENBAOCLUSTER,
      ref,
      (fresh) => {
        const d = decideRelease(fresh.status?.operationLock, id);
        return d.kind === "release" ? { decision: d, remove: ["operationLock"] } : { decision: d };
      },
      { signal },
    );
    if (r.decision.kind === "not-holder") return { released: false, heldBy: r.decision.heldBy };
    return { released: true, wrote: r.wrote };
  }

  private casOptions(signal?: AbortSignal) {
    return { fieldManager: this.fieldManager, signal, onFieldConflict: () => true };
  }

  /**
   * The release apply left the lock in place: another manager co-owns the field (e.g. a writer that
   * copied the whole status before planes were split). Taking it with a distinct value makes this
   * manager its only owner, and the next release apply then removes it.
   */
  private async dropForeignCopy(
    ref: ClusterRef,
    id: LockIdentity,
    first: CasResult<unknown>,
    signal?: AbortSignal,
  ): Promise<void> {
    const lock = first.cluster.status!.operationLock!;
    await forceApplyStatus(
      this.client,
      OPENBAOCLUSTER,
      first.cluster,
      { operationLock: { ...lock, message: `released by ${id.holder}` } },
      { fieldManager: this.fieldManager, signal },
    );
    await this.releaseOnce(ref, id, signal, false);
  }
}
