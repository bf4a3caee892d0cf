import type { AutopilotState, RaftClient } from "./client.js";
import { leaderIn, presentIds, toDemote, toPromote } from "./membership.js";

/**
 * One step of each membership change, idempotent so a restarted operator can repeat it: each reads
 * the state it is given, acts on what is still missing, and says whether anything was sent. The
 * caller re-reads Autopilot's state and calls again until the reading says done.
 */
export interface RaftOps {
  client: RaftClient;
  token: string;
  signal?: AbortSignal;
}

/** Promotes every green non-voter. */
export async function promoteAll(ops: RaftOps, state: AutopilotState, ids: readonly string[]) {
  const pending = toPromote(state, ids);
  for (const id of pending) await ops.client.promote(ops.token, id, ops.signal);
  return pending;
}

/** Marks every voter of `ids` for demotion; Autopilot applies it (the leader only after stepping down). */
export async function demoteAll(ops: RaftOps, state: AutopilotState, ids: readonly string[]) {
  const pending = toDemote(state, ids);
  for (const id of pending) await ops.client.demote(ops.token, id, ops.signal);
  return pending;
}

/**
 * Moves leadership off `from` when it leads. A standby forwards the step-down to the active node, so
 * `ops.client` may be any member. Raft elects the most up-to-date remaining voter, so `from` should
 * already be marked for demotion or the old leader may win again.
 */
export async function stepDownIfLeading(
  ops: RaftOps,
  state: AutopilotState,
  from: readonly string[],
): Promise<boolean> {
  if (!leaderIn(state, from)) return false;
  await ops.client.stepDown(ops.token, ops.signal);
  return true;
}

/** Removes every member of `ids` still present. */
export async function removeAll(ops: RaftOps, state: AutopilotState, ids: readonly string[]) {
  const present = presentIds(state, ids);
  for (const id of present) await ops.client.removePeer(ops.token, id, ops.signal);
  return present;
}
