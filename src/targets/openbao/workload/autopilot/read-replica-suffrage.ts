import type { AutopilotState } from "../../baoclient/autopilot-state.js";

/**
 * Read replicas stay non-voters only while OpenBao's Autopilot keeps them on its permanent
 * non-voter list: its promoter makes every other stable non-voter a voter. A node joining with
 * `retry_join_as_non_voter` is put on that list once, when it joins; the list lives in the
 * replicated data (`autopilot/non-voters`), so restoring a snapshot taken without the replica (from
 * another cluster, or from before the replica existed) drops it, and once the voters restart the
 * replica is promoted. Autopilot's state shows the list as each server's node type.
 */

/** The read replicas Autopilot intends to make (or keep) voters: members whose node type is not non-voter. Pure. */
export function readReplicasToDemote(state: AutopilotState, replicaIds: readonly string[]): string[] {
  return replicaIds.filter((id) => {
    const server = state.servers[id];
    return server !== undefined && server.nodeType !== "non-voter";
  });
}

/** Every read replica is a member and on the permanent non-voter list: nothing to ask again. Pure. */
export function readReplicasSettled(state: AutopilotState, replicaIds: readonly string[]): boolean {
  return replicaIds.every((id) => state.servers[id]?.nodeType === "non-voter");
}
