import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import { wait } from "../../../runtime/stages.js";
import { applyOwned, cached } from "../apply.js";
import { refOf } from "../cluster-ref.js";
import { Component, clusterNames, legacyNames, podName } from "../identity.js";
import { raftPeersRemoved } from "../metrics.js";
import { platformOf } from "../platform.js";
import { UNSEAL_KEY_FILE } from "../workload/config/unseal-key.js";
import {
  buildPodDisruptionBudget,
  buildStatefulSet,
  CONFIG_KEY,
  PATHS,
  tlsSecretName,
} from "../workload/statefulsets/build.js";
import { applyConfigObject } from "../workload/statefulsets/config-objects.js";
import { rolloutHash } from "../workload/statefulsets/hash.js";
import { voterIntent } from "../workload/statefulsets/scale.js";
import { liveClaim } from "../workload/storage/storage.js";
import { baoForPod, raftPeers } from "./bao.js";
import type { StepStop, WorkloadPass } from "./context.js";
import { withPinnedImage } from "./images.js";
import { retireLegacyPdb } from "./legacy-names.js";

interface StatefulSetStatus {
  readyReplicas?: number;
}

/**
 * The read-replica StatefulSet: non-voters that join through the same retry_join list, only once
 * the cluster is initialized. Shrinking removes their Raft peers on the active node first.
 */
export async function readReplicasStep(pass: WorkloadPass): Promise<StepStop | undefined> {
  const { cluster, ctx, deps, writes, result } = pass;
  const ns = cluster.metadata.namespace!;
  const names = clusterNames(refOf(cluster));
  const want = result.initialized ? (cluster.spec.readReplicas?.replicas ?? 0) : 0;
  const live = cached(deps.statefulSets, ns, names.readReplicaStatefulSet);
  if (want === 0 && !live) return undefined;
  const liveReplicas = live ? ((live["spec"] as { replicas?: number }).replicas ?? 0) : undefined;
  const readyReplicas = ((live?.["status"] ?? {}) as StatefulSetStatus).readyReplicas ?? 0;
  result.readReplicas = { desiredReplicas: want, readyReplicas };
  let replicas = want;
  if (liveReplicas !== undefined && want < liveReplicas) {
    const podNameOf = (i: number) => podName(refOf(cluster), i, Component.ReadReplica);
    const peers = await raftPeers(deps, cluster, ctx).catch(() => undefined);
    const intent = voterIntent({
      initialized: true,
      specReplicas: want,
      liveReplicas,
      raftPeers: peers?.ids,
      podName: podNameOf,
    });
    replicas = intent.replicas;
    if (intent.removePeers.length > 0 && peers?.leader) {
      const active = await baoForPod(deps, cluster, ctx, peers.leader);
      for (const id of intent.removePeers) {
        writes.record("remove-peer", id);
        if (writes.dryRun) continue;
        await active.removePeer(peers.token, id, ctx.signal);
        raftPeersRemoved.inc({ namespace: ns, name: cluster.metadata.name! });
        ctx.log.info({ peer: id }, "removed read-replica Raft peer before shrinking its StatefulSet");
      }
      const after = await raftPeers(deps, cluster, ctx).catch(() => undefined);
      replicas = voterIntent({
        initialized: true,
        specReplicas: want,
        liveReplicas,
        raftPeers: after?.ids,
        podName: podNameOf,
      }).replicas;
    }
  }
  const configText = deps.services.renderConfig(cluster, {
    clusterDomain: deps.config.clusterDomain,
    component: "read-replica",
    peers: Math.max(cluster.spec.replicas ?? 3, 1),
    tlsDir: PATHS.tlsDir,
    sealKeyPath: `${PATHS.unsealDir}/${UNSEAL_KEY_FILE}`,
  });
  await applyConfigObject(pass, configText, names.readReplicaConfigMap, Component.ReadReplica);
  const runtime = deps.services.podRuntime(cluster, {
    configFiles: [`${PATHS.configDir}/${CONFIG_KEY}`],
    tlsSecretName: tlsSecretName(cluster),
  });
  await applyOwned(
    ctx,
    writes,
    withPinnedImage(
      pass,
      buildStatefulSet(cluster, {
        component: Component.ReadReplica,
        replicas,
        configHash: rolloutHash(configText) + pass.sealCredentialsRevision,
        certHash: pass.certHash,
        clusterDomain: deps.config.clusterDomain,
        runtime,
        platform: platformOf(deps.config),
        claim: liveClaim(live),
      }),
    ),
    live,
  );
  await applyOwned(
    ctx,
    writes,
    buildPodDisruptionBudget(cluster, Component.ReadReplica),
    cached(deps.pdbs, ns, names.readReplicaPodDisruptionBudget),
  );
  await retireLegacyPdb(
    ctx,
    writes,
    deps.pdbs,
    ns,
    legacyNames(refOf(cluster)).readReplicaPodDisruptionBudget,
  );
  if (replicas !== want)
    return wait(R.ScaleDownWaiting, `read replicas shrink to ${want} once their Raft peers are removed`);
  return undefined;
}
