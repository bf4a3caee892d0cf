import type { GitLabCoreStatus } from "../../../apis/gitlabcore.js";
import { type GitLabCoreReasonType, GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { proceed, type StageStop, wait } from "../../../runtime/stages.js";
import { describeObject } from "../apply/objects.js";
import type { Rendered } from "../apply/rendered.js";
import { advanceHooks } from "../hooks/exec.js";
import {
  type HookEvent,
  hookEventFor,
  hooksDue,
  type PlannedHook,
  planHooks,
  postHookEventFor,
} from "../hooks/plan.js";
import { hooksRun } from "../metrics.js";
import type { PassOutcome } from "../status/plan.js";
import { type Applied, fail, type GitLabStage, type HooksDone, type PassBase } from "./context.js";

export type HookRun = NonNullable<GitLabCoreStatus["hookRun"]>;

/**
 * The pre hooks, once per release. Helm runs post-install/post-upgrade hooks once the release's
 * objects are applied; a release with some is complete only after them, so they are planned here
 * and run by `postHooks`. Observe-only lists what would run. A run spans passes: while a hook Job
 * runs the pass ends waiting, and the Job's watch brings the next one.
 */
export async function preHooks(p: PassBase & Step & { render: Rendered }): Promise<GitLabStage<HooksDone>> {
  const render = p.render;
  const deployed = p.status.version;
  const postHooks = planHooks(render.hooks, postHookEventFor(deployed));
  const wouldHook: string[] = [];
  if (!hooksDue(p.status, p.obj.metadata.generation, render.chart.version))
    return proceed({ hooksRan: false, wouldHook, postHooks });
  const event = hookEventFor(deployed);
  const plan = planHooks(render.hooks, event);
  if (p.observe) {
    for (const h of [...plan.run, ...postHooks.run])
      wouldHook.push(`${h.hook.object.kind} ${h.hook.object.metadata.name}`);
    return proceed({ hooksRan: false, wouldHook, postHooks });
  }
  // The run already reached the post hooks (a pass that waited for them): the pre hooks are done.
  if (!sameRun(p.status.hookRun, p, postHookEventFor(deployed))) {
    const ended = await run(p, plan.run, event);
    if (ended) return ended;
  }
  if (plan.excluded.length)
    p.log.info(
      { excluded: plan.excluded.map((h) => `${h.object.kind} ${h.object.metadata.name}`) },
      "RBAC hooks left to the administrator",
    );
  return proceed({ hooksRan: true, wouldHook, postHooks });
}

/** Post-apply hooks of the same release, in Helm's order, with the same deletion rules. */
export async function postHooks(
  p: PassBase & Step & { render: Rendered } & HooksDone & Applied,
): Promise<GitLabStage<object>> {
  if (!p.hooksRan || p.observe || !p.postHooks.run.length) return proceed();
  const ended = await run(p, p.postHooks.run, postHookEventFor(p.status.version), {
    renderedKinds: [...p.recorded].sort(),
  });
  return ended ?? proceed();
}

/** What a hook run reads of the pass besides its base. */
type Step = { target: string | undefined; upgradePass: boolean };

/** Whether the recorded run is this release's run of `event` for this chart and generation. */
function sameRun(r: HookRun | undefined, p: PassBase & { render: Rendered }, event: HookEvent): r is HookRun {
  return (
    r !== undefined &&
    r.event === event &&
    r.chartVersion === p.render.chart.version &&
    r.generation === (p.obj.metadata.generation ?? 0)
  );
}

/**
 * One look at an event's hooks. A new run gets an id, written to status (with HooksRunning) before
 * its first hook is created, so a restarted operator finds the hooks it created by that id instead
 * of creating them again. Ends the pass while a hook runs (waiting) or when one failed.
 */
async function run(
  p: PassBase & Step & { render: Rendered },
  hooks: readonly PlannedHook[],
  event: HookEvent,
  extra: { renderedKinds?: string[] } = {},
): Promise<StageStop<GitLabCoreReasonType, PassOutcome> | undefined> {
  if (!hooks.length) return undefined;
  const generation = p.obj.metadata.generation ?? 0;
  const recorded = p.status.hookRun;
  const hookRun: HookRun = sameRun(recorded, p, event)
    ? recorded
    : {
        id: `${generation}-${p.now().getTime().toString(36)}`,
        event,
        chartVersion: p.render.chart.version,
        generation,
      };
  const waiting: PassOutcome = {
    kind: "hooks",
    event,
    chartVersion: p.render.chart.version,
    targetVersion: p.target,
    upgrading: p.upgradePass === true,
    hooks: hooks.map((h) => describeObject(inNamespace(h.hook.object, p.release.namespace))),
    hookRun,
  };
  // A hook may run for minutes: the status says so before the first hook exists (unchanged on
  // later passes of the run, so nothing is written then).
  await p.progress(waiting);
  const progress = await advanceHooks(p.deps.client, p.obj, hooks, {
    runId: hookRun.id,
    release: `${p.release.namespace}/${p.release.name}`,
    timeoutMs: p.deps.settings.hookTimeoutMs,
    pollMs: p.deps.settings.stepRequeueMs,
    live: p.deps.live,
    memory: p.hookMemory,
    now: p.now,
    signal: p.signal,
    log: p.log,
  });
  if (progress.completed.length) hooksRun.inc({ outcome: "succeeded" }, progress.completed.length);
  switch (progress.kind) {
    case "done":
      return undefined;
    case "waiting":
      return wait(R.HooksRunning, `hooks of ${event} run`, { afterMs: progress.afterMs, detail: waiting });
    case "failed":
      hooksRun.inc({ outcome: "failed" });
      return fail("hooks", R.HooksFailed, `hook ${progress.hook}: ${progress.error}`, {
        targetVersion: p.target,
        ...extra,
      });
  }
}

function inNamespace<T extends { metadata: { namespace?: string } }>(o: T, namespace: string): T {
  return o.metadata.namespace ? o : { ...o, metadata: { ...o.metadata, namespace } };
}
