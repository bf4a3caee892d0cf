/**
 * Resource identity for one OpenBaoCluster: every name, label and selector the workload, TLS,
 * networking, backup and upgrade code uses comes from here, so no two services can disagree about
 * which object is which. Pure; no I/O.
 */

/** Labels every object owned by a cluster carries (selectors use a subset). */
export const LABEL_NAME = "app.kubernetes.io/name";
export const LABEL_INSTANCE = "app.kubernetes.io/instance";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const LABEL_CLUSTER = "openbao.org/cluster";
export const LABEL_COMPONENT = "openbao.org/component";
/** Revision of a blue-green generation; set on pods of the StatefulSet of that revision. */
export const LABEL_REVISION = "openbao.org/revision";

/**
 * Set on pods by OpenBao's own Kubernetes service registration (`service_registration
 * "kubernetes"`), each "true" or "false": the pod patches them on itself as its state changes.
 * The active one is "true" on the active node only; the version label holds the running version
 * with characters other than letters, digits, '-', '_' and '.' replaced by '-'.
 */
export const LABEL_OPENBAO_ACTIVE = "openbao-active";
export const LABEL_OPENBAO_SEALED = "openbao-sealed";
export const LABEL_OPENBAO_INITIALIZED = "openbao-initialized";
export const LABEL_OPENBAO_PERF_STANDBY = "openbao-perf-standby";
export const LABEL_OPENBAO_VERSION = "openbao-version";

export const ANNOTATION_CONFIG_HASH = "openbao.org/config-hash";
export const ANNOTATION_TLS_CERT_HASH = "openbao.org/tls-cert-hash";
export const ANNOTATION_RESTART_AT = "openbao.org/restart-at";
export const CLUSTER_FINALIZER = "openbao.org/openbaocluster-finalizer";
/**
 * The headless Service a cluster's pods live under, when it is not upstream's `<name>`: written once
 * on clusters created before the names followed upstream, whose pods are `<pod>.<name>-internal`.
 * A StatefulSet's serviceName cannot change and Raft keeps each peer's address as it joined, so such
 * a cluster keeps that Service for its pods; every other object moves to upstream's name.
 */
export const ANNOTATION_PEER_SERVICE = "openbao.org/peer-service";

/** Upstream's managed-by value, so selectors written for its objects select ours. */
export const MANAGED_BY = "openbao-operator";
/** What objects made before the names followed upstream carry; recognised, never written. */
export const LEGACY_MANAGED_BY = "platform-operator";
export const APP_NAME = "openbao";

/** Component values: which part of the cluster an object belongs to. */
export const Component = {
  Server: "server",
  ReadReplica: "read-replica",
  Backup: "backup",
  Restore: "restore",
  /**
   * Jobs made before the upgrade Jobs took upstream's labels (pre-upgrade snapshot, pre-promotion
   * hook); still recognised, so such a Job keeps its network policy until it is gone.
   */
  Upgrade: "upgrade",
  /** Upstream's component of the blue-green pre-upgrade snapshot Job (the rolling one is a backup). */
  UpgradeSnapshot: "upgrade-snapshot",
  /** Upstream's component of the blue-green pre-promotion hook Job. */
  ValidationHook: "validation-hook",
  /** The metrics Service and ServiceMonitor of spec.observability.metrics (upstream's value). */
  Metrics: "metrics",
} as const;
export type ComponentName = (typeof Component)[keyof typeof Component];

/** OpenBao's API and cluster ports, as the rendered listener and the Services use them. */
export const API_PORT = 8200;
export const CLUSTER_PORT = 8201;

export interface ClusterRef {
  name: string;
  namespace: string;
  /**
   * The blue-green revision whose StatefulSet holds the serving voters (`servingRef` in
   * cluster-ref.ts reads it from status); absent for the cluster's own `<name>` StatefulSet.
   */
  revision?: string;
  /** The headless Service the pods live under, when not `<name>` (ANNOTATION_PEER_SERVICE). */
  peerService?: string;
}

/**
 * The ClusterRef of a cluster's metadata: every name builder starts here, so the peer Service a
 * cluster keeps is seen by all of them or by none.
 */
export function clusterRefOf(metadata: {
  name?: string;
  namespace?: string;
  annotations?: Record<string, string>;
}): ClusterRef {
  const name = metadata.name ?? "";
  const peer = metadata.annotations?.[ANNOTATION_PEER_SERVICE];
  return {
    name,
    namespace: metadata.namespace ?? "",
    ...(peer && peer !== name ? { peerService: peer } : {}),
  };
}

/**
 * Names of the objects a cluster owns, upstream's where upstream has the object (so certificates,
 * NetworkPolicies and monitoring written for it keep working). The voter StatefulSet carries the
 * cluster's own name.
 */
export function clusterNames(cluster: ClusterRef) {
  const n = cluster.name;
  const serviceAccount = `${n}-serviceaccount`;
  return {
    voterStatefulSet: n,
    readReplicaStatefulSet: `${n}-read`,
    /** Headless Service under upstream's name; pods of a new cluster are `<pod>.<name>`. */
    headlessService: n,
    /** The headless Service the pods' DNS names live under (the StatefulSets' serviceName). */
    peerService: cluster.peerService ?? n,
    /** Client Service over every ready voter. */
    clientService: `${n}-public`,
    /** Service selecting only the active node (OpenBao's Kubernetes service registration label). */
    activeService: `${n}-active`,
    readService: `${n}-read`,
    configMap: `${n}-config`,
    /** config.hcl of the read replicas: the same stanzas, joining as non-voters. */
    readReplicaConfigMap: `${n}-read-config`,
    /** The self-init requests (they may carry passwords): a Secret, emptied once initialized. */
    selfInitSecret: `${n}-self-init`,
    /** Before the requests moved to a Secret they lived in a ConfigMap of this name; it is removed. */
    selfInitConfigMap: `${n}-self-init`,
    /** Seal credentials the spec gives inline, as the environment variables OpenBao reads them from. */
    sealCredentialsSecret: `${n}-seal-credentials`,
    caSecret: `${n}-tls-ca`,
    serverSecret: `${n}-tls-server`,
    unsealKeySecret: `${n}-unseal-key`,
    rootTokenSecret: `${n}-root-token`,
    /** The pods' ServiceAccount unless spec.serviceAccount.name gives one; its Role and RoleBinding are `<sa>-role`, `<sa>-rolebinding`. */
    serviceAccount,
    /**
     * The Jobs' ServiceAccounts under upstream's names: OpenBao JWT roles written for upstream bind
     * these (its backup sample's role names `<name>-backup-serviceaccount`).
     */
    backupServiceAccount: `${n}-backup-serviceaccount`,
    upgradeServiceAccount: `${n}-upgrade-serviceaccount`,
    restoreServiceAccount: `${n}-restore-serviceaccount`,
    podDisruptionBudget: `${n}-pdb`,
    readReplicaPodDisruptionBudget: `${n}-read-pdb`,
    networkPolicy: `${n}-network-policy`,
    /** The operator's Jobs' own policy, under upstream's name. */
    jobsNetworkPolicy: `${n}-jobs-network-policy`,
    ingress: n,
    httpRoute: `${n}-httproute`,
    tlsRoute: `${n}-tlsroute`,
    backendTLSPolicy: `${n}-backend-tls-policy`,
    acmeCacheClaim: `${n}-acme-cache`,
    /**
     * tls.mode ACME: the Service an ACME CA validates the pods through (80 and 443 to the API port,
     * not-ready pods included: they have no certificate until the challenge passes).
     */
    acmeService: `${n}-acme`,
    /** spec.observability.metrics: the Service Prometheus scrapes (upstream's name) and its ServiceMonitor. */
    metricsService: `${n}-metrics`,
    serviceMonitor: `${n}-metrics`,
    /** ConfigMap holding the PID-1 wrapper that makes OpenBao reload its certificate on change. */
    reloadWrapperConfigMap: `${n}-tls-reload`,
    /**
     * CA bundle a Gateway's BackendTLSPolicy verifies OpenBao with (Gateway API refers to ConfigMaps):
     * upstream's ConfigMap, under the CA Secret's name.
     */
    backendCaConfigMap: `${n}-tls-ca`,
  };
}

/**
 * What clusters made before the names followed upstream called the objects that moved; retired
 * (deleted when the cluster controls them) once the new ones exist.
 */
export function legacyNames(cluster: ClusterRef) {
  const n = cluster.name;
  return {
    /** The old headless Service; a cluster that kept it as its peerService keeps it. */
    headlessService: `${n}-internal`,
    /** The old client Service held upstream's headless name, as a ClusterIP Service. */
    clientService: n,
    serviceAccount: n,
    serviceRegistrationRole: `${n}-service-registration`,
    podDisruptionBudget: n,
    readReplicaPodDisruptionBudget: `${n}-read`,
    networkPolicy: n,
    httpRoute: n,
    tlsRoute: n,
    backendTLSPolicy: n,
    backendCaConfigMap: `${n}-backend-ca`,
    /**
     * Upstream's per-colour client Services of an earlier release, which upstream itself now deletes
     * as stale wherever it finds them: a cluster taken over from it may still have them.
     */
    blueClientService: `${n}-public-blue`,
    greenClientService: `${n}-public-green`,
  };
}
export type ClusterNames = ReturnType<typeof clusterNames>;

/** Labels for objects of `component`; the selector of a workload is the subset without managed-by. */
export function clusterLabels(cluster: ClusterRef, component: ComponentName = Component.Server) {
  return {
    [LABEL_NAME]: APP_NAME,
    [LABEL_INSTANCE]: cluster.name,
    [LABEL_MANAGED_BY]: MANAGED_BY,
    [LABEL_CLUSTER]: cluster.name,
    [LABEL_COMPONENT]: component,
  };
}

/** Pod selector of one component's StatefulSet (and its PDB and Services). */
export function podSelector(cluster: ClusterRef, component: ComponentName = Component.Server) {
  return { [LABEL_INSTANCE]: cluster.name, [LABEL_CLUSTER]: cluster.name, [LABEL_COMPONENT]: component };
}

/**
 * The voter StatefulSet of `ref`: the cluster's own `<name>` until a blue-green upgrade completes,
 * then the serving revision's `<name>-<revision>`. Every voter pod name derives from it.
 */
export function voterSetName(ref: ClusterRef): string {
  return ref.revision ? revisionNames(ref, ref.revision).statefulSet : clusterNames(ref).voterStatefulSet;
}

/** The config map the voter set of `ref` mounts (a revision has its own). */
export function voterConfigMapName(ref: ClusterRef): string {
  return ref.revision ? revisionNames(ref, ref.revision).configMap : clusterNames(ref).configMap;
}

/** Pod name of `ordinal`; a voter's follows the serving revision of `cluster` (see voterSetName). */
export function podName(cluster: ClusterRef, ordinal: number, component: ComponentName = Component.Server) {
  const set =
    component === Component.ReadReplica
      ? clusterNames(cluster).readReplicaStatefulSet
      : voterSetName(cluster);
  return `${set}-${ordinal}`;
}

/** The ordinal of a voter pod (= Raft node id) of `ref`'s voter set, or undefined for any other name. */
export function voterOrdinal(ref: ClusterRef, pod: string): number | undefined {
  const prefix = `${voterSetName(ref)}-`;
  if (!pod.startsWith(prefix)) return undefined;
  const rest = pod.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

/**
 * The domain a cluster's pods live under. A new cluster's is upstream's `<name>.<ns>.svc`, the form
 * its documented certificates (`*.<name>.<ns>.svc`) cover; a cluster that kept its old peer Service
 * keeps the full name it always used, so its config, and with it every pod, stays as it is.
 */
export function peerDomain(cluster: ClusterRef, clusterDomain = "cluster.local"): string {
  const peer = clusterNames(cluster).peerService;
  return cluster.peerService
    ? `${peer}.${cluster.namespace}.svc.${clusterDomain}`
    : `${peer}.${cluster.namespace}.svc`;
}

/**
 * The address one pod advertises and peers join it by (api_addr, cluster_addr, retry_join), and so
 * the name its certificate must carry.
 */
export function podAddress(
  cluster: ClusterRef,
  ordinal: number,
  component: ComponentName = Component.Server,
  clusterDomain = "cluster.local",
): string {
  return `${podName(cluster, ordinal, component)}.${peerDomain(cluster, clusterDomain)}`;
}

/**
 * The fully qualified name the operator dials one pod by (it may resolve names without the pod's
 * search domains). TLS verifies the answer against podAddress, the name the certificate carries.
 */
export function podHost(
  cluster: ClusterRef,
  ordinal: number,
  component: ComponentName = Component.Server,
  clusterDomain = "cluster.local",
): string {
  const names = clusterNames(cluster);
  return `${podName(cluster, ordinal, component)}.${names.peerService}.${cluster.namespace}.svc.${clusterDomain}`;
}

/** Every DNS name a client or peer may use; the server certificate's SANs must cover them all. */
export function serviceHosts(cluster: ClusterRef, clusterDomain = "cluster.local"): string[] {
  const names = clusterNames(cluster);
  const ns = cluster.namespace;
  const headless = [...new Set([names.headlessService, names.peerService])];
  const services = [names.clientService, ...headless, names.activeService, names.readService];
  const hosts: string[] = [];
  for (const svc of services)
    hosts.push(svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.${clusterDomain}`);
  // Wildcards for the per-pod names under the headless Services.
  for (const svc of headless)
    hosts.push(`*.${svc}`, `*.${svc}.${ns}.svc`, `*.${svc}.${ns}.svc.${clusterDomain}`);
  return hosts;
}

/**
 * Names of one blue-green revision's objects. The cluster's own StatefulSet stays the voter set a
 * blue-green upgrade starts from; a green revision gets a StatefulSet and config of its own, its pods
 * labelled with LABEL_REVISION so the client Service can select them alone.
 */
export function revisionNames(cluster: ClusterRef, revision: string) {
  if (!/^[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?$/.test(revision))
    throw new Error(`revision ${JSON.stringify(revision)}: must be 1-20 lowercase letters, digits or '-'`);
  return {
    statefulSet: `${cluster.name}-${revision}`,
    configMap: `${cluster.name}-config-${revision}`,
  };
}

/** Selector of one revision's pods: the voter selector narrowed by LABEL_REVISION. */
export function revisionSelector(cluster: ClusterRef, revision: string) {
  return { ...podSelector(cluster), [LABEL_REVISION]: revision };
}

/** A revision name for a version: letters kept, dots as dashes, with a suffix from the attempt id. */
export function revisionFor(version: string, attempt: string): string {
  const v = version
    .toLowerCase()
    .replace(/^v/, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
  const a = attempt
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "")
    .slice(0, 5);
  return `${v.slice(0, 20 - a.length - 1).replace(/-$/, "")}-${a}`;
}

/** The key of the cluster a voter pod (any revision) belongs to; read replicas and Job pods have none. */
export function serverPodCluster(pod: {
  metadata: { namespace?: string; labels?: Record<string, string> };
}): string[] {
  const l = pod.metadata.labels ?? {};
  const cluster = l[LABEL_CLUSTER];
  return cluster && l[LABEL_COMPONENT] === Component.Server && pod.metadata.namespace
    ? [`${pod.metadata.namespace}/${cluster}`]
    : [];
}
