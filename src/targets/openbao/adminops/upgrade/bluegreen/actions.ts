import {
  type AutopilotState,
  demoteAll,
  promoteAll,
  type RaftOps,
  removeAll,
  stepDownIfLeading,
} from "../raftops/index.js";
import type { BlueGreenPhase, RaftAction } from "./types.js";

/**
 * Performs the plan's Raft actions against the state they were planned from. Returns a description
 * of the first failure, which the manager counts toward maxJobFailures instead of throwing (the next
 * pass re-reads Raft and plans again, so a half-done list is simply finished then).
 */
export async function performActions(
  actions: readonly RaftAction[],
  state: AutopilotState,
  ids: { blue: readonly string[]; green: readonly string[] },
  ops: RaftOps,
): Promise<string | undefined> {
  for (const a of actions) {
    try {
      if (a.kind === "stepDown") {
        // Off whichever side leads now; the plan only asks when the leader is on the wrong side.
        const from = ids.blue.includes(state.leader) ? ids.blue : ids.green;
        await stepDownIfLeading(ops, state, from);
      } else if (a.kind === "promote") await promoteAll(ops, state, ids[a.side]);
      else if (a.kind === "demote") await demoteAll(ops, state, ids[a.side]);
      else await removeAll(ops, state, ids[a.side]);
    } catch (e) {
      ops.signal?.throwIfAborted();
      const what = a.kind === "stepDown" ? a.kind : `${a.kind} ${a.side}`;
      return `${what}: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  return undefined;
}

/** Phases whose progress is Raft's: a pass that cannot read Raft there counts as a failed step. */
const RAFT_PHASES: readonly BlueGreenPhase[] = [
  "Promoting",
  "DemotingBlue",
  "Cleanup",
  "RollingBack",
  "RollbackCleanup",
];

/**
 * One pass's Raft work: the plan's actions, or a failure when Raft could not be read in a phase that
 * depends on it. A cluster that lost its quorum answers nobody; counting those passes is what lets a
 * stuck rollback reach break-glass instead of waiting forever.
 */
export async function executePass(
  phase: BlueGreenPhase,
  actions: readonly RaftAction[],
  seen: { state?: AutopilotState; ops?: RaftOps },
  ids: { blue: readonly string[]; green: readonly string[] },
): Promise<string | undefined> {
  if (!seen.state || !seen.ops)
    return RAFT_PHASES.includes(phase) || actions.length > 0
      ? "no OpenBao member answered with Raft's state"
      : undefined;
  if (actions.length === 0) return undefined;
  return performActions(actions, seen.state, ids, seen.ops);
}
