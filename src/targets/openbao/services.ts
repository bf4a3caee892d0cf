import type { OpenBaoCluster } from "../../apis/openbaocluster.js";
import type { OpenBaoClusterReasonType } from "../../apis/openbaocluster-names.js";
import type { CachedReader } from "../../runtime/cached-reader.js";
import type { KubeClient } from "../../runtime/client.js";
import type { EventRecorder } from "../../runtime/events.js";
import type { Logger } from "../../runtime/log.js";
import type { OidcBootstrapFacts } from "./oidc-roles.js";

/**
 * The contract between the workload controller and the narrow services it runs in order
 * (certificates, configuration, networking, identity). Each service writes only its own objects
 * and answers whether the next step may go on; the controller turns the answers into status.
 */
export interface ServiceContext {
  client: KubeClient;
  /** Reads of objects, from the informers' caches where they are watched (writes go to `client`). */
  reader: Pick<CachedReader, "get" | "list">;
  /** The cluster as read from the API server: the controller reference of every child. */
  owner: OpenBaoCluster;
  fieldManager: string;
  log: Logger;
  events: EventRecorder;
  now: () => Date;
  signal?: AbortSignal;
  /** Observe-only: reconcile fully, write nothing, report what would change. */
  observeOnly?: boolean;
}

/** IngressIntegrationReady as upstream sets it: Unknown while something is pending or cannot be read. */
export interface IngressReadiness {
  status: "True" | "False" | "Unknown";
  reason: OpenBaoClusterReasonType;
  message: string;
}

export interface StepOutcome {
  ready: boolean;
  reason: OpenBaoClusterReasonType;
  /** Names objects and fields, never secret values. */
  message: string;
  /** sha256 of the active leaf certificate and key, when the certificates step knows it. */
  activeCertHash?: string;
  /** Epoch ms by which a pass must look again (a certificate due for rotation, or expiring). */
  recheckAt?: number;
  /** Objects the service wrote or deleted, or in observe-only mode would have ("Service/x would be created"). */
  changes?: string[];
  /**
   * Networking only: whether the Gateway API routes spec.gateway asks for are served. A concern of its
   * own, so a missing Gateway API leaves the rest of the cluster running; undefined without spec.gateway.
   */
  gateway?: { ready: boolean; reason: OpenBaoClusterReasonType; message: string };
  /** Networking only: the managed Ingress's integration; undefined without spec.ingress. */
  ingress?: IngressReadiness;
}

/** Inputs of config.hcl that are not in the spec. */
export interface ConfigInputs {
  clusterDomain: string;
  component: "server" | "read-replica";
  /** Voters listed in retry_join. */
  peers: number;
  tlsDir: string;
  sealKeyPath: string;
  /** Blue-green revision the config is for (its own config map; hashes differently). */
  revision?: string;
  /** Join Raft as a non-voter: a green revision until it is promoted. */
  nonVoter?: boolean;
  /** DNS names retry_join tries instead of the serving voters (green: blue's pods, then its own). */
  peerHosts?: string[];
}

/** What the in-pod reload wrapper adds to the OpenBao container. */
export interface PodRuntime {
  command: string[];
  args: string[];
  volumes: Record<string, unknown>[];
  volumeMounts: Record<string, unknown>[];
  /** Environment the wrapper reads, next to the per-pod variables the StatefulSet sets. */
  env?: { name: string; value: string }[];
  /** Extra objects the wrapper needs (e.g. the ConfigMap holding the script). */
  objects?: (cluster: OpenBaoCluster) => Record<string, unknown>[];
}

export interface WorkloadServices {
  certificates(ctx: ServiceContext, cluster: OpenBaoCluster): Promise<StepOutcome>;
  networking(ctx: ServiceContext, cluster: OpenBaoCluster): Promise<StepOutcome>;
  identity(ctx: ServiceContext, cluster: OpenBaoCluster): Promise<StepOutcome>;
  renderConfig(cluster: OpenBaoCluster, inputs: ConfigInputs): string;
  /**
   * The self-init `initialize` blocks, in their own file so they can be made inert later; `oidc` is
   * what selfInit.oidc's JWT bootstrap needs from the API server (absent when it is off).
   */
  renderSelfInit(cluster: OpenBaoCluster, oidc?: OidcBootstrapFacts): string;
  /** The container's command, the TLS and wrapper volumes; `tlsSecretName` is unset without TLS files. */
  podRuntime(cluster: OpenBaoCluster, paths: { configFiles: string[]; tlsSecretName?: string }): PodRuntime;
}
