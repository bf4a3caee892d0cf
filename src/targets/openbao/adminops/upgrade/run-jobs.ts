import { OpenBaoAnnotation } from "../../../../apis/openbaocluster-names.js";
import { JOB } from "../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../runtime/client.js";
import { isNotFound } from "../../../../runtime/errors.js";
import type { KubeObject } from "../../../../runtime/types.js";

// An upgrade's Jobs carry upstream's names, which one run shares with the next (the hook's is per
// cluster, the snapshot's per generation or per inputs): a Job is told apart by the run it was made
// for, and a Job of another run that holds the name is removed before this run makes its own.

/** The upgrade run a Job was made for: its openbao.org/upgrade-run-id annotation. */
export function upgradeRunIdOf(job: KubeObject): string | undefined {
  return job.metadata.annotations?.[OpenBaoAnnotation.UpgradeRunID];
}

/** Deletes that very Job (by uid; its pods in the background); one already gone is fine. */
export async function deleteRunJob(client: KubeClient, job: KubeObject): Promise<void> {
  await client
    .delete(JOB, job.metadata.name!, job.metadata.namespace, {
      propagationPolicy: "Background",
      preconditions: { uid: job.metadata.uid! },
    })
    .catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
}
