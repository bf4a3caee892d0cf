/**
 * The voter count a pass may apply, decided before anything is written. Pure.
 *
 * - Until status.initialized there is exactly one voter, so fresh pods cannot race to form
 *   separate Raft clusters.
 * - Growing is safe at once: new pods join through retry_join.
 * - Shrinking removes the departing pods' Raft peers first; the StatefulSet shrinks only once
 *   OpenBao no longer lists them, so quorum is never counted against pods that are gone.
 */
export interface VoterIntentInput {
  initialized: boolean;
  specReplicas: number;
  /** spec.replicas of the live StatefulSet; undefined when it does not exist yet. */
  liveReplicas?: number;
  /** Raft node ids OpenBao lists now; undefined when they could not be read. */
  raftPeers?: readonly string[];
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
  return { replicas: want, removePeers: [] };
}
