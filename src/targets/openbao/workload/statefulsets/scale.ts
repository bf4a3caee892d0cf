/**
 * The voter count a pass may apply, decided before anything is written. Pure.
 *
 * - Until status.initialized there is exactly one voter, so fresh pods cannot race to form
 *   separate Raft clusters.
 * - Growing is safe at once: new pods join through retry_join.
 * - Shrinking removes the departing pods' Raft peers first; the StatefulSet shrinks only once
 *   OpenBao no longer lists them, so quorum is never counted against pods that are gone.
 * - Nor while Autopilot's state still lists one: that state is refreshed every few seconds, and
 *   from an older one Autopilot can promote a just-removed non-voter, which puts it back into Raft
 *   as a voter; its pod then goes, and a shrink to one voter is left without quorum (seen in the
 *   fault campaign's scale 3 → 1, OpenBao 2.7.2: promoted 0.8 s after its removal).
 */
export interface VoterIntentInput {
  initialized: boolean;
  specReplicas: number;
  /** spec.replicas of the live StatefulSet; undefined when it does not exist yet. */
  liveReplicas?: number;
  /** Raft node ids OpenBao lists now; undefined when they could not be read. */
  raftPeers?: readonly string[];
  /**
   * Server ids Autopilot's state lists now, asked once Raft lists no departing peer; undefined
   * when not asked. A departing id still there holds the shrink back.
   */
  autopilotServers?: readonly string[];
  /** Pod name of an ordinal (node ids are pod names). */
  podName: (ordinal: number) => string;
}

export interface VoterIntent {
  replicas: number;
  /** Node ids to remove from Raft before the StatefulSet may shrink. */
  removePeers: string[];
  /** Set when the shrink waits (peers unknown); the live count is kept meanwhile. */
  waiting?: string;
}

export function voterIntent(inp: VoterIntentInput): VoterIntent {
  const want = inp.initialized ? inp.specReplicas : 1;
  const live = inp.liveReplicas;
  if (live === undefined || want >= live) return { replicas: want, removePeers: [] };
  if (!inp.initialized) {
    // Not initialized yet but more than one pod exists (an earlier spec, a restore): nothing is in
    // Raft to remove, and extra fresh pods must not race pod 0.
    return { replicas: want, removePeers: [] };
  }
  const leaving: string[] = [];
  for (let i = want; i < live; i++) leaving.push(inp.podName(i));
  if (inp.raftPeers === undefined)
    return {
      replicas: live,
      removePeers: [],
      waiting: `scale-down to ${want} waits until the Raft peers can be read`,
    };
  const still = leaving.filter((id) => inp.raftPeers!.includes(id));
  if (still.length > 0) return { replicas: live, removePeers: still };
  const remembered = leaving.filter((id) => inp.autopilotServers?.includes(id));
  if (remembered.length > 0)
    return {
      replicas: live,
      removePeers: [],
      waiting: `scale-down to ${want} waits until Autopilot's state no longer lists the removed peers ${remembered.join(", ")} (from an older state it could vote them back in)`,
    };
  return { replicas: want, removePeers: [] };
}
