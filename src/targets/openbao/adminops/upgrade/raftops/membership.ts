import type { AutopilotState } from "./client.js";

/**
 * Pure readings of Autopilot's state for a blue-green upgrade: two sets of Raft server ids (blue,
 * the revision serving now, and green, the one coming up) and what the cluster's membership says
 * about them. The manager turns these into its phase decisions.
 */
export interface RevisionSets {
  blue: readonly string[];
  green: readonly string[];
}

/** Every id is a member (voter or non-voter). */
export function allJoined(state: AutopilotState, ids: readonly string[]): boolean {
  const members = new Set([...state.voters, ...state.nonVoters, ...Object.keys(state.servers)]);
  return ids.every((id) => members.has(id));
}

/** Ids that are members now (for removal: only these still need a remove-peer). */
export function presentIds(state: AutopilotState, ids: readonly string[]): string[] {
  return ids.filter((id) => id in state.servers || state.voters.includes(id) || state.nonVoters.includes(id));
}

/** Every id votes (and is not merely marked for demotion, as the leader can be). */
export function allVoters(state: AutopilotState, ids: readonly string[]): boolean {
  return ids.every((id) => state.voters.includes(id) && !state.nonVoters.includes(id));
}

/** No id votes any more (a demoted leader keeps its vote until it steps down). */
export function noneVote(state: AutopilotState, ids: readonly string[]): boolean {
  return ids.every((id) => !state.voters.includes(id));
}

/**
 * Green has caught up: every green server is healthy in Autopilot's view and its last index is
 * within `maxLag` entries of the leader's.
 */
export function caughtUp(state: AutopilotState, ids: readonly string[], maxLag = 100): boolean {
  const leaderIndex = state.servers[state.leader]?.lastIndex ?? 0;
  return ids.every((id) => {
    const s = state.servers[id];
    return s?.healthy === true && leaderIndex - s.lastIndex <= maxLag;
  });
}

export function leaderIn(state: AutopilotState, ids: readonly string[]): boolean {
  return state.leader !== "" && ids.includes(state.leader);
}

/** The voters of `ids` that are not yet marked for demotion (leader included). */
export function toDemote(state: AutopilotState, ids: readonly string[]): string[] {
  return ids.filter((id) => state.voters.includes(id) && !state.nonVoters.includes(id));
}

/** The members of `ids` that do not vote yet. */
export function toPromote(state: AutopilotState, ids: readonly string[]): string[] {
  return ids.filter((id) => !state.voters.includes(id) || state.nonVoters.includes(id));
}

/**
 * A quorum of `ids` votes and is healthy: more than half of the current voters are in `ids` and
 * healthy. This is what must hold before the other side may be demoted or removed.
 */
export function quorumWithin(state: AutopilotState, ids: readonly string[]): boolean {
  const healthy = state.voters.filter((v) => ids.includes(v) && state.servers[v]?.healthy === true);
  return healthy.length * 2 > state.voters.length;
}
