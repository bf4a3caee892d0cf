import type { GitLabCore } from "../../../apis/gitlabcore.js";
import type { Logger } from "../../../runtime/log.js";
import type { AppliedMemory } from "../apply/live.js";
import { HookMemory } from "../hooks/exec.js";
import type { GitLabReconcilerDeps } from "../ports.js";
import type { PassOutcome } from "../status/plan.js";
import { applyRelease } from "./apply.js";
import type { Pass, PassState, Stage } from "./context.js";
import { postHooks, preHooks } from "./hooks.js";
import { pruneAndReport } from "./prune.js";
import { preflight, renderChart } from "./render.js";
import { chooseStep, resolveVersion } from "./version.js";

export type { Pass } from "./context.js";

/**
 * A GitLabCore pass, in order: resolve the version → choose the chart step → render → preflight
 * an upgrade step → pre hooks once per release → apply → post hooks → prune and report. The first
 * stage that ends the pass (a failure, or the last one) gives its outcome. The first four decide
 * the upgrade; when they say no, only the upgrade is held (holdUpgrade) and the rest of the pass
 * applies and repairs the deployed version, so a blocked upgrade never stops repair.
 */
export const GITLAB_STAGES: readonly Stage[] = [
  resolveVersion,
  chooseStep,
  renderChart,
  preflight,
  preHooks,
  applyRelease,
  postHooks,
  pruneAndReport,
];

export async function runPass(
  obj: GitLabCore,
  input: {
    deps: GitLabReconcilerDeps;
    applied: AppliedMemory;
    /** Kept across passes by the reconciler; a fresh one when not given. */
    hookMemory?: HookMemory;
    now?: () => Date;
    log: Logger;
    signal: AbortSignal;
    /** Writes an interim status (before hooks run); nothing when not given. */
    progress?: (outcome: PassOutcome) => Promise<void>;
  },
  stages: readonly Stage[] = GITLAB_STAGES,
): Promise<Pass> {
  const p: PassState = {
    obj,
    status: obj.status ?? {},
    release: { name: obj.metadata.name!, namespace: obj.metadata.namespace! },
    log: input.log,
    signal: input.signal,
    observe: input.deps.settings.observeOnly === true,
    deps: input.deps,
    applied: input.applied,
    hookMemory: input.hookMemory ?? new HookMemory(),
    now: input.now ?? (() => new Date()),
    progress: input.progress ?? (async () => {}),
    hooksRan: false,
    wouldHook: [],
  };
  for (const stage of stages) {
    const ended = await stage.run(p);
    if (ended) return ended;
  }
  throw new Error(`gitlab pass: the last stage (${stages.at(-1)?.name}) must end the pass`);
}
