/**
 * What a restore leaves for the controller to do once OpenBao accepted the snapshot, pure.
 *
 * The node that applied the snapshot keeps some of its own state in memory: its Raft TLS keyring
 * (OpenBao reloads it only when the restored keyring's term differs, and two young clusters both
 * sit at term 0) and, on a seal mismatch, a barrier it could not reopen. Nodes that join later get
 * the restored keyring from storage, so the leader's heartbeats carry a TLS server name they do not
 * know (`tls: unrecognized name`) until the leader restarts. Every pod of the cluster is therefore
 * restarted once after the restore: each loads the restored data, seal-wrapped keys and keyring
 * from storage, and they agree again. The voters all at once, not one by one: a node restarted
 * alone already holds only the restored keyring and cannot follow a leader that still holds the old
 * one. The read replicas for the same reason only after the voters are back (after-restore-plan.ts).
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoLabel } from "../../../apis/openbaocluster-names.js";
import type { KubeObject } from "../../../runtime/types.js";
import { refOf } from "../cluster-ref.js";
import { Component, type ComponentName, clusterNames, LABEL_CLUSTER, LABEL_COMPONENT } from "../identity.js";
import type { PodFacts, PoolFacts } from "./after-restore-plan.js";

/**
 * Selector of the pods that run OpenBao for `cluster` (voters of every revision, read replicas), and
 * of their StatefulSets, which carry the same labels.
 */
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

/** What the follow-through plans from of one OpenBao pod. */
export function podFacts(p: KubeObject): PodFacts {
  const created = Date.parse(p.metadata.creationTimestamp ?? "");
  const conditions = ((p["status"] ?? {}) as { conditions?: { type: string; status: string }[] }).conditions;
  return {
    name: p.metadata.name ?? "",
    ...(p.metadata.uid ? { uid: p.metadata.uid } : {}),
    ...(Number.isFinite(created) ? { created: new Date(created) } : {}),
    terminating: !!p.metadata.deletionTimestamp,
    ready: (conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
  };
}

/**
 * One component's pods and what its StatefulSets ask for (voters: every revision's StatefulSet;
 * read replicas: theirs), from the cluster's pods and StatefulSets as listed.
 */
export function poolOf(
  component: ComponentName,
  pods: readonly KubeObject[],
  statefulSets: readonly KubeObject[],
): PoolFacts {
  const of = (o: KubeObject) => o.metadata.labels?.[LABEL_COMPONENT] === component;
  return {
    pods: pods.filter(of).map(podFacts),
    desired: statefulSets
      .filter(of)
      .reduce((n, s) => n + (((s["spec"] ?? {}) as { replicas?: number }).replicas ?? 1), 0),
  };
}

/**
 * What to do when OpenBao refused the snapshot because its hash file was sealed by another seal:
 * the restored data would stay sealed by the source's seal, so the target needs the source's key
 * first. Names the Secret or setting per seal type; never a value.
 */
export function sealMismatchHint(cluster: OpenBaoCluster | undefined): string {
  const type = cluster?.spec.unseal?.type ?? "static";
  const name = cluster?.metadata.name ?? "the cluster";
  // A restore test's throwaway already holds its source's seal: giving it another key and forcing
  // would prove nothing about the source, whose own seal is what failed to open the snapshot.
  const testOf = cluster?.metadata.labels?.[OpenBaoLabel.RestoreTestOf];
  if (testOf)
    return `${name} is the restore test of ${testOf} and holds ${testOf}'s seal, so the snapshot was sealed by another seal than ${testOf}'s: it is another cluster's backup, or ${testOf}'s seal key changed after it was taken; ${testOf} could not restore it either`;
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
