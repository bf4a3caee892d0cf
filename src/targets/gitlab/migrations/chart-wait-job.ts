/**
 * The batched background migrations wait Job a chart renders (the operator turns it on for upgrade
 * steps only, values/overrides.ts). GitLab's spec keeps it off the generic apply path: it is split
 * from the apply plan here, created once with a plain create by the upgrade step that renders it,
 * owned by the GitLabCore, never server-side applied again and never pruned (a Job's pod template
 * is immutable, and later passes render it no more). The step's gate then reads it back from the
 * release's Job watch, as it reads the one the operator provides for older charts (provide.ts).
 */
import { JOB } from "../../../runtime/builtin-types.js";
import { isConflict } from "../../../runtime/errors.js";
import { setControllerReference } from "../../../runtime/ownership.js";
import type { KubeObject } from "../../../runtime/types.js";
import type { ApplyPlan } from "../apply/plan.js";
import type { RenderedObject } from "../apply/rendered.js";
import type { PassBase } from "../pass/context.js";
import { BATCHED_CHECK_LABEL } from "../status/version.js";

/** A rendered Job carrying the wait label: the chart's wait Job. */
export const isWaitJob = (o: {
  apiVersion: string;
  kind: string;
  metadata: { labels?: Record<string, string> };
}) =>
  o.apiVersion === "batch/v1" && o.kind === "Job" && o.metadata.labels?.[BATCHED_CHECK_LABEL] !== undefined;

/** The plan without the chart's wait Jobs, and those Jobs. Pure. */
export function splitWaitJobs(plan: ApplyPlan): { plan: ApplyPlan; waitJobs: RenderedObject[] } {
  const waitJobs = plan.objects.filter(isWaitJob);
  if (waitJobs.length === 0) return { plan, waitJobs };
  return { plan: { ...plan, objects: plan.objects.filter((o) => !isWaitJob(o)) }, waitJobs };
}

/** Creates each wait Job that does not exist yet (one created by an earlier pass is left as it is). */
export async function createWaitJobs(p: PassBase, jobs: readonly RenderedObject[]): Promise<void> {
  // The release's Job informer knows those created before: no request for them.
  const cache = p.deps.live ? await p.deps.live(JOB) : undefined;
  for (const rendered of jobs) {
    if (cache?.get(`${p.release.namespace}/${rendered.metadata.name}`)) continue;
    const job = structuredClone(rendered) as KubeObject;
    job.metadata.namespace ??= p.release.namespace;
    setControllerReference(p.obj as KubeObject, job);
    try {
      await p.deps.client.create(JOB, job);
      p.log.info({ job: job.metadata.name }, "created the chart's batched background migrations wait Job");
    } catch (e) {
      // AlreadyExists (409): created by an earlier pass.
      if (!isConflict(e)) throw e;
    }
  }
}
