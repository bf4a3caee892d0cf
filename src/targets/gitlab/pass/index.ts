import type { GitLabCore } from "../../../apis/gitlabcore.js";
import type { GitLabCoreReasonType } from "../../../apis/gitlabcore-names.js";
import type { Logger } from "../../../runtime/log.js";
import { runStages, Stages, type StagesOutcome } from "../../../runtime/stages.js";
import type { AppliedMemory } from "../apply/live.js";
import { HookMemory } from "../hooks/exec.js";
import type { GitLabReconcilerDeps } from "../ports.js";
import type { PassOutcome } from "../status/plan.js";
import { applyRelease } from "./apply.js";
import type { PassBase, Reported } from "./context.js";
import { postHooks, preHooks } from "./hooks.js";
import { pruneAndReport } from "./prune.js";
import { preflight, renderChart } from "./render.js";
import { chooseStep, resolveVersion } from "./version.js";

/**
 * A GitLabCore pass, in order: resolve the version → choose the chart step → render → preflight
 * an upgrade step → pre hooks once per release → apply → post hooks → prune and report. A stage
 * that stops the pass (a failure, a hook run waited for) carries the outcome status reports; a pass
 * that runs them all ends with the last one's. The first four decide the upgrade; when they say
 * no, only the upgrade is held (holdUpgrade) and the rest of the pass applies and repairs the
 * deployed version, so a blocked upgrade never stops repair.
 */
export const GITLAB_STAGES = Stages.over<PassBase, GitLabCoreReasonType, PassOutcome>()
  .stage("version", resolveVersion)
  .stage("step", chooseStep)
  .stage("render", renderChart)
  .stage("preflight", preflight)
  .stage("hooks", preHooks)
  .stage("apply", applyRelease)
  .stage("post-hooks", postHooks)
  .stage("prune", pruneAndReport);

export type GitLabPass = StagesOutcome<Reported, GitLabCoreReasonType, PassOutcome>;

export async function runPass(
  obj: GitLabCore,
  input: {
    deps: GitLabReconcilerDeps;
    applied: AppliedMemory;
    /** Filled with what spec.version selects now, for the status (see PassBase.selected). */
    selected?: { version?: string | undefined };
    /** Kept across passes by the reconciler; a fresh one when not given. */
    hookMemory?: HookMemory;
    now?: () => Date;
    log: Logger;
    signal: AbortSignal;
    /** Writes an interim status (before hooks run); nothing when not given. */
    progress?: (outcome: PassOutcome) => Promise<void>;
  },
): Promise<GitLabPass> {
  const base: PassBase = {
    obj,
    status: obj.status ?? {},
    release: { name: obj.metadata.name ?? "", namespace: obj.metadata.namespace ?? "" },
    log: input.log,
    signal: input.signal,
    observe: input.deps.settings.observeOnly === true,
    deps: input.deps,
    applied: input.applied,
    selected: input.selected ?? {},
    hookMemory: input.hookMemory ?? new HookMemory(),
    now: input.now ?? (() => new Date()),
    progress: input.progress ?? (async () => {}),
  };
  const out = await runStages(GITLAB_STAGES, base, { signal: input.signal });
  return out.kind === "done" ? { kind: "done", context: out.context } : out;
}
