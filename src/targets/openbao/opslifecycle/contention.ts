/**
 * What a caller says when the lock is held by someone else: one condition and one event with the
 * same actionable text, and when to look again. The caller owns the object the condition goes on
 * (the OpenBaoRestore, or the cluster's BackingUp/Upgrading condition through the AdminOps plane).
 */
import type { OperationLock } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import type { LockIdentity } from "./lock.js";

/** How long a contended caller waits before it asks again (a release also wakes it through the watch). */
export const CONTENTION_REQUEUE_MS = 15_000;

export interface Contention {
  /** Upstream's reason for a request waiting on the lock; a restore says it with its own kind's. */
  reason: typeof OpenBaoClusterReason.OperationLockHeld;
  /** For the condition and the event; names holder and operation, never secret values. */
  message: string;
  eventType: "Normal";
  requeueAfterMs: number;
}

export function contention(heldBy: OperationLock, requester: LockIdentity): Contention {
  const since = heldBy.acquiredAt ? ` since ${heldBy.acquiredAt}` : "";
  const what = heldBy.operation ?? "an operation";
  let hint = `${requester.operation} waits and retries when the lock is released`;
  if (requester.operation === "Restore")
    hint +=
      "; to take it instead, create a new OpenBaoRestore with overrideOperationLock: true and force: true";
  return {
    reason: OpenBaoClusterReason.OperationLockHeld,
    message: `the cluster's operation lock is held by ${what} (holder ${heldBy.holder})${since}; ${hint}`,
    // Waiting on another operation is expected, not a fault.
    eventType: "Normal",
    requeueAfterMs: CONTENTION_REQUEUE_MS,
  };
}

/** Event text for a takeover: who lost the lock, who took it and why. */
export function takeoverNote(previous: OperationLock | undefined, taker: LockIdentity, why: string): string {
  const from = previous?.holder ? `${previous.operation ?? "operation"} ${previous.holder}` : "nobody";
  return `operation lock taken from ${from} by ${taker.operation} ${taker.holder}: ${why}`;
}
