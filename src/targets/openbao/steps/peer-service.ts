import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { EventRecorder } from "../../../runtime/events.js";
import type { Informer } from "../../../runtime/informer.js";
import type { KubeObject } from "../../../runtime/types.js";
import { OPENBAOCLUSTER, servingRef } from "../cluster-ref.js";
import { ANNOTATION_PEER_SERVICE, voterSetName } from "../identity.js";

export interface PeerServiceDeps {
  client: KubeClient;
  statefulSets: Informer<KubeObject>;
  events: Pick<EventRecorder, "record">;
}

/**
 * A cluster whose voters were made before the names followed upstream lives under the headless
 * Service `<name>-internal`: the StatefulSet's serviceName cannot change, and each Raft peer keeps
 * the address it joined with. Such a cluster is marked once with the Service it keeps
 * (ANNOTATION_PEER_SERVICE), before anything is rendered from its names; every name builder reads
 * the mark, so config, certificates and Services keep the pods where they are. A cluster with the
 * mark, or without a voter set yet, or whose set already lives under `<name>`, is returned as is.
 */
export async function keepPeerService(
  deps: PeerServiceDeps,
  cluster: OpenBaoCluster,
  opts: { observeOnly: boolean; signal?: AbortSignal },
): Promise<OpenBaoCluster> {
  const { name, namespace, uid } = cluster.metadata;
  if (!name || !namespace || cluster.metadata.annotations?.[ANNOTATION_PEER_SERVICE] !== undefined)
    return cluster;
  const set = deps.statefulSets.get(`${namespace}/${voterSetName(servingRef(cluster))}`);
  const serviceName = (set?.["spec"] as { serviceName?: string } | undefined)?.serviceName;
  const controlled = set?.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid);
  if (!serviceName || serviceName === name || !controlled) return cluster;
  const annotations = { ...(cluster.metadata.annotations ?? {}), [ANNOTATION_PEER_SERVICE]: serviceName };
  // Observe-only plans with the mark it would write, so it reports no move of every pod.
  if (opts.observeOnly) return { ...cluster, metadata: { ...cluster.metadata, annotations } };
  const written = await deps.client.request<OpenBaoCluster>({
    method: "PATCH",
    path: deps.client.resourcePath(OPENBAOCLUSTER, namespace, name),
    body: {
      metadata: {
        annotations: { [ANNOTATION_PEER_SERVICE]: serviceName },
        resourceVersion: cluster.metadata.resourceVersion,
      },
    },
    contentType: "application/merge-patch+json",
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  deps.events.record(written, {
    type: "Normal",
    reason: OpenBaoClusterReason.PeerServiceKept,
    action: "Reconcile",
    note: `the voters live under the headless Service ${serviceName}, which a StatefulSet cannot change; the cluster keeps it (annotation ${ANNOTATION_PEER_SERVICE}) and moves every other object to upstream's names`,
  });
  return written;
}
