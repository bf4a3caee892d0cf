import { AcknowledgeDataLossAnnotation, OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { PERSISTENT_VOLUME_CLAIM, POD, SECRET } from "../../../runtime/builtin-types.js";
import { proceed } from "../../../runtime/stages.js";
import type { KubeObject } from "../../../runtime/types.js";
import { refOf, servingRef } from "../cluster-ref.js";
import { Component, clusterNames, LABEL_CLUSTER, LABEL_COMPONENT, podName } from "../identity.js";
import { selfInitEnabled } from "../workload/init/init.js";
import { judgeLostData } from "../workload/init/lost-data.js";
import { podRegistration } from "../workload/registration/state.js";
import { baoForOrdinal } from "./bao.js";
import { failedWith, type PassBase, type StepResult } from "./context.js";

const running = (p: KubeObject | undefined): p is KubeObject =>
  !!p &&
  !p.metadata.deletionTimestamp &&
  (p["status"] as { phase?: string } | undefined)?.phase === "Running";

/**
 * Before initialization: a cluster that was initialized but whose pod 0 answers uninitialized has
 * lost its data, and is not initialized over it (verdict in workload/init/lost-data.ts). A settled
 * cluster pays nothing: pod 0's registration label says initialized, and OpenBao is not asked.
 * Self-init clusters are left out: OpenBao initializes itself at start, before any operator sees it.
 */
export async function lostDataStep(pass: PassBase): Promise<StepResult> {
  const { cluster, ctx, deps, result } = pass;
  if (selfInitEnabled(cluster)) return proceed();
  const ns = cluster.metadata.namespace!;
  const pod0 = podName(servingRef(cluster), 0);
  const labels = { [LABEL_CLUSTER]: cluster.metadata.name! };
  const pod = await ctx.reader.get<KubeObject>(POD, pod0, ns, { labels });
  if (!running(pod) || podRegistration(pod.metadata.labels).initialized === true) return proceed();
  const names = clusterNames(refOf(cluster));
  const initializedBy = result.initialized
    ? "status"
    : (await ctx.reader.get(SECRET, names.rootTokenSecret, ns))
      ? "root-token Secret"
      : undefined;
  if (!initializedBy) return proceed();
  let pod0Initialized: boolean | undefined;
  try {
    const bao = await baoForOrdinal(deps, cluster, ctx, 0);
    pod0Initialized = (await bao.health(ctx.signal)).initialized;
  } catch {
    return proceed(); // not answering yet: the initialization step waits for it as before
  }
  if (pod0Initialized) return proceed();
  const peers = await ctx.reader.list<KubeObject>(POD, {
    namespace: ns,
    labelSelector: `${LABEL_CLUSTER}=${cluster.metadata.name},${LABEL_COMPONENT}=${Component.Server}`,
  });
  const peerInitialized = peers.some(
    (p) => p.metadata.name !== pod0 && running(p) && podRegistration(p.metadata.labels).initialized === true,
  );
  const claimName = `data-${pod0}`;
  const claim = await ctx.reader.get<KubeObject>(PERSISTENT_VOLUME_CLAIM, claimName, ns);
  const verdict = judgeLostData({
    initializedBy,
    pod0Initialized,
    peerInitialized,
    pod0,
    ...(claim?.metadata.uid ? { claim: { name: claimName, uid: claim.metadata.uid } } : {}),
    rootTokenSecret: names.rootTokenSecret,
    acknowledgement: cluster.metadata.annotations?.[AcknowledgeDataLossAnnotation],
  });
  if (verdict.kind === "intact") return proceed();
  if (verdict.kind === "lost")
    // Degraded=True with this reason; its transition is the Warning event that says what to do.
    return failedWith(OpenBaoClusterReason.DataLost, verdict.message);
  ctx.log.warn({ pod: pod0, claim: claimName }, "data loss acknowledged; initializing afresh");
  ctx.events.record(cluster, {
    type: "Warning",
    reason: OpenBaoClusterReason.DataLossAcknowledged,
    action: "Initialize",
    note: verdict.message,
  });
  result.initialized = false; // the initialization step runs now, as on first boot
  return proceed();
}
