import { JobStartFailureAnnotation } from "../../../../apis/openbaocluster-names.js";
import { JOB } from "../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../runtime/client.js";
import { isNotFound } from "../../../../runtime/errors.js";
import type { KubeObject } from "../../../../runtime/types.js";

/**
 * Ends a Job whose pod never started, the way a run that failed ends: the Job's deadline is cut to
 * one second, so the Job controller stops its pod and marks it Failed (DeadlineExceeded), and its
 * ttlSecondsAfterFinished removes it later like any finished run; until then `kubectl describe`
 * still shows what went wrong. The reason is written on the Job first, so a pass that only finds
 * the failed Job (a restarted operator) records the same reason. Idempotent; a Job already gone is
 * fine.
 */
export async function endUnstartedJob(
  client: KubeClient,
  job: KubeObject,
  failure: { reason: string; message: string },
): Promise<void> {
  if (
    job.metadata.annotations?.[JobStartFailureAnnotation] &&
    (job["spec"] as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds === 1
  )
    return;
  await client
    .mergePatch(JOB, job.metadata.name!, job.metadata.namespace, {
      metadata: { annotations: { [JobStartFailureAnnotation]: failure.message.slice(0, 1000) } },
      spec: { activeDeadlineSeconds: 1 },
    })
    .catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
}
