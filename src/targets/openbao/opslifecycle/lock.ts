/**
 * The operation lock's decisions, pure: given the lock as stored and who asks, what the lock becomes.
 * The I/O (fresh read, conditional apply) is in lock-store.ts. Nothing here knows what a backup,
 * upgrade or restore is beyond its name: deciding whether the operation may run stays with the caller.
 */
import type { ClusterOperation, OperationLock } from "../../../apis/openbaocluster.js";
import { isoSeconds } from "../../../runtime/utc-time.js";

/** Who asks: the operation and its exact holder, stable across operator restarts. */
export interface LockIdentity {
  operation: ClusterOperation;
  holder: string;
}

const HOLDER_MAX = 253;

/** Holder of a backup: one per schedule window or manual trigger, so a retry of the same run matches. */
export const backupHolder = (cluster: string, runId: string): string => `backup/${cluster}/${runId}`;
/** Holder of an upgrade: one per upgrade attempt. */
export const upgradeHolder = (cluster: string, runId: string): string => `upgrade/${cluster}/${runId}`;
/** Holder of a restore: the OpenBaoRestore itself. */
export const restoreHolder = (namespace: string, name: string): string => `restore/${namespace}/${name}`;

/** Throws an error naming the problem when an identity cannot be stored. */
export function checkIdentity(id: LockIdentity): void {
  if (!id.holder) throw new Error("operation lock: holder is empty");
  if (id.holder.length > HOLDER_MAX)
    throw new Error(`operation lock: holder is ${id.holder.length} characters, at most ${HOLDER_MAX}`);
}

/** A lock with no holder is free (an empty object left by hand counts as free). */
export const isFree = (lock: OperationLock | undefined): boolean => !lock?.holder;

/** Exact match: same holder and same operation. A holder string reused for another operation is not it. */
export const isHeldBy = (lock: OperationLock | undefined, id: LockIdentity): boolean =>
  !!lock?.holder && lock.holder === id.holder && lock.operation === id.operation;

const stamp = (now: Date) => isoSeconds(now);

export interface AcquireOptions {
  now: Date;
  /** Why the lock is held, shown in status.operationLock.message. No secret values. */
  message?: string;
  /**
   * A matching lock is renewed (renewedAt rewritten) only when its renewal is older than this, so a
   * holder that reconciles often does not write status on every pass (and wake every watcher).
   */
  renewAfterMs?: number;
}

export const DEFAULT_RENEW_AFTER_MS = 30_000;

export type AcquireDecision =
  /** Write `lock`: taken now (`acquired`) or renewed (`renewed`). */
  | { kind: "acquire" | "renew"; lock: OperationLock }
  /** Already held by this identity and renewed recently: nothing to write. */
  | { kind: "held" }
  /** Another identity holds it: the caller reports contention and requeues. */
  | { kind: "contended"; heldBy: OperationLock };

export function decideAcquire(
  current: OperationLock | undefined,
  id: LockIdentity,
  opts: AcquireOptions,
): AcquireDecision {
  checkIdentity(id);
  const now = stamp(opts.now);
  if (isFree(current)) {
    const lock: OperationLock = {
      operation: id.operation,
      holder: id.holder,
      acquiredAt: now,
      renewedAt: now,
    };
    if (opts.message) lock.message = opts.message;
    return { kind: "acquire", lock };
  }
  if (!isHeldBy(current, id)) return { kind: "contended", heldBy: current! };
  const renewAfter = opts.renewAfterMs ?? DEFAULT_RENEW_AFTER_MS;
  const last = Date.parse(current!.renewedAt ?? current!.acquiredAt ?? "");
  const messageMoved = opts.message !== undefined && opts.message !== current!.message;
  if (!messageMoved && Number.isFinite(last) && opts.now.getTime() - last < renewAfter)
    return { kind: "held" };
  const lock: OperationLock = { ...current!, renewedAt: now };
  if (opts.message !== undefined) lock.message = opts.message;
  return { kind: "renew", lock };
}

export type ReleaseDecision =
  /** This identity holds it: remove it. */
  | { kind: "release" }
  /** Nobody holds it: nothing to do (a release repeated after a restart lands here). */
  | { kind: "free" }
  /** Someone else holds it: left alone; release never removes another holder's lock. */
  | { kind: "not-holder"; heldBy: OperationLock };

export function decideRelease(current: OperationLock | undefined, id: LockIdentity): ReleaseDecision {
  checkIdentity(id);
  if (isFree(current)) return { kind: "free" };
  if (!isHeldBy(current, id)) return { kind: "not-holder", heldBy: current! };
  return { kind: "release" };
}

/**
 * Why a takeover is allowed. Only these two: an explicit restore override (overrideOperationLock with
 * force on the OpenBaoRestore), or recovering from a server-side apply conflict on the lock field.
 */
export type TakeoverReason =
  | { kind: "restore-override"; restore: string }
  | { kind: "ssa-conflict-recovery"; detail: string };

export type TakeoverDecision =
  | { kind: "take"; lock: OperationLock; previous?: OperationLock }
  /** This identity already holds it: a takeover repeated after a restart changes nothing. */
  | { kind: "held" };

export function decideTakeover(
  current: OperationLock | undefined,
  id: LockIdentity,
  reason: TakeoverReason,
  now: Date,
): TakeoverDecision {
  checkIdentity(id);
  if (isHeldBy(current, id)) return { kind: "held" };
  const t = stamp(now);
  const why =
    reason.kind === "restore-override"
      ? `taken by ${reason.restore} with overrideOperationLock`
      : `taken to recover from a server-side apply conflict (${reason.detail})`;
  const from = isFree(current) ? "" : ` from ${current!.operation ?? "unknown operation"} ${current!.holder}`;
  const lock: OperationLock = {
    operation: id.operation,
    holder: id.holder,
    acquiredAt: t,
    renewedAt: t,
    message: `${why}${from}`.slice(0, 1024),
  };
  return isFree(current) ? { kind: "take", lock } : { kind: "take", lock, previous: current };
}
