import { GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { describeObject } from "../apply/objects.js";
import { runHooks } from "../hooks/exec.js";
import { type HookEvent, hookEventFor, hooksDue, planHooks, postHookEventFor } from "../hooks/plan.js";
import { hooksRun } from "../metrics.js";
import { fail, type PassState, type Stage } from "./context.js";

/**
 * The pre hooks, once per release. Helm runs post-install/post-upgrade hooks once the release's
 * objects are applied; a release with some is complete only after them, so they are planned here
 * and run by `postHooks`. Observe-only lists what would run.
 */
export const preHooks: Stage = {
  name: "hooks",
  async run(p) {
    const render = p.render!;
    const deployed = p.status.version;
    p.postHooks = planHooks(render.hooks, postHookEventFor(deployed));
    p.hooksDue = hooksDue(p.status, p.obj.metadata.generation, render.chart.version);
    if (!p.hooksDue) return undefined;
    const plan = planHooks(render.hooks, hookEventFor(deployed));
    if (p.observe) {
      for (const h of [...plan.run, ...p.postHooks.run])
        p.wouldHook.push(`${h.hook.object.kind} ${h.hook.object.metadata.name}`);
      return undefined;
    }
    const failed = await run(p, plan.run, hookEventFor(deployed));
    if (failed) return failed;
    p.hooksRan = true;
    if (plan.excluded.length)
      p.log.info(
        { excluded: plan.excluded.map((h) => `${h.object.kind} ${h.object.metadata.name}`) },
        "RBAC hooks left to the administrator",
      );
    return undefined;
  },
};

/** Post-apply hooks of the same release, in Helm's order, with the same deletion rules. */
export const postHooks: Stage = {
  name: "post-hooks",
  async run(p) {
    if (!p.hooksRan || p.observe || !p.postHooks?.run.length) return undefined;
    return run(p, p.postHooks.run, postHookEventFor(p.status.version), {
      renderedKinds: [...p.recorded!].sort(),
    });
  },
};

async function run(
  p: PassState,
  hooks: ReturnType<typeof planHooks>["run"],
  event: HookEvent,
  extra: { renderedKinds?: string[] } = {},
) {
  // A hook may run for minutes: the status says so before the wait, not after it.
  if (hooks.length)
    await p.progress({
      kind: "hooks",
      event,
      chartVersion: p.render!.chart.version,
      targetVersion: p.target,
      upgrading: p.upgradePass === true,
      hooks: hooks.map((h) => describeObject(inNamespace(h.hook.object, p.release.namespace))),
    });
  const result = await runHooks(p.deps.client, p.obj, hooks, {
    timeoutMs: p.deps.settings.hookTimeoutMs,
    signal: p.signal,
    log: p.log,
  });
  hooksRun.inc(
    { outcome: result.failed ? "failed" : "succeeded" },
    result.ran.length + (result.failed ? 1 : 0),
  );
  if (!result.failed) return undefined;
  return fail(p, "hooks", R.HooksFailed, `hook ${result.failed.hook}: ${result.failed.error}`, {
    targetVersion: p.target,
    ...extra,
  });
}

function inNamespace<T extends { metadata: { namespace?: string } }>(o: T, namespace: string): T {
  return o.metadata.namespace ? o : { ...o, metadata: { ...o.metadata, namespace } };
}
