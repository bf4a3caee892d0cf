/**
 * What a restore-test pass reads of its run (the throwaway, the restore into it, their volumes) and
 * the BackupVerified condition it stages on the source.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
  OpenBaoLabel,
} from "../../../apis/openbaocluster-names.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreCondition } from "../../../apis/openbaorestore-names.js";
import { PERSISTENT_VOLUME_CLAIM } from "../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { ReconcileContext } from "../../../runtime/controller.js";
import type { Informer } from "../../../runtime/informer.js";
import { LABEL_CLUSTER } from "../identity.js";
import type { InAdminOpsPass } from "../opslifecycle/index.js";
import { setPlaneCondition } from "../opslifecycle/plane-condition.js";
import { throwawayClusterName, throwawayRestoreName } from "./names.js";
import { runOf } from "./objects.js";
import { enabled, type Observed } from "./plan.js";

/**
 * Where the source's run stands, from the informers (a pass of a cluster without restore tests, the
 * usual one, sends nothing) and, only around a run, a list of the throwaway's volumes.
 */
export async function observeRun(
  d: {
    client: KubeClient;
    clusters: Pick<Informer<OpenBaoCluster>, "get">;
    restores: Pick<Informer<OpenBaoRestore>, "get">;
  },
  source: OpenBaoCluster,
  now: Date,
  rc: ReconcileContext,
): Promise<Observed & { foreign?: string }> {
  const ns = source.metadata.namespace!;
  const name = throwawayClusterName(source.metadata.name!);
  // From the informers: a pass of a cluster without restore tests (the usual one) sends nothing.
  // A copy older than this process's own create or delete is harmless: both are repeated
  // idempotently (a conflict or a not-found is what was wanted).
  const t = d.clusters.get(`${ns}/${name}`);
  // Only a throwaway this source made counts: a cluster of that name without the label is the
  // user's and is never touched (the run waits, saying so).
  const mine = t && t.metadata.labels?.[OpenBaoLabel.RestoreTestOf] === source.metadata.name ? t : undefined;
  if (t && !mine)
    rc.log.warn({ cluster: name }, "restore test: a cluster of the throwaway's name exists and is not ours");
  const r = d.restores.get(`${ns}/${throwawayRestoreName(name)}`);
  const restore =
    r && r.metadata.labels?.[OpenBaoLabel.RestoreTestOf] === source.metadata.name ? r : undefined;
  // Volumes are listed only around a run: while tests are on, or a throwaway or restore exists.
  const claims =
    enabled(source) || mine || restore
      ? (
          await d.client.list(PERSISTENT_VOLUME_CLAIM, {
            namespace: ns,
            labelSelector: `${LABEL_CLUSTER}=${name}`,
          })
        ).items.length
      : 0;
  const complete = restore?.status?.conditions?.find(
    (c) => c.type === OpenBaoRestoreCondition.RestoreComplete,
  );
  return {
    source,
    now,
    ...(mine
      ? {
          throwaway: {
            run: runOf(mine),
            deleting: !!mine.metadata.deletionTimestamp,
            initialized: mine.status?.initialized === true,
          },
        }
      : {}),
    ...(restore
      ? {
          restore: {
            phase: restore.status?.phase ?? "Pending",
            ...(restore.status?.completionTime
              ? { completedAt: new Date(restore.status.completionTime) }
              : {}),
            ...(complete?.message || restore.status?.message
              ? { message: complete?.message ?? restore.status?.message }
              : {}),
            ...(restore.status?.phase === "Failed" && complete?.message
              ? { failureReason: failureReasonOf(complete.message) }
              : {}),
          },
        }
      : {}),
    claims,
    ...(t && !mine ? { foreign: name } : {}),
  };
}

/** Sets BackupVerified when it moved, staged in the pass's one AdminOps commit. */
export async function setBackupVerified(
  now: Date,
  source: OpenBaoCluster,
  status: "True" | "False" | "Unknown",
  reason: OpenBaoClusterReasonType,
  message: string,
  rc: InAdminOpsPass,
): Promise<void> {
  await setPlaneCondition(rc.adminOps, source, { type: C.BackupVerified, status, reason, message }, now);
}

/**
 * The restore's failure reason from its RestoreComplete message: the restore writes it as
 * "<Reason>: <detail>" (restore/status.ts), the condition's own reason being RestoreFailed.
 */
export function failureReasonOf(message: string): string | undefined {
  return /^([A-Z][A-Za-z]+): /.exec(message)?.[1];
}
