/**
 * Creates the wait Job the operator provides (wait-job.ts) when an upgrade step's gate needs one: the
 * deployed version's pre-deployment and migrations Jobs are complete, the chart rendered no wait
 * Job, and spec.upgrade.skipBatchedMigrationCheck is off. Created once with a plain create, never
 * through the release's server-side apply (it is no rendered object), and read back from the Job
 * watch like the others.
 */
import { JOB } from "../../../runtime/builtin-types.js";
import { isConflict } from "../../../runtime/errors.js";
import { setControllerReference } from "../../../runtime/ownership.js";
import type { KubeObject } from "../../../runtime/types.js";
import { releaseLabels } from "../apply/plan.js";
import type { PassBase } from "../pass/context.js";
import { type MigrationsJob, roleOf } from "../status/migrations.js";
import { deriveWaitJob, type WaitJobSource, waitJobName } from "./wait-job.js";

/**
 * Whether the step now waits on a Job the operator provides: created here, or created by an earlier
 * pass and not seen by the watch yet. False when the chart rendered its own, or there is no
 * migrations Job to derive one from (a chart that labels none: nothing to gate on).
 */
export async function provideWaitJob(
  p: PassBase,
  gitlabVersion: string,
  jobs: readonly MigrationsJob[],
): Promise<boolean> {
  if (jobs.some((j) => roleOf(j) === "batched")) return false;
  const migrations = jobs.find((j) => roleOf(j) === "post");
  if (!migrations?.metadata.name) return false;
  // The informer's copy may be trimmed: the pod template is read whole, once.
  const live = await p.deps.client.get<KubeObject & WaitJobSource>(
    JOB,
    migrations.metadata.name,
    p.release.namespace,
  );
  const job = deriveWaitJob(live, {
    namespace: p.release.namespace,
    release: p.release.name,
    gitlabVersion,
    releaseLabels: releaseLabels(p.release),
  });
  setControllerReference(p.obj as KubeObject, job);
  try {
    await p.deps.client.create(JOB, job);
    p.log.info(
      { job: job.metadata.name, from: migrations.metadata.name, gitlabVersion },
      "the chart renders no batched background migrations wait Job: created the operator's",
    );
  } catch (e) {
    if (!isConflict(e)) throw e;
    p.log.debug({ job: waitJobName(p.release.name, gitlabVersion) }, "wait Job already created");
  }
  return true;
}
