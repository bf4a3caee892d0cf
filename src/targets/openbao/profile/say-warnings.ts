import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { EventRecorder } from "../../../runtime/events.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import { postureOf } from "./posture.js";
import { dueWarnings } from "./warnings.js";

/**
 * Says the posture warnings that are due and stamps when, in one merge patch of annotations (a
 * patch of metadata only: the spec is not sent, so nothing of it is validated or owned). The stamp
 * is written first: an event said without its stamp would be said again on every pass.
 * Returns how many were said.
 */
export async function sayPostureWarnings(
  client: KubeClient,
  events: EventRecorder,
  cluster: OpenBaoCluster,
  now: Date,
): Promise<number> {
  const due = dueWarnings(postureOf(cluster.spec), cluster.metadata.annotations, now);
  if (due.length === 0) return 0;
  const stamp = now.toISOString();
  await client.mergePatch(OPENBAOCLUSTER, cluster.metadata.name!, cluster.metadata.namespace, {
    metadata: { annotations: Object.fromEntries(due.map((w) => [w.annotation, stamp])) },
  });
  for (const w of due)
    events.record(cluster, { type: "Warning", reason: w.reason, action: "Reconcile", note: w.note });
  return due.length;
}
