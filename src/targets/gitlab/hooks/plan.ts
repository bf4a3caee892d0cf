import { GitLabCoreCondition } from "../../../apis/gitlabcore-names.js";
import { type Condition, findCondition } from "../../../runtime/conditions.js";
import { excludedReason } from "../apply/plan.js";
import type { RenderedHook } from "../apply/rendered.js";

/** The events whose hooks run before objects are applied; the reconciler runs them once per release. */
export const PRE_APPLY_EVENTS = ["pre-install", "pre-upgrade"] as const;
export type PreApplyEvent = (typeof PRE_APPLY_EVENTS)[number];

/** As Helm: pre-install for a release never applied, pre-upgrade once a chart version was. */
export const hookEventFor = (deployedVersion: string | undefined): PreApplyEvent =>
  deployedVersion ? "pre-upgrade" : "pre-install";

export type DeletePolicy = "before-hook-creation" | "hook-succeeded" | "hook-failed";

export interface PlannedHook {
  hook: RenderedHook;
  /** As Helm: no policy given means before-hook-creation, so a rerun replaces the last run's object. */
  deletePolicies: DeletePolicy[];
}

export interface HookPlan {
  run: PlannedHook[];
  /** Hook objects never created: RBAC and definitions are the administrator's. */
  excluded: RenderedHook[];
}

const KNOWN_POLICIES: readonly string[] = ["before-hook-creation", "hook-succeeded", "hook-failed"];

/**
 * The hooks of one event in the order Helm runs them: by weight, then kind, then name. RBAC and
 * CustomResourceDefinition hooks are left out.
 */
export function planHooks(hooks: readonly RenderedHook[], event: PreApplyEvent): HookPlan {
  const excluded: RenderedHook[] = [];
  const run: PlannedHook[] = [];
  for (const hook of hooks) {
    if (!hook.events.includes(event)) continue;
    if (excludedReason(hook.object)) {
      excluded.push(hook);
      continue;
    }
    const given = hook.deletePolicies.filter((p): p is DeletePolicy => KNOWN_POLICIES.includes(p));
    run.push({ hook, deletePolicies: given.length ? given : ["before-hook-creation"] });
  }
  run.sort(
    (a, b) =>
      a.hook.weight - b.hook.weight ||
      a.hook.object.kind.localeCompare(b.hook.object.kind) ||
      a.hook.object.metadata.name.localeCompare(b.hook.object.metadata.name),
  );
  return { run, excluded };
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
