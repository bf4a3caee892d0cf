import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { errorMessage } from "../../../runtime/errors.js";
import { wait } from "../../../runtime/stages.js";
import type { KubeObject } from "../../../runtime/types.js";
import { cached } from "../apply.js";
import { servingRef } from "../cluster-ref.js";
import { podName, voterSetName } from "../identity.js";
import { raftPeersRemoved } from "../metrics.js";
import { type VoterIntent, voterIntent } from "../workload/statefulsets/scale.js";
import { baoForOrdinal, baoForPod, type RaftView, raftPeers } from "./bao.js";
import type { PassBase, StepStop } from "./context.js";

/**
 * The safe voter count for this pass: capped at one until initialized, and on a shrink only as far
 * as the departing pods have left Raft. Removing those peers happens here, on the active node, before
 * the StatefulSet is applied; a leader that is itself leaving is asked to step down first.
 */
export async function voterStep(
  pass: PassBase,
): Promise<{ intent: VoterIntent; liveVoters: KubeObject | undefined } | StepStop> {
  const { cluster, ctx, deps, writes, result } = pass;
  const ns = cluster.metadata.namespace!;
  // The serving revision's set: after a blue-green upgrade the voters are `<name>-<revision>-N`.
  const ref = servingRef(cluster);
  const liveSts = cached(deps.statefulSets, ns, voterSetName(ref));
  const liveReplicas = liveSts ? ((liveSts["spec"] as { replicas?: number }).replicas ?? 1) : undefined;
  const specReplicas = cluster.spec.replicas ?? 3;
  const podNameOf = (i: number) => podName(ref, i);
  let intent = voterIntent({
    initialized: result.initialized,
    specReplicas,
    liveReplicas,
    podName: podNameOf,
  });
  const found = (intent: VoterIntent) => ({ intent, liveVoters: liveSts });
  if (!result.initialized || liveReplicas === undefined || specReplicas >= liveReplicas) return found(intent);
  /**
   * The intent from Raft's list; once it lists no departing peer, Autopilot's state is asked too and
   * must not list one either (voterIntent says why).
   */
  const settle = async (view: RaftView | undefined): Promise<VoterIntent> => {
    const base = { initialized: true, specReplicas, liveReplicas, raftPeers: view?.ids, podName: podNameOf };
    const plain = voterIntent(base);
    if (!view || plain.replicas === liveReplicas) return plain;
    const state = await (await baoForOrdinal(deps, cluster, ctx, 0))
      .autopilotDetail(view.token, ctx.signal)
      .catch((e: unknown) => {
        ctx.log.warn({ err: errorMessage(e) }, "could not read Autopilot's state");
        return undefined;
      });
    if (!state)
      return {
        replicas: liveReplicas,
        removePeers: [],
        waiting: `scale-down to ${specReplicas} waits until Autopilot's state can be read`,
      };
    return voterIntent({ ...base, autopilotServers: Object.keys(state.servers) });
  };

  // A shrink is asked for: the departing pods leave Raft first.
  const peers = await raftPeers(deps, cluster, ctx).catch((e: unknown) => {
    ctx.log.warn({ err: errorMessage(e) }, "could not read the Raft peers");
    return undefined;
  });
  intent = voterIntent({
    initialized: true,
    specReplicas,
    liveReplicas,
    raftPeers: peers?.ids,
    podName: podNameOf,
  });
  if (!peers) return found(intent);
  if (intent.removePeers.length === 0) return found(await settle(peers));
  // Membership changes go to the active node (a standby answers 307). When the active node is
  // itself leaving, it steps down first and the removal waits for the next pass.
  const leader = peers.leader;
  if (!leader || !peers.ids.includes(leader))
    return wait(OpenBaoClusterReason.LeaderUnknown, "scale-down waits for an active node");
  if (intent.removePeers.includes(leader)) {
    if (writes.dryRun) writes.record("step-down", leader);
    else {
      await (await baoForPod(deps, cluster, ctx, leader)).stepDown(peers.token, ctx.signal);
      ctx.log.info({ leader }, "asked the departing active node to step down before removing it");
    }
    return wait(
      OpenBaoClusterReason.StepDownRequested,
      `${leader} leads Raft and is leaving: it was asked to step down first`,
    );
  }
  const active = await baoForPod(deps, cluster, ctx, leader);
  for (const id of intent.removePeers) {
    if (writes.dryRun) {
      writes.record("remove-peer", id);
      continue;
    }
    await active.removePeer(peers.token, id, ctx.signal);
    raftPeersRemoved.inc({ namespace: ns, name: cluster.metadata.name! });
    ctx.log.info({ peer: id }, "removed Raft peer before shrinking the voter StatefulSet");
    ctx.events.record(cluster, {
      type: "Normal",
      reason: OpenBaoClusterReason.RaftPeerRemoved,
      action: "ScaleDown",
      note: `removed Raft peer ${id} before its pod goes`,
    });
  }
  if (writes.dryRun) return found(intent);
  return found(await settle(await raftPeers(deps, cluster, ctx)));
}
