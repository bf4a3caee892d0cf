/**
 * One AdminOps condition (BackingUp, Restarting, BackupVerified, ...) set when it moved, the way
 * every AdminOps half stages its own: compared with what the cluster holds, then changed in the
 * pass's one commit (or written at once, given a client). What to tell about it (an event when the
 * reason moves, which reasons stay quiet) is the caller's, so each half keeps its own words.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoClusterReasonType } from "../../../apis/openbaocluster-names.js";
import type { KubeClient } from "../../../runtime/client.js";
import { type Condition, setCondition } from "../../../runtime/conditions.js";
import { refOf } from "../cluster-ref.js";
import { type AdminOpsPass, changePlane } from "./adminops-pass.js";
import { applyConcern } from "./adminops-plane.js";

export interface PlaneCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: OpenBaoClusterReasonType;
  message: string;
}

/**
 * Stages the condition unless the cluster already has it with the same status, reason and message.
 * Returns whether it moved and the condition it had before (the caller's event compares reasons).
 */
export async function setPlaneCondition(
  to: KubeClient | AdminOpsPass,
  cluster: OpenBaoCluster,
  c: PlaneCondition,
  now: Date,
  signal?: AbortSignal,
): Promise<{ moved: boolean; before: Condition | undefined }> {
  const before = cluster.status?.conditions?.find((x) => x.type === c.type);
  if (before?.status === c.status && before.reason === c.reason && before.message === c.message)
    return { moved: false, before };
  await changePlane(
    to,
    refOf(cluster),
    (plane) =>
      applyConcern(
        plane,
        "conditions",
        setCondition(plane.conditions ?? [], { ...c, observedGeneration: cluster.metadata.generation }, now),
      ),
    signal,
  );
  return { moved: true, before };
}
