import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { POD } from "../../../runtime/builtin-types.js";
import type { Writes } from "../apply.js";
import type { BaoClient } from "../baoclient/client.js";
import { refOf, servingRef } from "../cluster-ref.js";
import { Component, LABEL_CLUSTER, podName } from "../identity.js";
import type { ServiceContext } from "../services.js";
import { readReplicasSettled, readReplicasToDemote } from "../workload/autopilot/read-replica-suffrage.js";
import type { StepDeps } from "./context.js";

/**
 * Keeps the read replicas on Autopilot's permanent non-voter list (why it can fall off: see
 * read-replica-suffrage.ts). Asked once per set of pods, leader and restore; a pass whose stamp
 * matches the last settled one asks OpenBao nothing.
 */
export async function keepReadReplicasNonVoters(
  cluster: OpenBaoCluster,
  ctx: ServiceContext,
  deps: Pick<StepDeps, "autopilotChecks">,
  writes: Writes,
  baoOf: () => Promise<BaoClient>,
  token: string,
): Promise<void> {
  const wanted = cluster.spec.readReplicas?.replicas ?? 0;
  if (wanted <= 0) return;
  const ns = cluster.metadata.namespace!;
  const labels = { [LABEL_CLUSTER]: cluster.metadata.name! };
  const ids = Array.from({ length: wanted }, (_, i) => podName(refOf(cluster), i, Component.ReadReplica));
  const pods = await Promise.all(
    [podName(servingRef(cluster), 0), ...ids].map((n) => ctx.reader.get(POD, n, ns, { labels })),
  );
  const stamp = [
    cluster.metadata.uid ?? "",
    cluster.status?.activeLeader ?? "",
    cluster.status?.restore?.uid ?? "",
    ...pods.map((p) => p?.metadata.uid ?? "-"),
  ].join("|");
  const key = `${ns}/${cluster.metadata.name}/read-replica-suffrage`;
  if (deps.autopilotChecks?.current(key, stamp)) return;
  const bao = await baoOf();
  const state = await bao.autopilotDetail(token, ctx.signal);
  const demote = readReplicasToDemote(state, ids);
  for (const id of demote) {
    writes.record("autopilot", `non-voter ${id}`);
    if (!writes.dryRun) await bao.demote(token, id, ctx.signal);
  }
  if (demote.length > 0 && !writes.dryRun)
    ctx.events.record(cluster, {
      type: "Normal",
      reason: OpenBaoClusterReason.AutopilotConfigured,
      action: "Configure",
      note: `Raft Autopilot told to keep read replicas ${demote.join(", ")} non-voters (its non-voter list did not name them, as after a restore of data taken without them)`,
    });
  // Settled only as found: after a demotion the next pass looks again.
  if (readReplicasSettled(state, ids)) deps.autopilotChecks?.remember(key, stamp);
}
