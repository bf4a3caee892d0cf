import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { PERSISTENT_VOLUME_CLAIM, STATEFULSET } from "../../../runtime/builtin-types.js";
import { isNotFound } from "../../../runtime/errors.js";
import type { KubeObject } from "../../../runtime/types.js";
import { refOf } from "../cluster-ref.js";
import {
  Component,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
  LABEL_MANAGED_BY,
  LEGACY_MANAGED_BY,
  MANAGED_BY,
} from "../identity.js";
import { claimsOfSet, retiredVoterSets } from "../workload/statefulsets/bluegreen.js";
import type { PassBase } from "./context.js";

/**
 * Deletes the voter StatefulSets a blue-green upgrade left behind, with their data claims: blue once
 * the upgrade completed (status.blueGreen.blueRevision names green), green once a rollback reached
 * RollbackCleanup. Which sets those are is decided in retiredVoterSets (pure); this only does it.
 *
 * Only sets this cluster owns (controller reference by uid) and labelled as its voters are touched,
 * and nothing at all without status.blueGreen: a lost status must not turn a serving revision's set
 * into a "retired" one and delete its data.
 */
export async function retireVoterSets(pass: PassBase): Promise<void> {
  const { cluster, ctx, deps, writes } = pass;
  if (!cluster.status?.blueGreen) return;
  const ns = cluster.metadata.namespace!;
  const uid = cluster.metadata.uid;
  const ref = refOf(cluster);
  const owned = deps.statefulSets.list(ns).filter((s) => isOwnVoterSet(s, ref.name, uid));
  const retired = retiredVoterSets(
    cluster,
    owned.map((s) => s.metadata.name!),
  );
  if (retired.length === 0) return;
  const claims = (
    await ctx.reader.list(PERSISTENT_VOLUME_CLAIM, {
      namespace: ns,
      labelSelector: `${LABEL_CLUSTER}=${ref.name}`,
    })
  ).map((c) => c.metadata.name!);
  for (const name of retired) {
    const set = owned.find((s) => s.metadata.name === name)!;
    const setClaims = claimsOfSet(name, claims);
    if (writes.dryRun) {
      writes.record("delete", `StatefulSet/${name}`);
      for (const c of setClaims) writes.record("delete", `PersistentVolumeClaim/${c}`);
      continue;
    }
    await ctx.client
      .delete(STATEFULSET, name, ns, { preconditions: { uid: set.metadata.uid! } })
      .catch(ignoreNotFound);
    writes.record("delete", `StatefulSet/${name}`);
    // Claims outlive their StatefulSet (whenDeleted: Retain); a retired revision's data is a copy
    // of the serving one's Raft log, so it goes. Kubernetes keeps each until its pod is gone.
    for (const c of setClaims) {
      await ctx.client.delete(PERSISTENT_VOLUME_CLAIM, c, ns).catch(ignoreNotFound);
      writes.record("delete", `PersistentVolumeClaim/${c}`);
    }
    ctx.log.info({ statefulSet: name, claims: setClaims.length }, "deleted a retired blue-green revision");
    ctx.events.record(cluster, {
      type: "Normal",
      reason: OpenBaoClusterReason.RevisionRetired,
      action: "Delete",
      note: `deleted StatefulSet ${name} and ${setClaims.length} data claim(s): its revision no longer serves`,
    });
  }
}

function isOwnVoterSet(s: KubeObject, cluster: string, uid: string | undefined): boolean {
  const l = s.metadata.labels ?? {};
  return (
    l[LABEL_CLUSTER] === cluster &&
    l[LABEL_COMPONENT] === Component.Server &&
    (l[LABEL_MANAGED_BY] === MANAGED_BY || l[LABEL_MANAGED_BY] === LEGACY_MANAGED_BY) &&
    uid !== undefined &&
    (s.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === uid)
  );
}

function ignoreNotFound(e: unknown): void {
  if (!isNotFound(e)) throw e;
}
