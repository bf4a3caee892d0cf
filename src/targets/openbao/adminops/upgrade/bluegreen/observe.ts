/**
 * What one blue-green pass looks at, read fresh: green and blue pods (Ready, or stuck for a reason a
 * wait will not cure), and Autopilot's view of Raft reduced to the facts the phases wait on. Raft
 * that cannot be read stays undefined: the plan then waits, it never guesses.
 */

import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { POD } from "../../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { refOf, servingRef, servingRevision } from "../../../cluster-ref.js";
import {
  LABEL_OPENBAO_SEALED,
  LABEL_REVISION,
  podSelector,
  revisionNames,
  revisionSelector,
  voterSetName,
} from "../../../identity.js";
import { type BaoAccess, podClient } from "../core/observe.js";
import {
  type AutopilotState,
  allJoined,
  allVoters,
  caughtUp,
  leaderIn,
  noneVote,
  presentIds,
  quorumWithin,
  RaftClient,
} from "../raftops/index.js";
import type { BlueGreenStatus, RaftView } from "./types.js";

/** Container states that do not cure themselves: waiting longer will not make green run. */
const STUCK = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
]);

interface PodStatus {
  conditions?: { type: string; status: string }[];
  containerStatuses?: { name: string; state?: { waiting?: { reason?: string } } }[];
}

const selectorText = (sel: Record<string, string>, extra = "") =>
  Object.entries(sel)
    .map(([k, v]) => `${k}=${v}`)
    .concat(extra ? [extra] : [])
    .join(",");

const ready = (p: KubeObject) =>
  ((p["status"] as PodStatus | undefined)?.conditions ?? []).some(
    (c) => c.type === "Ready" && c.status === "True",
  );

/** The first pod stuck for a reason waiting will not cure, as "pod: reason". Pure. */
export function stuckReason(pods: KubeObject[]): string | undefined {
  for (const p of pods) {
    for (const c of (p["status"] as PodStatus | undefined)?.containerStatuses ?? []) {
      const reason = c.state?.waiting?.reason;
      if (reason && STUCK.has(reason)) return `${p.metadata.name}: ${reason}`;
    }
  }
  return undefined;
}

/** Raft server ids (pod names) of each side. */
export function sideIds(cluster: OpenBaoCluster, bg: BlueGreenStatus): { blue: string[]; green: string[] } {
  const ref = refOf(cluster);
  // Blue is the serving revision: the cluster's own set, or the one a previous upgrade promoted.
  const blueSet = voterSetName(servingRef(cluster));
  const n = (count: number | undefined, set: string) =>
    Array.from({ length: count ?? 0 }, (_, i) => `${set}-${i}`);
  return {
    blue: n(bg.blueReplicas, blueSet),
    green: bg.greenRevision ? n(bg.greenReplicas, revisionNames(ref, bg.greenRevision).statefulSet) : [],
  };
}

/** Autopilot's state reduced to the plan's facts. Pure. */
export function raftView(state: AutopilotState, ids: { blue: string[]; green: string[] }): RaftView {
  const { blue, green } = ids;
  return {
    greenJoined: green.length > 0 && allJoined(state, green),
    greenCaughtUp: green.length > 0 && caughtUp(state, green),
    greenVoting: green.length > 0 && allVoters(state, green),
    blueDemoted: noneVote(state, blue),
    blueVoting: allVoters(state, blue),
    greenDemoted: noneVote(state, green),
    leaderOnGreen: leaderIn(state, green),
    leaderOnBlue: leaderIn(state, blue),
    // Marked for demotion (listed in non_voters) is not demoted yet: until Autopilot's next pass the
    // server is still in `voters` and still votes, and a step-down then elects it (seen on the node).
    leaderSideFollowersVote: (blue.includes(state.leader) ? blue : green).some(
      (id) => id !== state.leader && state.voters.includes(id),
    ),
    bluePresent: presentIds(state, blue).length,
    greenPresent: presentIds(state, green).length,
    blueQuorum: quorumWithin(state, blue),
  };
}

export interface BlueGreenObservation {
  greenReady: number;
  greenFailure?: string;
  greenSealed: string[];
  blueReady: number;
  raft?: RaftView;
  /** Autopilot's full state, for the executor's actions (undefined when unreadable). */
  state?: AutopilotState;
  /** A client for a member that answered (standbys forward what the actions send). */
  member?: RaftClient;
}

export async function observeBlueGreen(
  client: KubeClient,
  access: BaoAccess,
  cluster: OpenBaoCluster,
  bg: BlueGreenStatus,
  token: string | undefined,
  signal?: AbortSignal,
): Promise<BlueGreenObservation> {
  const ref = refOf(cluster);
  const list = async (labelSelector: string) =>
    (await client.list<KubeObject>(POD, { namespace: ref.namespace, labelSelector })).items;
  const greenPods = bg.greenRevision ? await list(selectorText(revisionSelector(ref, bg.greenRevision))) : [];
  const blueRevision = servingRevision(cluster);
  const bluePods = await list(
    blueRevision
      ? selectorText(revisionSelector(ref, blueRevision))
      : selectorText(podSelector(ref), `!${LABEL_REVISION}`),
  );
  const out: BlueGreenObservation = {
    greenReady: greenPods.filter(ready).length,
    greenFailure: stuckReason(greenPods),
    greenSealed: greenPods
      .filter((p) => p.metadata.labels?.[LABEL_OPENBAO_SEALED] === "true")
      .map((p) => p.metadata.name!)
      .sort(),
    blueReady: bluePods.filter(ready).length,
  };
  if (!token) return out;
  // Any member answers for the whole cluster (standbys forward; Autopilot's state covers both sides):
  // blue's pods first, green's when blue is gone (Cleanup) or down.
  const ids = sideIds(cluster, bg);
  for (const id of [...ids.blue, ...ids.green]) {
    try {
      const member = await memberClient(client, access, cluster, id);
      const state = await member.autopilotDetail(token, signal);
      return { ...out, raft: raftView(state, ids), state, member };
    } catch {
      signal?.throwIfAborted();
    }
  }
  return out;
}

/** A RaftClient for pod `podName`, blue or green. */
function memberClient(
  client: KubeClient,
  access: BaoAccess,
  cluster: OpenBaoCluster,
  podName: string,
): Promise<RaftClient> {
  return podClient(client, access, cluster, podName, (ep) => new RaftClient(ep));
}
