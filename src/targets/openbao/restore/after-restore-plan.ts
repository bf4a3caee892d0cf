/**
 * The restart that follows a restore, planned from what can be observed, pure: the cluster's
 * `status.restore` record, the OpenBao pods (creation time, Ready, going), the StatefulSets' sizes,
 * and the Job's end. Nothing is remembered between passes, so an operator stopped anywhere in the
 * follow-through finds the same next step again.
 *
 * Order (upstream 0.5): the voters first, all at once (after-restore.ts says why), and only once
 * every voter is back and Ready is `status.restore.restartCompletedAt` written; then the read
 * replicas, which follow a leader that now holds the restored Raft keyring and so must restart after
 * it; the restore is complete when they are back and Ready too. A pool that does not come back
 * within the bound ends the wait: the restore completes saying what is not Ready (the lock is not
 * held forever on pods that may need a person, e.g. a restored seal they cannot open).
 */

import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";

/** The cluster's record of the restore whose restart it went through (upstream's status.restore). */
export type ClusterRestoreRecord = NonNullable<NonNullable<OpenBaoCluster["status"]>["restore"]>;

export interface PodFacts {
  name: string;
  uid?: string;
  created?: Date;
  terminating: boolean;
  ready: boolean;
}

export interface PoolFacts {
  pods: readonly PodFacts[];
  /** Pods the pool's StatefulSets ask for (their spec.replicas summed); 0 without a StatefulSet. */
  desired: number;
}

export interface AfterRestoreFacts {
  restore: { name: string; uid: string };
  record: ClusterRestoreRecord | undefined;
  /** When the restore Job ended: every pod created up to then holds the state from before it. */
  finishedAt: Date;
  voters: PoolFacts;
  readReplicas: PoolFacts;
  now: Date;
  /** How long each pool may take to come back Ready before the restore completes without it. */
  timeoutMs: number;
}

export type Pool = "voters" | "readReplicas";

export type AfterRestoreStep =
  /** Record on the cluster that its pods restart for this restore (status.restore {name, uid}). */
  | { kind: "record" }
  /** Delete these pods (their StatefulSet makes them again, loading the restored state). */
  | { kind: "restart"; pool: Pool; pods: PodFacts[] }
  /** Some of the pool is not back and Ready yet. */
  | { kind: "wait"; pool: Pool; message: string; deadline: Date }
  /**
   * Every voter is back and Ready: status.restore.restartCompletedAt is written, `at`: now, or the
   * newest voter's creation when the API server's clock is ahead (the read replicas are compared
   * with it, in the API server's time).
   */
  | { kind: "votersRestarted"; at: Date }
  /**
   * The end of the follow-through. `notReady` says what did not come back within the bound; `restart`
   * lists read replicas still to restart when the voters never came back (each node must load the
   * restored state from storage whatever happens next).
   */
  | { kind: "done"; notReady?: string; restart?: PodFacts[] };

/** Upstream's identity of a restore in status.restore.uid: its UID (its name when it has none). */
export const restoreToken = (r: { name: string; uid: string }): string => r.uid || r.name;

export function recordMatches(record: ClusterRestoreRecord | undefined, r: { name: string; uid: string }) {
  return record?.name === r.name && record.uid === restoreToken(r);
}

/**
 * Pods created no later than `since` (whole seconds: a pod of that very second counts as old and is
 * restarted once more rather than kept with stale state); pods already going are left to go.
 */
export function olderThan(pods: readonly PodFacts[], since: Date): PodFacts[] {
  return pods.filter((p) => !p.terminating && p.created !== undefined && p.created <= since);
}

/**
 * Read replicas to restart after the voters: those created before the second the voters were found
 * back. Unlike the voters' bound (the Job's end, which pods of that second may predate), a replica
 * of that very second already started beside the restarted voters; counting it as old restarted
 * the replica a second time when its StatefulSet made it again within that second.
 */
export function createdBefore(pods: readonly PodFacts[], since: Date): PodFacts[] {
  return pods.filter((p) => !p.terminating && p.created !== undefined && p.created < since);
}

/** Where a pool stands after `since`: pods still from before it (going or not), and new Ready ones. */
function standing(
  pool: PoolFacts,
  since: Date,
  sameSecondIsNew = false,
): { pending: number; ready: number; total: number } {
  const isNew = (p: PodFacts) =>
    p.created !== undefined && (sameSecondIsNew ? p.created >= since : p.created > since);
  const ready = pool.pods.filter((p) => isNew(p) && p.ready && !p.terminating).length;
  const pending = pool.pods.filter((p) => !isNew(p) || !p.ready).length;
  return { pending, ready, total: Math.max(pool.desired, pool.pods.length) };
}

const back = (pool: PoolFacts, since: Date, sameSecondIsNew = false): boolean => {
  const s = standing(pool, since, sameSecondIsNew);
  return s.pending === 0 && s.ready >= pool.desired;
};

const label: Record<Pool, string> = { voters: "voter", readReplicas: "read-replica" };

function progress(pool: Pool, facts: PoolFacts, since: Date): string {
  const s = standing(facts, since, pool === "readReplicas");
  return `${s.ready}/${s.total} ${label[pool]} pods back and Ready after the snapshot`;
}

export function planAfterRestore(f: AfterRestoreFacts): AfterRestoreStep {
  if (!recordMatches(f.record, f.restore)) return { kind: "record" };
  const completedAt = f.record?.restartCompletedAt ? new Date(f.record.restartCompletedAt) : undefined;
  if (!completedAt || Number.isNaN(completedAt.getTime())) {
    const old = olderThan(f.voters.pods, f.finishedAt);
    if (old.length > 0) return { kind: "restart", pool: "voters", pods: old };
    if (back(f.voters, f.finishedAt)) {
      const newest = Math.max(f.now.getTime(), ...f.voters.pods.map((p) => p.created?.getTime() ?? 0));
      return { kind: "votersRestarted", at: new Date(newest) };
    }
    const deadline = new Date(f.finishedAt.getTime() + f.timeoutMs);
    const message = progress("voters", f.voters, f.finishedAt);
    if (f.now >= deadline)
      return {
        kind: "done",
        notReady: `${message} within ${Math.round(f.timeoutMs / 1000)} s`,
        restart: olderThan(f.readReplicas.pods, f.finishedAt),
      };
    return { kind: "wait", pool: "voters", message, deadline };
  }
  // The voters are back with the restored keyring: every read replica from before then restarts.
  const old = createdBefore(f.readReplicas.pods, completedAt);
  if (old.length > 0) return { kind: "restart", pool: "readReplicas", pods: old };
  if (back(f.readReplicas, completedAt, true)) return { kind: "done" };
  const deadline = new Date(completedAt.getTime() + f.timeoutMs);
  const message = progress("readReplicas", f.readReplicas, completedAt);
  if (f.now >= deadline)
    return { kind: "done", notReady: `${message} within ${Math.round(f.timeoutMs / 1000)} s` };
  return { kind: "wait", pool: "readReplicas", message, deadline };
}
