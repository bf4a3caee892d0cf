/**
 * The environment variables a pod needs next to the rendered config: the values that differ from
 * pod to pod. OpenBao reads each of them in preference to the file, and Kubernetes expands
 * `$(BAO_K8S_POD_NAME)` from the variable defined before it.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { API_PORT, CLUSTER_PORT, peerDomain } from "../../identity.js";
import type { RenderOptions } from "./options.js";
import { clusterRef, tlsSource } from "./render.js";
import { specView } from "./spec-view.js";

export interface ConfigEnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef: { fieldPath: string } };
}

export function configEnv(cluster: OpenBaoCluster, opts: RenderOptions = {}): ConfigEnvVar[] {
  const ref = clusterRef(cluster);
  const domain = opts.clusterDomain ?? "cluster.local";
  const host = `$(BAO_K8S_POD_NAME).${peerDomain(ref, domain)}`;
  const scheme = tlsSource(specView(cluster)) === "disabled" ? "http" : "https";
  return [
    { name: "BAO_K8S_POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "BAO_K8S_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    // The pod name is stable across restarts of a StatefulSet pod, so it is a stable Raft node id.
    { name: "BAO_RAFT_NODE_ID", value: "$(BAO_K8S_POD_NAME)" },
    { name: "BAO_API_ADDR", value: `${scheme}://${host}:${API_PORT}` },
    // The cluster port always speaks TLS, with certificates OpenBao makes itself.
    { name: "BAO_CLUSTER_ADDR", value: `https://${host}:${CLUSTER_PORT}` },
  ];
}
