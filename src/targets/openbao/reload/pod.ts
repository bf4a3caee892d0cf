import type { KubeObject } from "../../../runtime/types.js";
import { type ClusterRef, clusterLabels, clusterNames } from "../identity.js";
import { RELOAD_SCRIPT } from "./script.js";

/**
 * The pieces of the OpenBao pod that make certificate reload work: the wrapper's ConfigMap, the
 * volumes holding it and the TLS Secret, the container's command and environment. The workload
 * service puts them into its pod template; none of them depends on the certificate's content, so
 * a rotation never changes the template (and never rolls the StatefulSet). Pure.
 */

export const RELOAD_SCRIPT_KEY = "tls-reload.sh";
export const RELOAD_MOUNT_PATH = "/openbao/reload";
export const TLS_MOUNT_PATH = "/openbao/tls";
export const TLS_CERT_FILE = `${TLS_MOUNT_PATH}/tls.crt`;
export const TLS_KEY_FILE = `${TLS_MOUNT_PATH}/tls.key`;
export const TLS_CA_FILE = `${TLS_MOUNT_PATH}/ca.crt`;
const RELOAD_VOLUME = "tls-reload";
const TLS_VOLUME = "tls";

export interface ReloadOptions {
  /** Arguments of `bao`, e.g. ["server", "-config=/openbao/config/config.hcl"]. */
  serverArgs: string[];
  /** The Secret mounted at TLS_MOUNT_PATH; none (ACME, TLS off) leaves the wrapper idle. */
  tlsSecretName?: string;
  /** Seconds between looks at the files. Kubelet refreshes Secret volumes about once a minute. */
  intervalSeconds?: number;
}

export interface ReloadPodPieces {
  command: string[];
  args: string[];
  env: { name: string; value: string }[];
  volumes: Record<string, unknown>[];
  volumeMounts: { name: string; mountPath: string; readOnly: boolean }[];
}

/** The wrapper's ConfigMap; its content is the same for every cluster and every certificate. */
export function reloadWrapperConfigMap(cluster: ClusterRef): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: clusterNames(cluster).reloadWrapperConfigMap,
      namespace: cluster.namespace,
      labels: clusterLabels(cluster),
    },
    data: { [RELOAD_SCRIPT_KEY]: RELOAD_SCRIPT },
  };
}

export function reloadPodPieces(cluster: ClusterRef, opts: ReloadOptions): ReloadPodPieces {
  const interval = Math.max(1, Math.floor(opts.intervalSeconds ?? 5));
  const watched = opts.tlsSecretName ? [TLS_CERT_FILE, TLS_KEY_FILE, TLS_CA_FILE] : [];
  const volumes: Record<string, unknown>[] = [
    {
      name: RELOAD_VOLUME,
      configMap: { name: clusterNames(cluster).reloadWrapperConfigMap, defaultMode: 0o555 },
    },
  ];
  const volumeMounts = [{ name: RELOAD_VOLUME, mountPath: RELOAD_MOUNT_PATH, readOnly: true }];
  if (opts.tlsSecretName) {
    // Group-readable: OpenBao runs as a non-root user whose group is the pod's fsGroup.
    volumes.push({ name: TLS_VOLUME, secret: { secretName: opts.tlsSecretName, defaultMode: 0o440 } });
    volumeMounts.push({ name: TLS_VOLUME, mountPath: TLS_MOUNT_PATH, readOnly: true });
  }
  return {
    // sh runs the script, so the mounted file needs no exec bit (some volume setups strip it).
    command: ["/bin/sh", `${RELOAD_MOUNT_PATH}/${RELOAD_SCRIPT_KEY}`],
    args: ["bao", ...opts.serverArgs],
    env: [
      { name: "BAO_TLS_RELOAD_FILES", value: watched.join(" ") },
      { name: "BAO_TLS_RELOAD_INTERVAL", value: String(interval) },
    ],
    volumes,
    volumeMounts,
  };
}
