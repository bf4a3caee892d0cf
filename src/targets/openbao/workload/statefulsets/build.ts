import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { refOf } from "../../cluster-ref.js";
import {
  ANNOTATION_CONFIG_HASH,
  ANNOTATION_TLS_CERT_HASH,
  API_PORT,
  CLUSTER_PORT,
  Component,
  type ComponentName,
  clusterLabels,
  clusterNames,
  peerDomain,
  podSelector,
} from "../../identity.js";
import type { Platform } from "../../platform.js";
import type { PodRuntime } from "../../services.js";
import { namedPullSecrets } from "../../validate/secret-refs.js";
import { configEnv } from "../config/index.js";
import { METRICS_PORT_NAME, metricsSettingsOrNone } from "../config/metrics.js";
import { configNeedsSecret } from "../config/secret-config.js";
import type { SpecView } from "../config/spec-view.js";
import { serviceAccountName } from "../identity/plan.js";
import { maintenanceAnnotations } from "./maintenance.js";
import { podTemplateMetadata } from "./pod-metadata.js";
import { podResourceClaims } from "./resource-claims.js";
import { podScheduling } from "./scheduling.js";
import { sealEnv, sealVolumes } from "./seal-wiring.js";
import { containerSecurityContext, podSecurityContext } from "./security-context.js";
import { sharedClaimVolumes } from "./shared-claims.js";
import { writableVolumes } from "./writable-volumes.js";

/** Where the pod finds its files; the config renderer is told the same paths. */
export const PATHS = {
  configDir: "/openbao/config",
  tlsDir: "/openbao/tls",
  unsealDir: "/openbao/unseal",
  dataDir: "/openbao/data",
} as const;
export const CONFIG_KEY = "config.hcl";
export const SELF_INIT_KEY = "self-init.hcl";

type Obj = Record<string, unknown>;

export const tlsEnabled = (c: OpenBaoCluster): boolean => c.spec.tls?.enabled !== false;
/** The Secret with the listener's key pair, mounted by the pod runtime; undefined without TLS files. */
export function tlsSecretName(c: OpenBaoCluster): string | undefined {
  if (!tlsSecretsMounted(c)) return undefined;
  return c.spec.tls?.serverSecretName || clusterNames(refOf(c)).serverSecret;
}

/** The ACME mode serves certificates OpenBao obtains itself: no Secret to mount. */
export const tlsSecretsMounted = (c: OpenBaoCluster): boolean =>
  tlsEnabled(c) && (c.spec.tls?.mode ?? "OperatorManaged") !== "ACME";

export function imageOf(c: OpenBaoCluster): string {
  return c.spec.image ?? `openbao/openbao:${c.spec.version.replace(/^v/, "")}`;
}

export interface StatefulSetInputs {
  component: ComponentName;
  replicas: number;
  configHash: string;
  /** On the StatefulSet, not the pod template: a new certificate must not roll the pods. */
  certHash?: string;
  clusterDomain: string;
  runtime: PodRuntime;
  /** The live StatefulSet's claim size and class, kept as they are (the template is immutable). */
  claim?: { size?: string; storageClassName?: string; labels?: Record<string, string> };
  /** Pods below this ordinal keep the old revision (partition.ts decides it; upgrades lower it). */
  partition?: number;
  /** Decides whether the pod pins its uid, gid and fsGroup (security-context.ts); kubernetes if unset. */
  platform?: Platform;
}

/** The secret of the static seal: the pods mount it, nobody else reads it. */
function unsealVolume(c: OpenBaoCluster): Obj[] {
  if ((c.spec.unseal?.type ?? "static") !== "static") return [];
  return [
    {
      name: "unseal-key",
      secret: { secretName: clusterNames(refOf(c)).unsealKeySecret, defaultMode: 0o440 },
    },
  ];
}

function storageOf(c: OpenBaoCluster, component: ComponentName): { size: string; storageClassName?: string } {
  if (component === Component.ReadReplica) {
    const s = c.spec.readReplicas?.storage;
    return {
      // Upstream 0.5 takes an int-or-string quantity here; a bare number is bytes.
      size: s?.size === undefined ? c.spec.storage.size : String(s.size),
      storageClassName: s?.storageClassName ?? c.spec.storage.storageClassName,
    };
  }
  return { size: c.spec.storage.size, storageClassName: c.spec.storage.storageClassName };
}

/**
 * The OpenBao container's resources, as upstream 0.5 means them: `spec.resources` is the voters'
 * only; read replicas take `readReplicas.template.resources` (upstream's name) or
 * `readReplicas.resources` (this operator's earlier name), and without either they ask for nothing
 * rather than the voters' sizing. Undefined: the container has no resources block.
 */
export function containerResources(c: OpenBaoCluster, component: ComponentName): unknown {
  if (component !== Component.ReadReplica) return c.spec.resources;
  return c.spec.readReplicas?.template?.resources ?? c.spec.readReplicas?.resources;
}

/** One StatefulSet of voters or read replicas. Pure: the same inputs give the same object. */
export function buildStatefulSet(c: OpenBaoCluster, inp: StatefulSetInputs): Obj {
  const names = clusterNames(refOf(c));
  const ns = c.metadata.namespace!;
  const isReplica = inp.component === Component.ReadReplica;
  const name = isReplica ? names.readReplicaStatefulSet : names.voterStatefulSet;
  const labels = clusterLabels(refOf(c), inp.component);
  const scheme = tlsEnabled(c) ? "https" : "http";
  const configSources: Obj[] = isReplica
    ? [configSource(c, names.readReplicaConfigMap)]
    : [
        configSource(c, names.configMap),
        // Self-init requests (passwords among them) live in a Secret of their own, made inert after
        // initialization without touching the pod template (no rollout). Read replicas join; they
        // never run them.
        {
          secret: {
            name: names.selfInitSecret,
            optional: true,
            items: [{ key: SELF_INIT_KEY, path: SELF_INIT_KEY }],
          },
        },
      ];
  const runtimeMounts = inp.runtime.volumeMounts.map((m) => String((m as Obj)["mountPath"]));
  const seal = sealVolumes(c);
  // The audit and ACME-cache claims; a file audit folder on the audit claim needs no emptyDir.
  const shared = sharedClaimVolumes(c);
  const audit = writableVolumes(c, PATHS.dataDir, [
    ...shared.mounts.map((m) => String(m["mountPath"])),
    PATHS.configDir,
    PATHS.tlsDir,
    PATHS.unsealDir,
    ...seal.mounts.map((m) => String(m["mountPath"])),
    ...runtimeMounts,
  ]);
  const volumes: Obj[] = [
    { name: "config", projected: { sources: configSources } },
    ...unsealVolume(c),
    ...seal.volumes,
    ...inp.runtime.volumes,
    ...shared.volumes,
    ...audit.volumes,
  ];
  const mounts: Obj[] = [
    { name: "config", mountPath: PATHS.configDir, readOnly: true },
    { name: "data", mountPath: PATHS.dataDir },
    ...(unsealVolume(c).length ? [{ name: "unseal-key", mountPath: PATHS.unsealDir, readOnly: true }] : []),
    ...seal.mounts,
    ...inp.runtime.volumeMounts,
    ...shared.mounts,
    ...audit.mounts,
  ];
  // Per-pod values (node id, addresses, service registration) come from the config renderer, so
  // config.hcl and the environment cannot disagree.
  const env: Obj[] = [
    ...configEnv(c, { clusterDomain: inp.clusterDomain, component: inp.component }).map((e) => ({ ...e })),
    // The CLI in the pod: 127.0.0.1, which needs no DNS (a pod's own record appears only seconds after
    // it starts) and which the operator's certificate carries. An External certificate made for
    // upstream's names has no such IP SAN, so there the pod is dialled by its own DNS name, which
    // every accepted certificate carries. Not BAO_TLS_SERVER_NAME beside 127.0.0.1: OpenBao's seal
    // clients read the same variables, and a transit seal would then expect its server to be this pod.
    {
      name: "BAO_ADDR",
      value:
        tlsSecretsMounted(c) && c.spec.tls?.mode === "External"
          ? `${scheme}://$(BAO_K8S_POD_NAME).${peerDomain(refOf(c), inp.clusterDomain)}:${API_PORT}`
          : `${scheme}://127.0.0.1:${API_PORT}`,
    },
    ...(tlsSecretsMounted(c) ? [{ name: "BAO_CACERT", value: `${PATHS.tlsDir}/ca.crt` }] : []),
    // Seal credentials by secretKeyRef only: the pod spec names Secrets, never holds a value.
    ...sealEnv(c),
    ...(inp.runtime.env ?? []),
  ];
  const fromSpec = storageOf(c, inp.component);
  const storage = inp.claim
    ? { size: inp.claim.size ?? fromSpec.size, storageClassName: inp.claim.storageClassName }
    : fromSpec;
  const resources = containerResources(c, inp.component);
  const container: Obj = {
    name: "openbao",
    image: imageOf(c),
    imagePullPolicy: "IfNotPresent",
    // The end of the log becomes the last termination's message, which the status quotes (scrubbed).
    terminationMessagePolicy: "FallbackToLogsOnError",
    command: inp.runtime.command,
    args: inp.runtime.args,
    env,
    ports: [
      { name: "api", containerPort: API_PORT, protocol: "TCP" },
      { name: "cluster", containerPort: CLUSTER_PORT, protocol: "TCP" },
      ...metricsPorts(c),
    ],
    // Ready means initialized and unsealed (standbys included): a fresh, sealed pod is not Ready.
    readinessProbe: {
      httpGet: {
        path: "/v1/sys/health?standbyok=true&perfstandbyok=true",
        port: API_PORT,
        scheme: scheme.toUpperCase(),
      },
      periodSeconds: 5,
      failureThreshold: 2,
      timeoutSeconds: 3,
    },
    securityContext: containerSecurityContext(),
    volumeMounts: mounts,
    ...(resources ? { resources } : {}),
  };
  const template: Obj = {
    metadata: podTemplateMetadata(c.spec, inp.component, {
      labels,
      annotations: { [ANNOTATION_CONFIG_HASH]: inp.configHash },
    }),
    spec: {
      serviceAccountName: serviceAccountName(c),
      securityContext: podSecurityContext(c, inp.platform),
      terminationGracePeriodSeconds: 30,
      ...podScheduling(c, inp.component),
      ...podResourceClaims(resources),
      ...(namedPullSecrets(c.spec.imagePullSecrets)
        ? { imagePullSecrets: namedPullSecrets(c.spec.imagePullSecrets) }
        : {}),
      containers: [container],
      volumes,
    },
  };
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name,
      namespace: ns,
      labels,
      ...statefulSetAnnotations(c, inp.certHash),
    },
    spec: {
      serviceName: names.peerService,
      replicas: inp.replicas,
      // Joining pods find the leader through retry_join; ordered start only slows that down.
      podManagementPolicy: "Parallel",
      updateStrategy: rollingUpdate(inp.partition),
      // A pod that goes on scale-down has left Raft first; its volume holds a member that no longer
      // exists. Kept, it would come back on the next scale-out as that stale member instead of
      // joining fresh, so it goes with the pod. Deleting the cluster keeps volumes (deletionPolicy).
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Delete" },
      selector: { matchLabels: podSelector(refOf(c), inp.component) },
      template,
      volumeClaimTemplates: [
        {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "data", labels: inp.claim?.labels ?? labels },
          spec: {
            accessModes: ["ReadWriteOnce"],
            ...(storage.storageClassName ? { storageClassName: storage.storageClassName } : {}),
            resources: { requests: { storage: storage.size } },
          },
        },
      ],
    },
  };
}

/** The StatefulSet's own annotations: the certificate's hash, and maintenance.ts' mark. */
function statefulSetAnnotations(c: OpenBaoCluster, certHash: string | undefined): Obj {
  const annotations = {
    ...(certHash ? { [ANNOTATION_TLS_CERT_HASH]: certHash } : {}),
    ...maintenanceAnnotations(c),
  };
  return Object.keys(annotations).length > 0 ? { annotations } : {};
}

/** Partition 0 is the API server's default: left out, so a cluster that never upgrades keeps its object. */
/** The metrics-only listener's port, named as the metrics Service targets it. */
function metricsPorts(c: OpenBaoCluster): Obj[] {
  const listener = metricsSettingsOrNone(c)?.listener;
  return listener ? [{ name: METRICS_PORT_NAME, containerPort: listener.port, protocol: "TCP" }] : [];
}

function rollingUpdate(partition: number | undefined): Obj {
  return partition && partition > 0
    ? { type: "RollingUpdate", rollingUpdate: { partition } }
    : { type: "RollingUpdate" };
}

export function buildPodDisruptionBudget(c: OpenBaoCluster, component: ComponentName): Obj {
  const names = clusterNames(refOf(c));
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: {
      name:
        component === Component.ReadReplica
          ? names.readReplicaPodDisruptionBudget
          : names.podDisruptionBudget,
      namespace: c.metadata.namespace,
      labels: clusterLabels(refOf(c), component),
    },
    // One voluntary disruption at a time keeps a 3-voter quorum through drains.
    spec: { maxUnavailable: 1, selector: { matchLabels: podSelector(refOf(c), component) } },
  };
}

/**
 * True when the rendered config.hcl must be kept in a Secret: it holds a value OpenBao can only read
 * from the file and that may be secret (a KMS plugin seal's credential, a plugin's environment).
 * Otherwise it holds none and is a ConfigMap.
 */
export const configInSecret = (c: OpenBaoCluster): boolean =>
  configNeedsSecret(c.spec as unknown as SpecView);

/** The projected-volume source of config.hcl from the object `name` (ConfigMap or Secret). */
function configSource(c: OpenBaoCluster, name: string): Obj {
  const items = [{ key: CONFIG_KEY, path: CONFIG_KEY }];
  return configInSecret(c) ? { secret: { name, items } } : { configMap: { name, items } };
}

/** config.hcl as the pods mount it: a ConfigMap, or a Secret when {@link configInSecret}. */
export function buildConfigObject(
  c: OpenBaoCluster,
  configText: string,
  component: ComponentName = Component.Server,
): Obj {
  const map = buildConfigMap(c, configText, component);
  if (!configInSecret(c)) return map;
  return {
    ...map,
    kind: "Secret",
    type: "Opaque",
    data: { [CONFIG_KEY]: Buffer.from(configText, "utf8").toString("base64") },
  };
}

export function buildConfigMap(
  c: OpenBaoCluster,
  configText: string,
  component: ComponentName = Component.Server,
): Obj {
  const names = clusterNames(refOf(c));
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: component === Component.ReadReplica ? names.readReplicaConfigMap : names.configMap,
      namespace: c.metadata.namespace,
      labels: clusterLabels(refOf(c), component),
    },
    data: { [CONFIG_KEY]: configText },
  };
}

/**
 * The self-init file, in a Secret: its requests may carry passwords and secret IDs. `inert`
 * replaces the requests with a comment once the cluster initialized.
 */
export function buildSelfInitSecret(c: OpenBaoCluster, text: string, inert: boolean): Obj {
  const map = buildSelfInitConfigMap(c, text, inert);
  const data = map["data"] as Record<string, string>;
  return {
    ...map,
    kind: "Secret",
    metadata: { ...(map["metadata"] as Obj), name: clusterNames(refOf(c)).selfInitSecret },
    type: "Opaque",
    data: { [SELF_INIT_KEY]: Buffer.from(data[SELF_INIT_KEY] ?? "", "utf8").toString("base64") },
  };
}

/** The self-init file as a ConfigMap shape (buildSelfInitSecret keeps it in a Secret). */
function buildSelfInitConfigMap(c: OpenBaoCluster, text: string, inert: boolean): Obj {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: clusterNames(refOf(c)).selfInitConfigMap,
      namespace: c.metadata.namespace,
      labels: clusterLabels(refOf(c)),
      annotations: { "openbao.org/self-init": inert ? "consumed" : "pending" },
    },
    data: {
      [SELF_INIT_KEY]: inert
        ? "# Self-initialization finished; the requests were removed so a restart cannot replay them.\n"
        : text,
    },
  };
}
