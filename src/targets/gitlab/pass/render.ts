import { GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { errorMessage } from "../../../runtime/errors.js";
import { proceed } from "../../../runtime/stages.js";
import { planApply } from "../apply/plan.js";
import { preflights } from "../metrics.js";
import { splitWaitJobs } from "../migrations/chart-wait-job.js";
import type { Capabilities } from "../ports.js";
import { dryRunPreflight } from "../preflight/exec.js";
import { planPreflight } from "../preflight/plan.js";
import { clickHouseEnabledIn } from "../values/clickhouse.js";
import { withWaitJob } from "../values/overrides.js";
import {
  type Chosen,
  fail,
  type GitLabStage,
  holdUpgrade,
  isStop,
  type PassBase,
  type RenderedStep,
  reasonOf,
} from "./context.js";

/** The chart of this step rendered with the object's effective values, and the apply planned. */
export async function renderChart(
  p: PassBase & {
    capabilities: Capabilities;
    step: string;
    target: string | undefined;
    upgradePass: boolean;
  },
): Promise<GitLabStage<RenderedStep>> {
  const { deps, release, signal } = p;
  try {
    const skipBatched = p.obj.spec.upgrade?.skipBatchedMigrationCheck === true;
    const values = withWaitJob(deps.values(p.obj, p.step), p.upgradePass && !skipBatched);
    const clickHouseEnabled = clickHouseEnabledIn(values);
    const render = await deps.release.render(
      {
        version: p.step,
        releaseName: release.name,
        namespace: release.namespace,
        values,
        capabilities: p.capabilities,
      },
      signal,
    );
    // The chart's wait Job never goes through the generic apply (nor prune): created once by the
    // apply stage, it is then read back like the one the operator provides (migrations/).
    const { plan, waitJobs } = splitWaitJobs(planApply(render.objects, release));
    return proceed({ render, plan, waitJobs, clickHouseEnabled });
  } catch (e) {
    if (signal.aborted) throw e;
    return fail("render", reasonOf(e, R.RenderFailed), errorMessage(e), { targetVersion: p.target });
  }
}

/** The preflight's output: the step and its render, the deployed chart's when the step was refused. */
export type Checked = Pick<Chosen, "step" | "upgradePass" | "blocked"> & RenderedStep;

/**
 * An upgrade step is first dry-run (dryRun=All) as its first pass would apply it, the gated
 * workloads paused and the pre-migrations Job, so a step the API server refuses is held here, before
 * a hook of it runs or an object of it changes; the pass goes on with the deployed version.
 * Observe-only runs it too: it stores nothing.
 */
export async function preflight(
  p: PassBase & { capabilities: Capabilities } & Chosen & RenderedStep,
): Promise<GitLabStage<Checked>> {
  const unchanged: Checked = {
    step: p.step,
    upgradePass: p.upgradePass,
    blocked: p.blocked,
    render: p.render,
    plan: p.plan,
    waitJobs: p.waitJobs,
    clickHouseEnabled: p.clickHouseEnabled,
  };
  if (!p.upgradePass) return proceed(unchanged);
  const planned = planPreflight(p.plan.objects);
  if (!planned.objects.length) return proceed(unchanged);
  const checked = await dryRunPreflight(p.deps.client, p.obj, planned.objects, p.signal);
  preflights.inc({ outcome: checked.refused.length ? "refused" : "passed" });
  if (checked.refused.length) {
    const held = holdUpgrade(
      p,
      "preflight",
      R.PreflightFailed,
      `preflight of chart ${p.step} refused: ${checked.refused.map((r) => `${r.object}: ${r.error}`).join("; ")}`,
    );
    if (isStop(held)) return held;
    // The deployed version is what this pass applies now: render it in place of the refused step.
    const again = await renderChart({ ...p, ...held });
    if (again.kind !== "continue") return again;
    return proceed({ step: held.step, upgradePass: false, blocked: held.blocked, ...again.output });
  }
  p.log.info({ chart: p.step, accepted: checked.accepted }, "upgrade preflight passed");
  return proceed(unchanged);
}
