import { GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { applyPlanned } from "../apply/exec.js";
import { applyWrites } from "../metrics.js";
import { fail, type Stage } from "./context.js";

/**
 * Every object of the release, server-side applied (dry-run when observing). A kind the cluster
 * does not serve, or an object it refuses, fails the pass; when the release has post hooks the
 * hooks are run again with the next attempt, since the release is complete only after them.
 */
export const applyRelease: Stage = {
  name: "apply",
  async run(p) {
    const report = await applyPlanned(p.deps.client, p.obj, p.plan!.objects, {
      signal: p.signal,
      dryRun: p.observe,
      live: p.deps.live,
      memory: p.applied,
      memoryKey: `${p.release.namespace}/${p.release.name}`,
    });
    p.report = report;
    applyWrites.inc(report.applied.length);
    p.recorded = new Set([...(p.status.renderedKinds ?? []), ...report.servedKinds]);
    if (report.unserved.length || report.failed.length) {
      const parts = [
        ...report.unserved.map((k) => `kind ${k} is not served by the cluster`),
        ...report.failed.map((f) => `${f.object}: ${f.error}`),
      ];
      return fail(p, "apply", R.ApplyFailed, parts.join("; "), {
        targetVersion: p.target,
        renderedKinds: [...p.recorded].sort(),
        hooksRanFor: p.hooksRan && p.postHooks!.run.length === 0 ? p.render!.chart.version : undefined,
      });
    }
    if (report.applied.length)
      p.log.info({ applied: report.applied.length, chart: p.step }, "applied the release");
    return undefined;
  },
};
