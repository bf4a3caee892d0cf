/**
 * What the renderer needs besides the spec: where the workload mounts things, which component and
 * revision the config is for, and whom Raft joins. The workload StatefulSet and blue-green both
 * build one of these, so both get the same config for the same inputs.
 */
import type { ComponentName } from "../../identity.js";

/** Where the pod mounts each file the config points at. */
export interface ConfigPaths {
  /** Raft data, on the data volume. */
  dataDir: string;
  /** Leaf certificate, its key and the CA (OperatorManaged and External). */
  tlsCertFile: string;
  tlsKeyFile: string;
  tlsCAFile: string;
  /** The operator-managed static seal key (32 raw bytes). */
  staticSealKeyFile: string;
  /** CA bundle of a private ACME directory (tls.acme.caCertSecretRef). */
  acmeCAFile: string;
  /** ACME account and certificate cache, on a volume so restarts do not reorder certificates. */
  acmeCacheDir: string;
  /** Plugin binaries. */
  pluginDir: string;
}

export const DEFAULT_PATHS: ConfigPaths = {
  dataDir: "/openbao/data",
  tlsCertFile: "/openbao/tls/tls.crt",
  tlsKeyFile: "/openbao/tls/tls.key",
  tlsCAFile: "/openbao/tls/ca.crt",
  staticSealKeyFile: "/openbao/unseal/key",
  acmeCAFile: "/openbao/acme-ca/ca.crt",
  acmeCacheDir: "/openbao/acme-cache",
  pluginDir: "/openbao/plugins",
};

/** Key id of the operator-managed static seal key when the spec names none. */
export const DEFAULT_STATIC_KEY_ID = "operator-managed-1";

export interface RenderOptions {
  /** Kubernetes cluster DNS domain; default cluster.local. */
  clusterDomain?: string;
  /** Voter (server) or read replica; read replicas join as non-voters. Default server. */
  component?: ComponentName;
  /** Blue-green revision the pods run; written as a comment so each revision hashes differently. */
  revision?: string;
  /**
   * Join Raft as a non-voter (`retry_join_as_non_voter`), as a blue-green green revision does until
   * it is promoted. Read replicas always do. OpenBao ignores the join API's own non_voter flag.
   */
  nonVoter?: boolean;
  /** Overrides of the mount paths; unset ones take DEFAULT_PATHS. */
  paths?: Partial<ConfigPaths>;
  /**
   * DNS names of the voters Raft may join, each getting one retry_join. Default: the pod names of
   * spec.replicas voters under the headless Service.
   */
  peers?: string[];
  /** Port peers serve the API on; default 8200 (tests on loopback use others). */
  peerPort?: number;
  /** Address the listener binds; default 0.0.0.0:8200 (tests on loopback use others). */
  listenAddress?: string;
  /** Address the cluster listener binds; default 0.0.0.0:8201. */
  clusterListenAddress?: string;
}
