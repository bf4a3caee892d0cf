import type { GitLabCore, GitLabCoreStatus } from "../../../apis/gitlabcore.js";
import { GitLabCoreReason, type GitLabCoreReasonType } from "../../../apis/gitlabcore-names.js";
import type { Logger } from "../../../runtime/log.js";
import type { ApplyReport } from "../apply/exec.js";
import type { AppliedMemory } from "../apply/live.js";
import type { planApply } from "../apply/plan.js";
import type { Rendered } from "../apply/rendered.js";
import type { HookMemory } from "../hooks/exec.js";
import type { planHooks } from "../hooks/plan.js";
import type { Capabilities, GitLabReconcilerDeps } from "../ports.js";
import type { MigrationsRetry } from "../status/migrations.js";
import type { PassOutcome, UpgradeBlock } from "../status/plan.js";
import type { MigrationsState } from "../status/version.js";

/**
 * What a pass ends with: the outcome status reports, and when to look again: the quiet resync, the
 * upgrade's step interval, the runtime's failure backoff (`retry`, counted as an error), or at the
 * latest after `waitMs` while something the pass started runs (a hook Job: its watch wakes the
 * pass sooner).
 */
export interface Pass {
  outcome: PassOutcome;
  next: "resync" | "step" | "retry" | { waitMs: number };
  /** The pass already wrote this outcome as its status (a waiting hook run): nothing more to write. */
  written?: boolean;
}

export type FailedStage = "version" | "chart" | "render" | "preflight" | "hooks" | "apply";

/**
 * One GitLabCore pass as it goes: each stage reads what the earlier ones found and adds its own.
 * Fields are set by the stage named beside them; a later stage may rely on them.
 */
export interface PassState {
  readonly obj: GitLabCore;
  readonly status: GitLabCoreStatus;
  readonly release: { name: string; namespace: string };
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly observe: boolean;
  readonly deps: GitLabReconcilerDeps;
  readonly applied: AppliedMemory;
  /** Writes an interim status while the pass goes on (before it creates the first hook of a run). */
  readonly progress: (outcome: PassOutcome) => Promise<void>;
  /** What this process said of each hook run (logs, metrics once per hook). */
  readonly hookMemory: HookMemory;
  readonly now: () => Date;
  /**
   * version, step, preflight: why the upgrade this pass was asked for cannot go ahead. The pass
   * then converges the deployed version instead (see {@link holdUpgrade}).
   */
  blocked?: UpgradeBlock;
  /** version */
  capabilities?: Capabilities;
  available?: string[];
  target?: string;
  /** step: the chart this pass applies (the target, or the next minor on the way). */
  step?: string;
  migrations?: MigrationsState;
  /** The gating Job that retries, when migrations is "retrying". */
  migrationsRetry?: MigrationsRetry | undefined;
  upgradePass?: boolean;
  /** render */
  render?: Rendered;
  /** The rendered values turn GitLab's ClickHouse integration on (status.clickHouseEnabled). */
  clickHouseEnabled?: boolean;
  plan?: ReturnType<typeof planApply>;
  /** hooks: evaluated once per pass. */
  hooksDue?: boolean;
  hooksRan: boolean;
  wouldHook: string[];
  postHooks?: ReturnType<typeof planHooks>;
  /** apply */
  report?: ApplyReport;
  recorded?: Set<string>;
}

/**
 * The rule for everything that decides an upgrade (version resolution, the upgrade path, the
 * preflight): a decision that says no blocks only the upgrade. A release already deployed is then
 * rendered, applied and repaired at its deployed version by the rest of the pass, and the block is
 * reported; only a resource with nothing deployed yet fails the pass, having nothing to converge.
 */
export function holdUpgrade(
  p: PassState,
  stage: FailedStage,
  reason: GitLabCoreReasonType,
  message: string,
): Pass | undefined {
  const deployed = p.status.version;
  if (!deployed) return fail(p, stage, reason, message, { targetVersion: p.target });
  p.blocked = { reason, message };
  p.step = deployed;
  p.upgradePass = false;
  p.render = undefined;
  p.plan = undefined;
  p.log.info({ deployed, reason, err: message }, "upgrade blocked; converging the deployed version");
  return undefined;
}

/** A stage either lets the pass go on (undefined) or ends it with what it found. */
export interface Stage {
  name: string;
  run(p: PassState): Promise<Pass | undefined>;
}

/** The pass ends failed at `stage`: retried with the runtime's failure backoff. */
export function fail(
  _p: PassState,
  stage: FailedStage,
  reason: GitLabCoreReasonType,
  message: string,
  extra: Partial<Extract<PassOutcome, { kind: "failed" }>> = {},
): Pass {
  return { outcome: { kind: "failed", stage, reason, message, ...extra }, next: "retry" };
}

const KNOWN_REASONS: ReadonlySet<string> = new Set(Object.values(GitLabCoreReason));

/**
 * The reason a release source attached to its error, or the stage's own. Only GitLabCore's reasons
 * are taken: another error's `reason` (a Kubernetes API error's `Forbidden`, say) is not one of ours.
 */
export function reasonOf(e: unknown, fallback: GitLabCoreReasonType): GitLabCoreReasonType {
  const r = (e as { reason?: unknown } | undefined)?.reason;
  return typeof r === "string" && KNOWN_REASONS.has(r) ? (r as GitLabCoreReasonType) : fallback;
}
