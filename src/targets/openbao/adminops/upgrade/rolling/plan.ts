/**
 * The rolling upgrade's next step, pure: from status.upgrade and a fresh observation alone, so a
 * pass after an operator restart decides exactly what the dead process would have.
 *
 * The StatefulSet holds `currentPartition`; pods at or above it run the new revision. One ordinal
 * at a time, from replicas-1 down to 0:
 *
 *   pod P replaced (new revision, Ready, unsealed, target version, Autopilot healthy) → P completed
 *   next ordinal N = P-1 is the leader → step it down first (and wait for another leader), unless
 *     no other voter could lead (a single voter): then it is replaced as it is
 *   otherwise → lower the partition to N (the StatefulSet controller replaces pod N)
 *   no ordinal left → finalize once revisions and every voter converged
 *
 * A pod that is not there yet is waiting, never failing; how long waiting may last is the
 * manager's business. One pod is deleted outright: a pod made for a target that was given up while
 * it could not start (see abandonedAndStuck).
 */

import type { OpenBaoClusterStatus } from "../../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../../../apis/openbaocluster-names.js";
import type { ClusterObservation, VoterObservation } from "../core/observe.js";
import { sameVersionText } from "../core/policy.js";

export type UpgradeStatus = NonNullable<OpenBaoClusterStatus["upgrade"]>;

export type RollingStep =
  | { kind: "wait"; reason: string; message: string; ordinal?: number }
  | { kind: "complete-pod"; ordinal: number }
  | { kind: "step-down"; ordinal: number }
  | { kind: "lower-partition"; to: number }
  | { kind: "replace-stuck-pod"; ordinal: number }
  | { kind: "finalize" };

export interface RollingPlanInput {
  upgrade: UpgradeStatus;
  obs: ClusterObservation;
  now: Date;
  /** After a step-down, how long to wait for another leader before asking again. */
  stepDownSettleMs: number;
}

/** The partition the upgrade holds, within [0, replicas]. */
export function heldPartition(u: UpgradeStatus, replicas: number): number {
  const p = u.currentPartition ?? replicas;
  return Math.max(0, Math.min(replicas, p));
}

/** Why voter `v` is not yet a finished member on `target`; undefined when it is. */
export function notConverged(
  v: VoterObservation | undefined,
  obs: ClusterObservation,
  target: string,
): { reason: string; message: string } | undefined {
  if (!v?.exists || v.terminating)
    return { reason: R.PodNotReady, message: `pod ${v?.name ?? "?"} is being replaced` };
  if (!obs.updateRevision || v.revision !== obs.updateRevision)
    return {
      reason: R.PodNotReady,
      message: `pod ${v.name} runs revision ${v.revision ?? "?"}, not ${obs.updateRevision ?? "the new one"} yet`,
    };
  if (!v.ready) return { reason: R.PodNotReady, message: `pod ${v.name} is not Ready yet` };
  if (v.sealed !== false)
    return {
      reason: v.sealed ? R.Sealed : R.HealthCheckFailed,
      message: v.sealed
        ? `OpenBao on ${v.name} is sealed`
        : `OpenBao on ${v.name} does not answer its health check yet`,
    };
  if (!sameVersionText(v.version, target))
    return {
      reason: R.VersionMismatch,
      message: `OpenBao on ${v.name} reports version ${v.version ?? "?"}, not ${target} yet`,
    };
  return undefined;
}

/**
 * A pod the StatefulSet controller will never replace: made from a revision that is neither the
 * set's current one nor its update (a target given up for another, e.g. its image cannot be
 * pulled), and stuck in a state waiting does not cure. The controller waits for such a pod to become
 * Ready before it rolls it (Kubernetes' documented caveat for rollbacks), so without a delete the
 * roll waits forever. It serves nothing: deleting it costs no quorum, and the StatefulSet makes it
 * again from the right revision for its ordinal.
 */
export function abandonedAndStuck(v: VoterObservation, obs: ClusterObservation): boolean {
  return (
    v.exists &&
    !v.terminating &&
    !v.ready &&
    v.stuck === true &&
    v.revision !== undefined &&
    obs.currentRevision !== undefined &&
    obs.updateRevision !== undefined &&
    v.revision !== obs.currentRevision &&
    v.revision !== obs.updateRevision
  );
}

export function planRolling(inp: RollingPlanInput): RollingStep {
  const { upgrade: u, obs } = inp;
  const abandoned = obs.voters.find((v) => abandonedAndStuck(v, obs));
  if (abandoned) return { kind: "replace-stuck-pod", ordinal: abandoned.ordinal };
  const target = u.targetVersion ?? "";
  const P = heldPartition(u, obs.replicas);
  const completed = new Set(u.completedPods ?? []);
  if (P < obs.replicas && !completed.has(P)) {
    const why = notConverged(obs.voters[P], obs, target);
    if (why) return { kind: "wait", ...why, ordinal: P };
    if (obs.raftHealthy !== true)
      return {
        kind: "wait",
        reason: R.HealthCheckFailed,
        message: `pod ${obs.voters[P]!.name} is back; waiting for Raft Autopilot to report the cluster healthy`,
        ordinal: P,
      };
    return { kind: "complete-pod", ordinal: P };
  }
  const next = P - 1;
  if (next < 0) {
    // Kubernetes' own word that the roll is over, then OpenBao's on every voter.
    if (!obs.updateRevision || obs.currentRevision !== obs.updateRevision)
      return {
        kind: "wait",
        reason: R.InProgress,
        message: `the StatefulSet has not converged yet (currentRevision ${obs.currentRevision ?? "?"}, updateRevision ${obs.updateRevision ?? "?"})`,
      };
    for (const v of obs.voters) {
      const why = notConverged(v, obs, target);
      if (why) return { kind: "wait", ...why, ordinal: v.ordinal };
    }
    if (obs.raftHealthy !== true)
      return {
        kind: "wait",
        reason: R.HealthCheckFailed,
        message: "waiting for Raft Autopilot to report the cluster healthy",
      };
    return { kind: "finalize" };
  }
  // Every replaced pod must still be healthy before the next one goes.
  for (const v of obs.voters.slice(P)) {
    const why = notConverged(v, obs, target);
    if (why) return { kind: "wait", ...why, ordinal: v.ordinal };
  }
  for (const v of obs.voters.slice(0, P))
    if (!v.ready || v.sealed !== false)
      return {
        kind: "wait",
        reason: R.PodNotReady,
        message: `pod ${v.name} is not Ready and unsealed`,
        ordinal: v.ordinal,
      };
  if (obs.raftHealthy !== true)
    return {
      kind: "wait",
      reason: R.HealthCheckFailed,
      message: "waiting for Raft Autopilot to report the cluster healthy",
    };
  if (obs.leaderOrdinal === undefined)
    return { kind: "wait", reason: R.LeaderUnknown, message: "no Raft leader is known right now" };
  // A lone voter has no one to hand leadership to: asking it to step down only re-elects it, and
  // the roll would never move on. It is replaced as the leader (the outage a single voter implies).
  const successors = obs.voters.filter((v) => v.ordinal !== next && v.ready && v.sealed === false);
  if (obs.leaderOrdinal === next && successors.length > 0) {
    const last = u.lastStepDownTime ? Date.parse(u.lastStepDownTime) : Number.NaN;
    if (Number.isFinite(last) && inp.now.getTime() - last < inp.stepDownSettleMs)
      return {
        kind: "wait",
        reason: R.InProgress,
        message: `pod ${obs.voters[next]!.name} was asked to step down; waiting for another leader`,
        ordinal: next,
      };
    return { kind: "step-down", ordinal: next };
  }
  return { kind: "lower-partition", to: next };
}
