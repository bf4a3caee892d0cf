import { GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { proceed, wait } from "../../../runtime/stages.js";
import { applyPlanned } from "../apply/exec.js";
import type { ApplyPlan } from "../apply/plan.js";
import type { Rendered, RenderedObject } from "../apply/rendered.js";
import { applyWrites } from "../metrics.js";
import { createWaitJobs } from "../migrations/chart-wait-job.js";
import { type Applied, fail, type GitLabStage, type HooksDone, type PassBase } from "./context.js";

/**
 * Every object of the release, server-side applied (dry-run when observing). A kind the cluster
 * does not serve, or an object it refuses, fails the pass; when the release has post hooks the
 * hooks are run again with the next attempt, since the release is complete only after them. A Job
 * being replaced whose old copy is not gone yet ends the pass waiting (JobReplacing), never sleeping.
 */
export async function applyRelease(
  p: PassBase & {
    target: string | undefined;
    upgradePass: boolean;
    step: string;
    render: Rendered;
    plan: ApplyPlan;
    waitJobs: RenderedObject[];
  } & HooksDone,
): Promise<GitLabStage<Applied>> {
  const report = await applyPlanned(p.deps.client, p.obj, p.plan.objects, {
    signal: p.signal,
    dryRun: p.observe,
    live: p.deps.live,
    memory: p.applied,
    memoryKey: `${p.release.namespace}/${p.release.name}`,
  });
  applyWrites.inc(report.applied.length);
  const recorded = new Set([...(p.status.renderedKinds ?? []), ...report.servedKinds]);
  if (report.unserved.length || report.failed.length) {
    const parts = [
      ...report.unserved.map((k) => `kind ${k} is not served by the cluster`),
      ...report.failed.map((f) => `${f.object}: ${f.error}`),
    ];
    return fail("apply", R.ApplyFailed, parts.join("; "), {
      targetVersion: p.target,
      renderedKinds: [...recorded].sort(),
      hooksRanFor: p.hooksRan && p.postHooks.run.length === 0 ? p.render.chart.version : undefined,
    });
  }
  if (report.replacing.length) {
    const objects = report.replacing.map(
      (r) => `${r.object}${r.finalizers.length ? ` (held by finalizer ${r.finalizers.join(", ")})` : ""}`,
    );
    p.log.info({ objects, chart: p.step }, "waiting for replaced Jobs to be deleted");
    return wait(R.JobReplacing, `waiting for ${objects.join("; ")} to be deleted`, {
      detail: {
        kind: "replacing",
        targetVersion: p.target,
        upgrading: p.upgradePass,
        chartVersion: p.render.chart.version,
        renderedKinds: [...recorded].sort(),
        objects,
      },
    });
  }
  if (report.applied.length)
    p.log.info({ applied: report.applied.length, chart: p.step }, "applied the release");
  if (p.waitJobs.length && !p.observe) await createWaitJobs(p, p.waitJobs);
  return proceed({ report, recorded });
}
