/**
 * What a restore leaves for the controller to do once OpenBao accepted the snapshot, pure.
 *
 * The node that applied the snapshot keeps some of its own state in memory: its Raft TLS keyring
 * (OpenBao reloads it only when the restored keyring's term differs, and two young clusters both
 * sit at term 0) and, on a seal mismatch, a barrier it could not reopen. Nodes that join later get
 * the restored keyring from storage, so the leader's heartbeats carry a TLS server name they do not
 * know (`tls: unrecognized name`) until the leader restarts. Every pod of the cluster is therefore
 * restarted once after the restore: each loads the restored data, seal-wrapped keys and keyring
 * from storage, and they agree again. All at once, not one by one: a node restarted alone already
 * holds only the restored keyring and cannot follow a leader that still holds the old one.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { KubeObject } from "../../../runtime/types.js";
import { refOf } from "../cluster-ref.js";
import { Component, clusterNames, LABEL_CLUSTER, LABEL_COMPONENT } from "../identity.js";

/** Selector of the pods that run OpenBao for `cluster` (voters of every revision, read replicas). */
export function openbaoPodSelector(cluster: string): string {
  return `${LABEL_CLUSTER}=${cluster},${LABEL_COMPONENT} in (${Component.Server},${Component.ReadReplica})`;
}

/** When the restore Job finished: its completionTime, else the time its Complete condition turned True. */
export function jobFinishedAt(job: KubeObject): Date | undefined {
  const st = (job["status"] ?? {}) as {
    completionTime?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
  };
  const at =
    st.completionTime ??
    st.conditions?.find((c) => c.type === "Complete" && c.status === "True")?.lastTransitionTime;
  const ms = Date.parse(at ?? "");
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

/**
 * The pods still running from before the snapshot was applied: created no later than the Job's
 * end (timestamps have whole seconds, so a pod of that very second counts as old and is restarted
 * once more rather than kept with stale state). Pods already being deleted are left alone.
 */
export function podsToRestart(pods: readonly KubeObject[], finishedAt: Date): KubeObject[] {
  return pods.filter((p) => {
    if (p.metadata.deletionTimestamp) return false;
    const created = Date.parse(p.metadata.creationTimestamp ?? "");
    return Number.isFinite(created) && created <= finishedAt.getTime();
  });
}

/**
 * What to do when OpenBao refused the snapshot because its hash file was sealed by another seal:
 * the restored data would stay sealed by the source's seal, so the target needs the source's key
 * first. Names the Secret or setting per seal type; never a value.
 */
export function sealMismatchHint(cluster: OpenBaoCluster | undefined): string {
  const type = cluster?.spec.unseal?.type ?? "static";
  const name = cluster?.metadata.name ?? "the cluster";
  const secret = cluster ? clusterNames(refOf(cluster)).unsealKeySecret : "<cluster>-unseal-key";
  const own = cluster?.spec.unseal?.static?.currentKey !== undefined;
  const where =
    type === "static" && !own
      ? `copy the source cluster's static seal key (Secret <source>-unseal-key, key "key") into Secret ${secret}, then create a new OpenBaoRestore with spec.force: true: the running pods keep their current key until the restore restarts them, and then open the restored data with the source's key`
      : type === "static"
        ? `point spec.unseal.static.currentKey of ${name} at the source's static key, then create a new OpenBaoRestore with spec.force: true`
        : `give ${name} access to the source's ${type} key (the same key the source sealed with), then create a new OpenBaoRestore with spec.force: true`;
  return `the snapshot was sealed by another seal than ${name}'s running one (another key), so restored data could not be opened: ${where}`;
}
