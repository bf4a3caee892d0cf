/**
 * The runtime restart's next step, pure: from status.runtimeRestart and a fresh observation alone, so
 * a pass after an operator restart decides exactly what the dead process would have.
 *
 * The set of pods to replace is fixed when the restart begins (name and UID of every voter pod
 * created before the cutoff); a pod has been replaced once the pod under its name has another UID.
 * UIDs, not creation times, decide: they need no clock agreement between the operator and the API
 * server, and the second-precision creationTimestamp cannot tell a replacement made in the same
 * second from the original.
 *
 *   any voter missing, terminating, not Ready or sealed, or Autopilot unhealthy → wait
 *   pending pods whose UID changed → record them replaced
 *   nothing pending → finalize
 *   a pending standby → delete it (highest ordinal first)
 *   only the leader pending → step it down first (and wait for another leader); a lone voter,
 *     which has no one to hand leadership to, is deleted as it is
 */

import type { OpenBaoClusterStatus } from "../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../../apis/openbaocluster-names.js";
import { collateNumeric } from "../../../../runtime/text-order.js";
import type { ClusterObservation } from "../upgrade/core/observe.js";

export type RuntimeRestartStatus = NonNullable<OpenBaoClusterStatus["runtimeRestart"]>;
export type RestartPod = { name: string; uid: string };

/** A live voter pod as the API server has it. */
export interface PodFacts {
  name: string;
  uid: string;
  /** metadata.creationTimestamp. */
  createdAt?: string;
}

export type RestartStep =
  | { kind: "wait"; reason: string; message: string }
  | { kind: "record-replaced"; replaced: string[]; remaining: RestartPod[] }
  | { kind: "delete"; pod: RestartPod; leader: boolean }
  | { kind: "step-down"; ordinal: number; pod: RestartPod }
  | { kind: "finalize" };

export interface RestartPlanInput {
  record: RuntimeRestartStatus;
  obs: ClusterObservation;
  /** The live voter pods by name. */
  pods: ReadonlyMap<string, PodFacts>;
  now: Date;
  /** After a step-down, how long to wait for another leader before asking again. */
  stepDownSettleMs: number;
}

/**
 * The moment before which a pod counts as not restarted: the time spec.runtime.restartAt names when
 * it is one, never later than `now` (a value in the future, or any other text, asks for every pod
 * running now).
 */
export function restartCutoff(restartAt: string, now: Date): Date {
  const at = Date.parse(restartAt);
  return Number.isFinite(at) && at < now.getTime() ? new Date(at) : now;
}

/** The voter pods to replace: those created before the cutoff, as name and UID. */
export function podsToRestart(pods: Iterable<PodFacts>, cutoff: Date): RestartPod[] {
  const out: RestartPod[] = [];
  for (const p of pods) {
    const created = p.createdAt ? Date.parse(p.createdAt) : Number.NaN;
    // A pod with no readable creation time is restarted: asked for a restart, doing one more is safe.
    if (!Number.isFinite(created) || created < cutoff.getTime()) out.push({ name: p.name, uid: p.uid });
  }
  return out.sort((a, b) => collateNumeric(a.name, b.name));
}

export function planRestart(inp: RestartPlanInput): RestartStep {
  const { record, obs, pods } = inp;
  for (const v of obs.voters) {
    if (!v.exists || v.terminating)
      return { kind: "wait", reason: R.PodNotReady, message: `pod ${v.name} is being replaced` };
    if (!v.ready) return { kind: "wait", reason: R.PodNotReady, message: `pod ${v.name} is not Ready yet` };
    if (v.sealed !== false)
      return v.sealed
        ? { kind: "wait", reason: R.Sealed, message: `OpenBao on ${v.name} is sealed` }
        : {
            kind: "wait",
            reason: R.HealthCheckFailed,
            message: `OpenBao on ${v.name} does not answer its health check yet`,
          };
  }
  if (obs.raftHealthy !== true)
    return {
      kind: "wait",
      reason: R.HealthCheckFailed,
      message: "waiting for Raft Autopilot to report the cluster healthy",
    };
  const pending = record.pendingPods ?? [];
  const remaining = pending.filter((p) => pods.get(p.name)?.uid === p.uid);
  if (remaining.length !== pending.length)
    return {
      kind: "record-replaced",
      replaced: pending.filter((p) => !remaining.includes(p)).map((p) => p.name),
      remaining,
    };
  if (remaining.length === 0) return { kind: "finalize" };
  if (obs.leaderOrdinal === undefined)
    return { kind: "wait", reason: R.LeaderUnknown, message: "no Raft leader is known right now" };
  const ordinalOf = (name: string) => obs.voters.find((v) => v.name === name)?.ordinal;
  const standbys = remaining
    .filter((p) => ordinalOf(p.name) !== obs.leaderOrdinal)
    .sort((a, b) => (ordinalOf(b.name) ?? -1) - (ordinalOf(a.name) ?? -1));
  if (standbys.length > 0) return { kind: "delete", pod: standbys[0]!, leader: false };
  const leader = remaining[0]!;
  const ordinal = obs.leaderOrdinal;
  const successors = obs.voters.filter((v) => v.ordinal !== ordinal && v.ready && v.sealed === false);
  if (successors.length === 0) return { kind: "delete", pod: leader, leader: true };
  const last = record.lastStepDownTime ? Date.parse(record.lastStepDownTime) : Number.NaN;
  if (Number.isFinite(last) && inp.now.getTime() - last < inp.stepDownSettleMs)
    return {
      kind: "wait",
      reason: R.RestartInProgress,
      message: `leader ${leader.name} was asked to step down; waiting for another leader`,
    };
  return { kind: "step-down", ordinal, pod: leader };
}
