import { refOf } from "../cluster-ref.js";
import { Component, clusterNames } from "../identity.js";
import { selfInitEnabled } from "../workload/init/init.js";
import {
  buildConfigMap,
  buildPodDisruptionBudget,
  buildSelfInitConfigMap,
  buildStatefulSet,
  CONFIG_KEY,
  PATHS,
  SELF_INIT_KEY,
  tlsSecretName,
  UNSEAL_KEY_FILE,
} from "../workload/statefulsets/build.js";
import { rolloutHash } from "../workload/statefulsets/hash.js";
import { voterPartition } from "../workload/statefulsets/partition.js";
import { applyOwned, cached, ensureUnsealKey } from "../workload/statefulsets/reconcile.js";
import type { VoterIntent } from "../workload/statefulsets/scale.js";
import { liveClaim } from "../workload/storage/storage.js";
import { type Pass, recordServiceChanges, type Step, type StepOutcome, waitingAt } from "./context.js";
import { readReplicasStep } from "./read-replicas.js";
import { voterStep } from "./voters.js";

/**
 * Infrastructure, in the document's order: safe voter intent (after validation, which ran first),
 * config.hcl, networking, identity, then the workloads (seal key, reload wrapper, voter
 * StatefulSet and PDB, read replicas).
 */
export const infrastructureStep: Step = {
  name: "infrastructure",
  async run(pass: Pass): Promise<StepOutcome> {
    const intent = await voterStep(pass);
    if ("step" in intent) return intent;
    const configHash = await configStep(pass);
    const net = await pass.deps.services.networking(pass.ctx, pass.cluster);
    recordServiceChanges(pass, net.changes);
    if (!net.ready) return waitingAt("infrastructure", net.reason, net.message);
    const ident = await pass.deps.services.identity(pass.ctx, pass.cluster);
    recordServiceChanges(pass, ident.changes);
    if (!ident.ready) return waitingAt("infrastructure", ident.reason, ident.message);
    await workloadsStep(pass, intent, configHash);
    const replicas = await readReplicasStep(pass);
    if (replicas) return replicas;
    if (intent.waiting) return waitingAt("infrastructure", "ScaleDownWaiting", intent.waiting);
    if (intent.removePeers.length > 0 && pass.writes.dryRun)
      return waitingAt(
        "infrastructure",
        "ScaleDownPending",
        `would remove Raft peers ${intent.removePeers.join(", ")}`,
      );
    return undefined;
  },
};

/** The voters' config.hcl and the self-init request file; returns the hash that rolls the pods. */
async function configStep({ cluster, ctx, deps, writes, result }: Pass): Promise<string> {
  const ns = cluster.metadata.namespace!;
  const names = clusterNames(refOf(cluster));
  const configText = deps.services.renderConfig(cluster, {
    clusterDomain: deps.config.clusterDomain,
    component: "server",
    // The final voter count from the start: growing from one pod after init then changes no
    // config and rolls no pod.
    peers: Math.max(cluster.spec.replicas ?? 3, 1),
    tlsDir: PATHS.tlsDir,
    sealKeyPath: `${PATHS.unsealDir}/${UNSEAL_KEY_FILE}`,
  });
  await applyOwned(
    ctx,
    writes,
    buildConfigMap(cluster, configText),
    cached(deps.configMaps, ns, names.configMap),
  );
  const selfInitText = selfInitEnabled(cluster) ? deps.services.renderSelfInit(cluster) : "";
  await applyOwned(
    ctx,
    writes,
    buildSelfInitConfigMap(cluster, selfInitText || "# no self-init requests\n", result.initialized),
    cached(deps.configMaps, ns, names.selfInitConfigMap),
  );
  return rolloutHash(configText);
}

/** The seal key, the reload wrapper's objects, the voter StatefulSet and its PDB. */
async function workloadsStep(pass: Pass, intent: VoterIntent, configHash: string): Promise<void> {
  const { cluster, ctx, deps, writes } = pass;
  const ns = cluster.metadata.namespace!;
  const names = clusterNames(refOf(cluster));
  if ((cluster.spec.unseal?.type ?? "static") === "static") await ensureUnsealKey(ctx, writes, cluster);
  const runtime = deps.services.podRuntime(cluster, {
    configFiles: [`${PATHS.configDir}/${CONFIG_KEY}`, `${PATHS.configDir}/${SELF_INIT_KEY}`],
    tlsSecretName: tlsSecretName(cluster),
  });
  for (const extra of runtime.objects?.(cluster) ?? []) {
    const meta = extra["metadata"] as { name: string };
    await applyOwned(
      ctx,
      writes,
      extra,
      extra["kind"] === "ConfigMap" ? cached(deps.configMaps, ns, meta.name) : undefined,
    );
  }
  await applyOwned(
    ctx,
    writes,
    buildStatefulSet(cluster, {
      component: Component.Server,
      replicas: intent.replicas,
      configHash,
      certHash: pass.certHash,
      clusterDomain: deps.config.clusterDomain,
      runtime,
      // Claim templates cannot change after creation; growth goes to the claims themselves.
      claim: liveClaim(pass.liveVoters),
      partition: voterPartition({
        replicas: intent.replicas,
        specVersion: cluster.spec.version,
        currentVersion: cluster.status?.currentVersion,
        upgrade: cluster.status?.upgrade,
      }),
    }),
    pass.liveVoters,
  );
  await applyOwned(
    ctx,
    writes,
    buildPodDisruptionBudget(cluster, Component.Server),
    cached(deps.pdbs, ns, names.podDisruptionBudget),
  );
}
