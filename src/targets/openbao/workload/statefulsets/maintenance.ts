/**
 * `spec.maintenance.enabled`, upstream's meaning: the cluster's StatefulSets and its OpenBao pods
 * carry `openbao.org/maintenance: "true"` while it is set, and lose it when it is not. The chart's
 * `lock-managed-resource-mutations` policy reads that annotation: on an object carrying it, a
 * cluster administrator or a holder of the `maintenance` verb on the OpenBaoCluster may restart,
 * delete or edit what is otherwise the operator's alone (break glass). Setting the field itself
 * needs that verb (policies/delegation.ts).
 *
 * The annotation is on the StatefulSets' own metadata (build.ts) and on the live pods, never on the
 * pod template: entering or leaving maintenance must not roll the pods.
 */

import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { OpenBaoAnnotation } from "../../../../apis/openbaocluster-names.js";
import { POD } from "../../../../runtime/builtin-types.js";
import { isNotFound } from "../../../../runtime/errors.js";
import type { KubeObject } from "../../../../runtime/types.js";
import type { Writes } from "../../apply.js";
import { Component, LABEL_CLUSTER, LABEL_COMPONENT } from "../../identity.js";
import type { ServiceContext } from "../../services.js";

export const MAINTENANCE_ANNOTATION = OpenBaoAnnotation.Maintenance;

export const maintenanceEnabled = (c: OpenBaoCluster): boolean => c.spec.maintenance?.enabled === true;

/** The StatefulSets' own annotations for maintenance; undefined outside it. */
export function maintenanceAnnotations(c: OpenBaoCluster): Record<string, string> | undefined {
  return maintenanceEnabled(c) ? { [MAINTENANCE_ANNOTATION]: "true" } : undefined;
}

const OPENBAO_COMPONENTS: readonly string[] = [Component.Server, Component.ReadReplica];

/**
 * The merge patch each OpenBao pod of `pods` needs so its annotation says what the spec does: pods
 * being deleted and other pods of the cluster (its Jobs') are left alone. Pure.
 */
export function maintenancePatches(
  c: OpenBaoCluster,
  pods: readonly KubeObject[],
): { name: string; patch: { metadata: { annotations: Record<string, string | null> } } }[] {
  const on = maintenanceEnabled(c);
  const out: ReturnType<typeof maintenancePatches> = [];
  for (const pod of pods) {
    const meta = pod.metadata;
    if (meta.labels?.[LABEL_CLUSTER] !== c.metadata.name) continue;
    if (!OPENBAO_COMPONENTS.includes(meta.labels?.[LABEL_COMPONENT] ?? "")) continue;
    if (meta.deletionTimestamp) continue;
    const has = meta.annotations?.[MAINTENANCE_ANNOTATION];
    if (on && has !== "true")
      out.push({
        name: meta.name!,
        patch: { metadata: { annotations: { [MAINTENANCE_ANNOTATION]: "true" } } },
      });
    else if (!on && has !== undefined)
      out.push({
        name: meta.name!,
        patch: { metadata: { annotations: { [MAINTENANCE_ANNOTATION]: null } } },
      });
  }
  return out;
}

/** Marks (or unmarks) the cluster's OpenBao pods; observe-only records what it would do. */
export async function reconcileMaintenancePods(pass: {
  cluster: OpenBaoCluster;
  ctx: ServiceContext;
  writes: Writes;
}): Promise<void> {
  const { cluster, ctx, writes } = pass;
  const ns = cluster.metadata.namespace!;
  const pods = await ctx.reader.list<KubeObject>(POD, {
    namespace: ns,
    labelSelector: `${LABEL_CLUSTER}=${cluster.metadata.name}`,
  });
  for (const { name, patch } of maintenancePatches(cluster, pods)) {
    writes.record("update", `Pod/${name}`);
    if (writes.dryRun) continue;
    try {
      await ctx.client.mergePatch(POD, name, ns, patch);
    } catch (e) {
      // Gone since the cache saw it: its replacement is marked on the next pass.
      if (!isNotFound(e)) throw e;
    }
  }
}
