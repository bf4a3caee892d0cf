import type { KubeObject } from "../../../../runtime/types.js";
import { type ClusterRef, clusterLabels } from "../../identity.js";

/** The Secret objects the certificate service writes and reads. Pure. */

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");

function tlsSecret(cluster: ClusterRef, name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: cluster.namespace, labels: clusterLabels(cluster) },
    type: "kubernetes.io/tls",
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

export function caSecretIntent(
  cluster: ClusterRef,
  name: string,
  ca: { certPem: string; keyPem: string; bundlePem: string },
): KubeObject {
  return tlsSecret(cluster, name, { "tls.crt": ca.certPem, "tls.key": ca.keyPem, "ca.crt": ca.bundlePem });
}

export function serverSecretIntent(
  cluster: ClusterRef,
  name: string,
  leaf: { certPem: string; keyPem: string; caPem: string },
): KubeObject {
  return tlsSecret(cluster, name, { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem, "ca.crt": leaf.caPem });
}

/** One key of a Secret as text; undefined when absent or empty. */
export function secretText(secret: KubeObject | undefined, key: string): string | undefined {
  const data = secret?.["data"];
  if (!data || typeof data !== "object") return undefined;
  const v = (data as Record<string, unknown>)[key];
  if (typeof v !== "string" || v === "") return undefined;
  return Buffer.from(v, "base64").toString("utf8");
}
