import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import { errorMessage } from "../../../runtime/errors.js";
import { proceed, wait } from "../../../runtime/stages.js";
import { applyOwned, cached, removeOwned } from "../apply.js";
import { refOf, servingRef } from "../cluster-ref.js";
import { Component, clusterNames, legacyNames, revisionNames, voterConfigMapName } from "../identity.js";
import { oidcEnabled } from "../oidc-roles.js";
import { platformOf } from "../platform.js";
import type { OidcBootstrapFacts } from "../workload/config/oidc-bootstrap.js";
import { ensureUnsealKey, UNSEAL_KEY_FILE } from "../workload/config/unseal-key.js";
import { selfInitEnabled } from "../workload/init/init.js";
import {
  buildGreenStatefulSet,
  buildServingStatefulSet,
  greenPeerHosts,
  greenRevision,
} from "../workload/statefulsets/bluegreen.js";
import {
  buildPodDisruptionBudget,
  buildSelfInitSecret,
  buildStatefulSet,
  CONFIG_KEY,
  PATHS,
  SELF_INIT_KEY,
  tlsSecretName,
} from "../workload/statefulsets/build.js";
import { applyConfigObject, applySealCredentials } from "../workload/statefulsets/config-objects.js";
import { rolloutHash } from "../workload/statefulsets/hash.js";
import { reconcileMaintenancePods } from "../workload/statefulsets/maintenance.js";
import { voterPartition } from "../workload/statefulsets/partition.js";
import type { VoterIntent } from "../workload/statefulsets/scale.js";
import { liveClaim } from "../workload/storage/storage.js";
import {
  type Built,
  type Certified,
  isStop,
  type PassBase,
  recordServiceChanges,
  type StepResult,
  type StepStop,
  type Verified,
  type WorkloadPass,
} from "./context.js";
import { withPinnedImage } from "./images.js";
import { retireLegacyPdb } from "./legacy-names.js";
import { readOidcFacts } from "./oidc-facts.js";
import { readReplicasStep } from "./read-replicas.js";
import { retireVoterSets } from "./retire.js";
import { ensureSharedClaims } from "./shared-claims.js";
import { voterStep } from "./voters.js";

/**
 * Infrastructure, in the document's order: safe voter intent (after validation, which ran first),
 * config.hcl, networking, identity, then the workloads (seal key, reload wrapper, voter
 * StatefulSet and PDB, read replicas).
 */
export async function infrastructureStep(pass: PassBase & Certified & Verified): Promise<StepResult<Built>> {
  const voters = await voterStep(pass);
  if (isStop(voters)) return voters;
  const { intent, liveVoters } = voters;
  const configHashes = await configStep(pass);
  if (isStop(configHashes)) return configHashes;
  const net = await pass.deps.services.networking(pass.ctx, pass.cluster);
  recordServiceChanges(pass, net.changes);
  pass.result.gateway = net.gateway ?? null;
  pass.result.ingress = net.ingress ?? null;
  if (!net.ready) return wait(net.reason, net.message);
  const ident = await pass.deps.services.identity(pass.ctx, pass.cluster);
  recordServiceChanges(pass, ident.changes);
  if (!ident.ready) return wait(ident.reason, ident.message);
  const workload = { ...pass, liveVoters, sealCredentialsRevision: configHashes.sealCredentialsRevision };
  await workloadsStep(workload, intent, configHashes);
  const replicas = await readReplicasStep(workload);
  if (replicas) return replicas;
  if (intent.waiting) return wait(R.ScaleDownWaiting, intent.waiting);
  if (intent.removePeers.length > 0 && pass.writes.dryRun)
    return wait(R.ScaleDownPending, `would remove Raft peers ${intent.removePeers.join(", ")}`);
  return proceed({ liveVoters });
}

/** The voters' config.hcl and the self-init request file; returns the hash that rolls the pods. */
async function configStep(pass: PassBase): Promise<ConfigHashes | StepStop> {
  const { cluster, ctx, deps, writes, result } = pass;
  const ns = cluster.metadata.namespace!;
  const names = clusterNames(refOf(cluster));
  const serving = servingRef(cluster);
  const common = {
    clusterDomain: deps.config.clusterDomain,
    component: "server" as const,
    // The final voter count from the start: growing from one pod after init then changes no
    // config and rolls no pod.
    peers: Math.max(cluster.spec.replicas ?? 3, 1),
    tlsDir: PATHS.tlsDir,
    sealKeyPath: `${PATHS.unsealDir}/${UNSEAL_KEY_FILE}`,
  };
  const configText = deps.services.renderConfig(cluster, {
    ...common,
    ...(serving.revision ? { revision: serving.revision } : {}),
  });
  // Inline seal credentials first: the pods read them from this Secret, and a new value must roll
  // the pods as a new config does (its revision joins the hash; the value itself never does).
  const sealCredentialsRevision = await applySealCredentials(ctx, writes, cluster);
  await applyConfigObject(pass, configText, voterConfigMapName(serving));
  let oidc: OidcBootstrapFacts | undefined;
  // Only the first start reads the requests; afterwards the file is inert and nothing is fetched.
  if (selfInitEnabled(cluster) && oidcEnabled(cluster) && !result.initialized) {
    try {
      oidc = {
        ...(await readOidcFacts(
          ctx.client,
          ctx.now().getTime(),
          ctx.signal,
          deps.config.operatorServiceAccount,
        )),
        audience: deps.config.openBaoAudience,
      };
    } catch (e) {
      if (ctx.signal?.aborted) throw e;
      return wait(
        R.OIDCIssuerUnavailable,
        `spec.selfInit.oidc: cannot read the API server's ServiceAccount issuer (${errorMessage(e)}); OpenBao is not started without its JWT bootstrap`,
      );
    }
  }
  // Once initialized the file is written inert whatever the requests say: nothing is rendered (and
  // selfInit.oidc's bootstrap, which needs the issuer read above, is not asked for).
  const selfInitText =
    selfInitEnabled(cluster) && !result.initialized ? deps.services.renderSelfInit(cluster, oidc) : "";
  await applyOwned(
    ctx,
    writes,
    buildSelfInitSecret(cluster, selfInitText || "# no self-init requests\n", result.initialized),
    undefined,
  );
  // Before the requests moved to a Secret they sat in a ConfigMap; one left from then goes.
  const legacy = cached(deps.configMaps, ns, names.selfInitConfigMap);
  if (legacy)
    await removeOwned(
      ctx,
      writes,
      { apiVersion: "v1", kind: "ConfigMap", name: names.selfInitConfigMap, namespace: ns },
      legacy,
    );
  const out: ConfigHashes = {
    serving: rolloutHash(configText) + sealCredentialsRevision,
    sealCredentialsRevision,
  };
  // Blue-green's green revision: its own config, joining as non-voters through blue's pods.
  const green = greenRevision(cluster);
  if (green) {
    const greenText = deps.services.renderConfig(cluster, {
      ...common,
      revision: green.revision,
      nonVoter: true,
      peerHosts: greenPeerHosts(cluster, green, deps.config.clusterDomain),
    });
    const greenMap = revisionNames(refOf(cluster), green.revision).configMap;
    await applyConfigObject(pass, greenText, greenMap);
    out.green = rolloutHash(greenText) + sealCredentialsRevision;
  }
  return out;
}

interface ConfigHashes {
  serving: string;
  green?: string;
  /**
   * Suffix of the pods' config hash naming the revision of the seal-credentials Secret ("" when
   * the spec gives no inline credentials): a changed credential rolls the pods like a changed file.
   */
  sealCredentialsRevision: string;
}

/** The seal key, the reload wrapper's objects, the voter StatefulSet(s) and their PDB. */
async function workloadsStep(pass: WorkloadPass, intent: VoterIntent, hashes: ConfigHashes): Promise<void> {
  const { cluster, ctx, deps, writes } = pass;
  const ns = cluster.metadata.namespace!;
  const names = clusterNames(refOf(cluster));
  if ((cluster.spec.unseal?.type ?? "static") === "static") await ensureUnsealKey(ctx, writes, cluster);
  await ensureSharedClaims(pass);
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
  const voter = (configHash: string) =>
    buildStatefulSet(cluster, {
      component: Component.Server,
      replicas: intent.replicas,
      configHash,
      certHash: pass.certHash,
      clusterDomain: deps.config.clusterDomain,
      runtime,
      platform: platformOf(deps.config),
      // Claim templates cannot change after creation; growth goes to the claims themselves.
      claim: liveClaim(pass.liveVoters),
      partition: voterPartition({
        replicas: intent.replicas,
        specVersion: cluster.spec.version,
        currentVersion: cluster.status?.currentVersion,
        upgrade: cluster.status?.upgrade,
      }),
    });
  await applyOwned(
    ctx,
    writes,
    withPinnedImage(pass, buildServingStatefulSet(cluster, voter(hashes.serving), intent.replicas)),
    pass.liveVoters,
  );
  const green = greenRevision(cluster);
  if (green && hashes.green) {
    const set = buildGreenStatefulSet(cluster, voter(hashes.green), green);
    const name = revisionNames(refOf(cluster), green.revision).statefulSet;
    await applyOwned(ctx, writes, withPinnedImage(pass, set), cached(deps.statefulSets, ns, name));
  }
  await retireVoterSets(pass);
  await reconcileMaintenancePods(pass);
  await applyOwned(
    ctx,
    writes,
    buildPodDisruptionBudget(cluster, Component.Server),
    cached(deps.pdbs, ns, names.podDisruptionBudget),
  );
  await retireLegacyPdb(ctx, writes, deps.pdbs, ns, legacyNames(refOf(cluster)).podDisruptionBudget);
}
