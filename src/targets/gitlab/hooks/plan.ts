import { GitLabCoreCondition } from "../../../apis/gitlabcore-names.js";
import { type Condition, findCondition } from "../../../runtime/conditions.js";
import { excludedReason } from "../apply/plan.js";
import type { RenderedHook } from "../apply/rendered.js";
import { compareHooks } from "../render/manifests.js";

/** The events whose hooks run before objects are applied; the reconciler runs them once per release. */
export const PRE_APPLY_EVENTS = ["pre-install", "pre-upgrade"] as const;
export type PreApplyEvent = (typeof PRE_APPLY_EVENTS)[number];
/** The events whose hooks run once the release's objects are applied, as `helm install` runs them. */
export type PostApplyEvent = "post-install" | "post-upgrade";
export type HookEvent = PreApplyEvent | PostApplyEvent;

/** As Helm: pre-install for a release never applied, pre-upgrade once a chart version was. */
export const hookEventFor = (deployedVersion: string | undefined): PreApplyEvent =>
  deployedVersion ? "pre-upgrade" : "pre-install";

/** The event after the apply of the same release: post-install, or post-upgrade once a version was deployed. */
export const postHookEventFor = (deployedVersion: string | undefined): PostApplyEvent =>
  deployedVersion ? "post-upgrade" : "post-install";

export type DeletePolicy = "before-hook-creation" | "hook-succeeded" | "hook-failed";

export interface PlannedHook {
  hook: RenderedHook;
  /**
   * The declared policies, as Helm keeps them (unknown values too: they match nothing). None
   * declared means before-hook-creation (Helm's execHook sets it), so a rerun replaces the last
   * run's object.
   */
  deletePolicies: string[];
}

export interface HookPlan {
  run: PlannedHook[];
  /** Hook objects never created: RBAC and definitions are the administrator's. */
  excluded: RenderedHook[];
}

/**
 * The hooks of one event in the order Helm runs them. RBAC and CustomResourceDefinition hooks are
 * left out. `test` hooks belong to `helm test` only and never match an install or upgrade event.
 */
export function planHooks(hooks: readonly RenderedHook[], event: HookEvent): HookPlan {
  const excluded: RenderedHook[] = [];
  const run: PlannedHook[] = [];
  for (const hook of [...hooks].sort(compareHooks)) {
    if (!hook.events.includes(event)) continue;
    if (excludedReason(hook.object)) {
      excluded.push(hook);
      continue;
    }
    const declared = hook.deletePolicies;
    run.push({ hook, deletePolicies: declared.length ? [...declared] : ["before-hook-creation"] });
  }
  return { run, excluded };
}

export const hasPolicy = (h: PlannedHook, policy: DeletePolicy): boolean => h.deletePolicies.includes(policy);

/**
 * What to delete once hook `failedAt` failed, as Helm does: that hook if it says hook-failed, then
 * the hooks before it (all succeeded) that say hook-succeeded. Hooks after it never ran.
 */
export function deletionsAfterFailure(run: readonly PlannedHook[], failedAt: number): PlannedHook[] {
  const failed = run[failedAt];
  const out: PlannedHook[] = failed && hasPolicy(failed, "hook-failed") ? [failed] : [];
  for (const h of run.slice(0, failedAt)) if (hasPolicy(h, "hook-succeeded")) out.push(h);
  return out;
}

/**
 * What to delete once every hook of the event succeeded: the hook-succeeded ones, last first (Helm
 * walks the list backwards). Nothing is deleted while any hook of the event is still to run, so a
 * ConfigMap hook a later Job mounts stays until that Job is done.
 */
export function deletionsAfterSuccess(run: readonly PlannedHook[]): PlannedHook[] {
  return run.filter((h) => hasPolicy(h, "hook-succeeded")).reverse();
}

/**
 * Whether this release's hooks must run: not when Initialized is True for this generation and
 * status.hooksVersion is this chart version. A new generation, a new chart version, or a failed pass
 * (Initialized False) runs them again.
 */
export function hooksDue(
  status: { conditions?: readonly Condition[]; hooksVersion?: string } | undefined,
  generation: number | undefined,
  chartVersion: string,
): boolean {
  const init = findCondition(status?.conditions, GitLabCoreCondition.Initialized);
  return !(
    init?.status === "True" &&
    init.observedGeneration === generation &&
    status?.hooksVersion === chartVersion
  );
}
