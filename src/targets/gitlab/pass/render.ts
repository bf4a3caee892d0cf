import { GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { errorMessage } from "../../../runtime/errors.js";
import { planApply } from "../apply/plan.js";
import { preflights } from "../metrics.js";
import { dryRunPreflight } from "../preflight/exec.js";
import { planPreflight } from "../preflight/plan.js";
import { clickHouseEnabledIn } from "../values/clickhouse.js";
import { fail, holdUpgrade, reasonOf, type Stage } from "./context.js";

/** The chart of this step rendered with the object's effective values, and the apply planned. */
export const renderChart: Stage = {
  name: "render",
  async run(p) {
    const { deps, release, signal } = p;
    try {
      const values = deps.values(p.obj, p.step!);
      p.clickHouseEnabled = clickHouseEnabledIn(values);
      p.render = await deps.release.render(
        {
          version: p.step!,
          releaseName: release.name,
          namespace: release.namespace,
          values,
          capabilities: p.capabilities!,
        },
        signal,
      );
    } catch (e) {
      if (signal.aborted) throw e;
      return fail(p, "render", reasonOf(e, R.RenderFailed), errorMessage(e), { targetVersion: p.target });
    }
    p.plan = planApply(p.render.objects, release);
    return undefined;
  },
};

/**
 * An upgrade step is first dry-run (dryRun=All) as its first pass would apply it, the gated
 * workloads paused and the pre-migrations Job, so a step the API server refuses is held here, before
 * a hook of it runs or an object of it changes; the pass goes on with the deployed version.
 * Observe-only runs it too: it stores nothing.
 */
export const preflight: Stage = {
  name: "preflight",
  async run(p) {
    if (!p.upgradePass) return undefined;
    const planned = planPreflight(p.plan!.objects);
    if (!planned.objects.length) return undefined;
    const checked = await dryRunPreflight(p.deps.client, p.obj, planned.objects, p.signal);
    preflights.inc({ outcome: checked.refused.length ? "refused" : "passed" });
    if (checked.refused.length) {
      const held = holdUpgrade(
        p,
        "preflight",
        R.PreflightFailed,
        `preflight of chart ${p.step} refused: ${checked.refused.map((r) => `${r.object}: ${r.error}`).join("; ")}`,
      );
      // The deployed version is what this pass applies now: render it in place of the refused step.
      return held ?? renderChart.run(p);
    }
    p.log.info({ chart: p.step, accepted: checked.accepted }, "upgrade preflight passed");
    return undefined;
  },
};
