import type { OpenBaoCluster } from "../../apis/openbaocluster.js";
import { AcknowledgeDataLossAnnotation, OpenBaoClusterManagers } from "../../apis/openbaocluster-names.js";
import {
  PERSISTENT_VOLUME_CLAIM,
  POD,
  SECRET,
  SERVICE_ACCOUNT,
  STATEFULSET,
} from "../../runtime/builtin-types.js";
import { inClusterNamespace } from "../../runtime/client.js";
import { Controller, generationChanged, type Predicate } from "../../runtime/controller.js";
import type { Informer } from "../../runtime/informer.js";
import type { Manager } from "../../runtime/manager.js";
import type { TargetDefinition } from "../../runtime/target.js";
import { type KubeObject, objectKey, type ResourceType } from "../../runtime/types.js";
import { setupAdminOps } from "./adminops/wiring.js";
import { refOf } from "./cluster-ref.js";
import { type OpenBaoTargetConfig, parseOpenBaoConfig } from "./config.js";
import { clusterNames, LABEL_CLUSTER, serverPodCluster } from "./identity.js";
import { ImageVerifier } from "./imageverify/verifier.js";
import { resolvePlatform } from "./platform-detect.js";
import { POD_PRUNING } from "./pod-cache.js";
import { checkAdmissionDependencies } from "./policies/dependencies.js";
import { watchGatewayAPI } from "./readiness/gateway-wake.js";
import { readinessSecretNames } from "./readiness/observe.js";
import { OPENBAOCLUSTER, OpenBaoClusterReconciler, PDB } from "./reconciler.js";
import { setupRestore } from "./restore/wiring.js";
import { FAILURE_BACKOFF_MAX_MS } from "./resync.js";
import type { WorkloadServices } from "./services.js";
import type { StepDeps } from "./steps/index.js";
import type { Tenancy } from "./tenant/follow.js";
import { validateOpenBaoDocuments } from "./validate/index.js";
import { registrationMoved } from "./workload/registration/state.js";

export const CONTROLLER_NAME = OpenBaoClusterManagers.controller;

/**
 * What wakes the workload controller: a spec change, or an upgrade manager moving what it steers
 * through status (the rolling partition, blue-green's phase and revisions; the workload controller
 * renders the StatefulSets and the client Service from them), or the lock changing hands (status.phase
 * says Upgrading or BackingUp from it), or a restore's voters back (status.restore.restartCompletedAt:
 * RestoringReadReplicas from it), or the lost-data acknowledgement. Its other status changes and
 * annotations do not.
 */
export const workloadRelevant: Predicate<OpenBaoCluster> = (o, n) =>
  generationChanged(o, n) ||
  o?.metadata.annotations?.[AcknowledgeDataLossAnnotation] !==
    n.metadata.annotations?.[AcknowledgeDataLossAnnotation] ||
  o?.status?.upgrade?.currentPartition !== n.status?.upgrade?.currentPartition ||
  o?.status?.upgrade?.targetVersion !== n.status?.upgrade?.targetVersion ||
  o?.status?.operationLock?.holder !== n.status?.operationLock?.holder ||
  o?.status?.restore?.restartCompletedAt !== n.status?.restore?.restartCompletedAt ||
  blueGreenMoved(o, n);

/**
 * A blue-green phase or revision change: the workload renders green, pins and scales blue, points
 * the client Service and names the serving set from these (workload/statefulsets/bluegreen.ts).
 */
function blueGreenMoved(o: OpenBaoCluster | undefined, n: OpenBaoCluster): boolean {
  const a = o?.status?.blueGreen;
  const b = n.status?.blueGreen;
  return (
    a?.phase !== b?.phase ||
    a?.blueRevision !== b?.blueRevision ||
    a?.greenRevision !== b?.greenRevision ||
    a?.greenImage !== b?.greenImage
  );
}

const CONFIGMAP: ResourceType = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

const kind = (group: string, kind: string, plural: string, namespaced = true): ResourceType => ({
  group,
  version: "v1",
  kind,
  plural,
  namespaced,
});

/**
 * Informers for everything a pass reads, so the manager's reader answers from them and a quiet
 * pass sends no request: every Secret of the namespaces (the cluster's own and the ones a spec
 * names: TLS, seal credentials, tokens), the cluster's other children (kept with managedFields so
 * an unchanged one is not written), its pods and claims; outside the namespaces, the API server's
 * own Service and EndpointSlices in `default` and the StorageClasses where RBAC allows watching
 * them (optional informers), and the CRDs, so "is the Gateway API served?" is answered from discovery's memory.
 * The Gateway API kinds are watched by readiness/gateway-wake.ts (a pass looks for a route it no
 * longer wants on every pass).
 */
function watchWhatAPassReads(
  manager: Manager,
  owned: { labelSelector: string; keepManagedFields: boolean },
): { secrets: Informer<KubeObject>; children: Informer<KubeObject>[] } {
  const secrets = manager.informer<KubeObject>(SECRET, { keepManagedFields: true });
  const children = [
    kind("", "Service", "services"),
    kind("networking.k8s.io", "NetworkPolicy", "networkpolicies"),
    kind("networking.k8s.io", "Ingress", "ingresses"),
    SERVICE_ACCOUNT,
    kind("rbac.authorization.k8s.io", "Role", "roles"),
    kind("rbac.authorization.k8s.io", "RoleBinding", "rolebindings"),
  ].map((t) => manager.informer<KubeObject>(t, owned));
  // Pods: OpenBao labels its own with its active/sealed/initialized state (service registration).
  manager.informer(POD, { labelSelector: LABEL_CLUSTER, prune: POD_PRUNING });
  manager.informer(PERSISTENT_VOLUME_CLAIM, { labelSelector: LABEL_CLUSTER });
  // Optional: a namespace-scoped install may not be allowed these; its reads then stay live.
  manager.informer(kind("", "Service", "services"), {
    fixedNamespaces: ["default"],
    fieldSelector: "metadata.name=kubernetes",
    optional: true,
  });
  manager.informer(kind("discovery.k8s.io", "EndpointSlice", "endpointslices"), {
    fixedNamespaces: ["default"],
    labelSelector: "kubernetes.io/service-name=kubernetes",
    optional: true,
  });
  manager.informer(kind("storage.k8s.io", "StorageClass", "storageclasses", false), { optional: true });
  manager.watchDiscovery();
  return { secrets, children };
}

/**
 * The clusters a Secret concerns: those whose TLS, unseal key or root token it is, and those whose
 * readiness conditions name it (the backup's token and store credentials, a cloud seal's
 * credentials). The owned ones (the operator's CA and server certificate) also wake their owner;
 * this covers the Secrets a user or another controller keeps (External TLS, a restored unseal key,
 * a backup token created after the cluster), whose change a settled cluster must not wait for the
 * resync to see.
 */
export function secretClusters(clusters: Informer<OpenBaoCluster>) {
  return (secret: KubeObject): string[] => {
    const ns = secret.metadata.namespace;
    const name = secret.metadata.name;
    if (!ns || !name) return [];
    return clusters
      .list(ns)
      .filter((c) => {
        const names = clusterNames(refOf(c));
        const tls = c.spec?.tls;
        return [
          tls?.serverSecretName || names.serverSecret,
          tls?.caSecretName || names.caSecret,
          names.unsealKeySecret,
          names.rootTokenSecret,
          ...readinessSecretNames(c),
        ].includes(name);
      })
      .map(objectKey);
  };
}

/**
 * Tenant mode: the namespaces watched follow the provisioned OpenBaoTenants, and a cluster waits
 * for its namespace's tenant. Loaded only when `tenants` is configured.
 */
async function tenantMode(
  manager: Manager,
  tenants: NonNullable<OpenBaoTargetConfig["tenants"]>,
): Promise<Tenancy> {
  const operatorNamespace = tenants.operatorNamespace ?? inClusterNamespace();
  if (!operatorNamespace)
    throw new Error(
      "targets.openbao.tenants: set operatorNamespace (this process does not run in a pod, so its namespace is unknown)",
    );
  return (await import("./tenant/follow.js")).followTenants(manager, operatorNamespace, tenants.denied);
}

/**
 * The openbao target: the OpenBaoCluster workload controller. `services` replaces the certificate,
 * configuration, networking and identity services (tests); by default the real ones are loaded.
 * `baoClient` replaces how the workload reaches a pod's OpenBao (tests with a stand-in OpenBao).
 */
export function openbaoTarget(
  services?: WorkloadServices,
  seams: Pick<StepDeps, "baoClient"> = {},
): TargetDefinition<OpenBaoTargetConfig> {
  return {
    name: "openbao",
    parseConfig: parseOpenBaoConfig,
    validate: (docs) => validateOpenBaoDocuments(docs),
    async setup(manager: Manager, configured: OpenBaoTargetConfig) {
      // Once, at start: `platform: auto` becomes what discovery finds, so every pass and Job after
      // this builds its pods for one decided platform (platform.ts).
      const { platform, detected } = await resolvePlatform(manager.client.resources, configured.platform);
      manager.log.info({ platform, detected }, `target platform: ${platform}`);
      const config: OpenBaoTargetConfig = { ...configured, platform };
      const svc =
        services ??
        (await import("./services-default.js")).defaultServices({
          operatorNamespace: inClusterNamespace(),
          ...(config.gatewayAPI === false ? { gatewayAPI: false } : {}),
        });
      // Tenant mode sees the clusters of every namespace, so one whose namespace has no tenant is
      // told so; what a pass reads and writes is watched only where the target has access. Its
      // clusterSelector, if any, narrows every controller to the clusters that carry it.
      const selected = config.tenants?.clusterSelector
        ? { labelSelector: config.tenants.clusterSelector }
        : {};
      const clusters = manager.informer<OpenBaoCluster>(
        OPENBAOCLUSTER,
        config.tenants && manager.namespaces ? { allNamespaces: true, ...selected } : selected,
      );
      const tenancy = config.tenants ? await tenantMode(manager, config.tenants) : undefined;
      // Once, at start: are the chart's admission policies in place (the gauge; ProductionReady reads it)?
      const admission = await checkAdmissionDependencies(manager.client, config.admissionPolicyPrefix);
      if (config.admissionPolicyPrefix !== undefined) {
        if (admission.ready) manager.log.info("admission policies are in place");
        else manager.log.warn(admission.summary);
      }
      // Loaded on the first review: the decision reads the CRD's schema, which `run` alone never loads.
      for (const kind of ["OpenBaoCluster", "OpenBaoRestore"])
        manager.admission.register(OPENBAOCLUSTER.group, kind, async (request) =>
          (await import("./admission.js")).openBaoVerdict(request),
        );
      // Children are cached with their managedFields so an unchanged intent costs no request.
      const owned = { labelSelector: LABEL_CLUSTER, keepManagedFields: true };
      const statefulSets = manager.informer<KubeObject>(STATEFULSET, owned);
      const configMaps = manager.informer<KubeObject>(CONFIGMAP, owned);
      const pdbs = manager.informer<KubeObject>(PDB, owned);
      const read = watchWhatAPassReads(manager, owned);
      // One verifier for the target: what the workload verified, a Job's image check finds cached.
      const imageVerifier = new ImageVerifier(
        config.trustedRootConfigMap ? { trustedRoot: config.trustedRootConfigMap } : {},
      );
      const reconciler = new OpenBaoClusterReconciler({
        ...seams,
        imageVerifier,
        client: manager.client,
        reader: manager.reader,
        events: manager.events,
        log: manager.log,
        config,
        services: svc,
        clusters,
        statefulSets,
        configMaps,
        pdbs,
        admission,
        ...(tenancy ? { tenantMissing: (namespace: string) => tenancy.missing(namespace) } : {}),
      });
      const controller = new Controller({
        name: CONTROLLER_NAME,
        log: manager.log,
        concurrency: config.concurrency,
        reconcile: (key, ctx) => reconciler.reconcile(key, ctx),
        // A failed step is often OpenBao not answering yet: first look again at the poll interval,
        // then back off to the resync, or a minute at most (the resync is a long backstop now).
        // Pods going Ready wake the cluster sooner either way.
        failureBaseDelayMs: config.pollMs,
        failureMaxDelayMs: Math.max(config.pollMs, Math.min(config.resyncMs, FAILURE_BACKOFF_MAX_MS)),
      });
      controller.watchPrimary(clusters, workloadRelevant);
      // Pods going Ready move the StatefulSet's status: that wakes the cluster that owns it.
      controller.watchOwned(statefulSets, OPENBAOCLUSTER);
      controller.watchOwned(configMaps, OPENBAOCLUSTER);
      controller.watchOwned(pdbs, OPENBAOCLUSTER);
      // The other children and the Secrets a pass reads: a settled cluster is not resynced often
      // (resync.ts), so a child edited or deleted by hand, or a TLS Secret replaced, wakes it.
      for (const inf of read.children) controller.watchOwned(inf, OPENBAOCLUSTER);
      controller.watchOwned(read.secrets, OPENBAOCLUSTER);
      controller.watchMapped(read.secrets, secretClusters(clusters));
      // A server pod OpenBao relabels (it became active or standby, sealed or unsealed) or that
      // starts to go wakes its cluster: leader and seal state reach status without a poll.
      controller.watchMapped(
        manager.informer<KubeObject>(POD, { labelSelector: LABEL_CLUSTER, prune: POD_PRUNING }),
        serverPodCluster,
        registrationMoved,
      );
      // The Gateway API kinds, wherever and whenever served: the cluster's own routes, and the
      // Gateways and classes spec.gateway refers to, so GatewayIntegrationReady follows them at
      // once. Without the Gateway API (and so without its RBAC) none is watched, even where served.
      if (config.gatewayAPI !== false) watchGatewayAPI(manager, controller, clusters, OPENBAOCLUSTER, owned);
      manager.add(controller);
      if (tenancy) {
        // A tenant provisioned (or gone) wakes the clusters of its namespace: a waiting one proceeds.
        for (const inf of tenancy.informers)
          controller.watchMapped(
            inf,
            (t) => (t.spec?.targetNamespace ? clusters.list(t.spec.targetNamespace).map(objectKey) : []),
            (o, n) =>
              o?.status?.provisioned !== n.status?.provisioned ||
              o?.spec?.targetNamespace !== n.spec?.targetNamespace,
          );
        if (config.observeOnly) manager.log.info("observe-only: OpenBaoTenants are not provisioned");
        else {
          const { setupTenants } = await import("./tenant/wiring.js");
          setupTenants(manager, config, tenancy, config.tenants!.serviceAccount);
          manager.log.info(
            { operatorNamespace: tenancy.operatorNamespace },
            "OpenBaoTenant provisioning is on",
          );
        }
      }
      // Backups and restores start Jobs and take the operation lock; they have no dry-run mode yet,
      // so observe-only (which promises no writes) leaves them out and says so.
      if (config.observeOnly) {
        manager.log.info("observe-only: backups and restores are not run (no dry-run mode for them yet)");
        return;
      }
      // Backups (later upgrades): their own controller and queue, next to the workload one.
      const { defaultSnapshotStores } = await import("./adminops/backup/store.js");
      // Only the clusters of the namespaces watched (configured or onboarded): one waiting for its
      // tenant is neither backed up nor upgraded.
      const watched = manager.informer<OpenBaoCluster>(OPENBAOCLUSTER, selected);
      setupAdminOps(manager, config, watched, { stores: defaultSnapshotStores, imageVerifier });
      // Restore tests of the backups (spec.backup.restoreTest): their own controller and queue.
      const { setupRestoreTests } = await import("./drill/wiring.js");
      setupRestoreTests(manager, config, watched);
      // Restores: their own controller and queue (restore/wiring.ts).
      const { defaultRestorePorts } = await import("./restore/defaults.js");
      setupRestore(
        manager,
        config,
        defaultRestorePorts(manager.client, config, imageVerifier, manager.events),
      );
    },
  };
}
