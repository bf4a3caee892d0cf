import type { GitLabCore, GitLabCoreStatus } from "../../../apis/gitlabcore.js";
import { GitLabCoreReason, type GitLabCoreReasonType } from "../../../apis/gitlabcore-names.js";
import type { Logger } from "../../../runtime/log.js";
import { type StageFail, type StageResult, fail as stageFail } from "../../../runtime/stages.js";
import type { ApplyReport } from "../apply/exec.js";
import type { AppliedMemory } from "../apply/live.js";
import type { ApplyPlan } from "../apply/plan.js";
import type { Rendered, RenderedObject } from "../apply/rendered.js";
import type { HookMemory } from "../hooks/exec.js";
import type { HookPlan } from "../hooks/plan.js";
import type { Capabilities, GitLabReconcilerDeps } from "../ports.js";
import type { MigrationsRetry } from "../status/migrations.js";
import type { PassOutcome, UpgradeBlock } from "../status/plan.js";
import type { MigrationsState } from "../status/version.js";

/**
 * A stage's result: its output goes on to the later stages; a stop carries the outcome status
 * reports (a failure, a hook run waited for).
 */
export type GitLabStage<O> = StageResult<GitLabCoreReasonType, PassOutcome, O>;

export type FailedStage = "version" | "chart" | "render" | "preflight" | "hooks" | "apply";

/** What every stage reads: the object, the reconciler's dependencies and memories. */
export interface PassBase {
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
  /**
   * What spec.version selects now (status.availableVersion), filled by the version stage when it
   * resolves; the status of every outcome reports it, a failed pass's included.
   */
  readonly selected: { version?: string | undefined };
  /** What this process said of each hook run (logs, metrics once per hook). */
  readonly hookMemory: HookMemory;
  readonly now: () => Date;
}

/**
 * The version stage's output. Either the target resolved (with the chart versions there are), or
 * the upgrade is held (`blocked`) and the deployed version is the one this pass applies.
 */
export type Resolved = { capabilities: Capabilities } & (
  | {
      blocked: undefined;
      target: string;
      available: string[];
      /** The upgrade goes on to a kept target, but no other version can be taken: Upgradeable says why. */
      notice?: UpgradeBlock | undefined;
    }
  | Held
);

/** An upgrade held by a decision that said no: the deployed chart is applied instead. */
export interface Held {
  blocked: UpgradeBlock;
  /** The deployed chart: this pass's step. */
  step: string;
  upgradePass: false;
  target: string | undefined;
  available?: string[] | undefined;
}

/** The step stage's output: the chart this pass applies, and the state of the previous step's Jobs. */
export interface Chosen {
  /** The chart this pass applies (the target, or the next minor on the way, or the deployed one). */
  step: string;
  upgradePass: boolean;
  blocked: UpgradeBlock | undefined;
  target: string | undefined;
  migrations?: MigrationsState | undefined;
  /** The gating Job that retries, when migrations is "retrying". */
  migrationsRetry?: MigrationsRetry | undefined;
}

/** The render stage's output. */
export interface RenderedStep {
  render: Rendered;
  plan: ApplyPlan;
  /** The chart's batched background migrations wait Jobs (upgrade steps only), kept out of `plan`. */
  waitJobs: RenderedObject[];
  /** The rendered values turn GitLab's ClickHouse integration on (status.clickHouseEnabled). */
  clickHouseEnabled: boolean;
}

/** The pre-hooks stage's output. */
export interface HooksDone {
  /** The hooks of this chart ran in this pass (or ran before and were not due). */
  hooksRan: boolean;
  /** Observe-only: the hooks a real pass would run. */
  wouldHook: string[];
  postHooks: HookPlan;
}

/** The apply stage's output. */
export interface Applied {
  report: ApplyReport;
  /** Kinds the release has ever rendered and the cluster serves (what prune looks through). */
  recorded: Set<string>;
}

/** The end of a pass that ran every stage: what status reports, and whether an upgrade steps on. */
export interface Reported {
  outcome: PassOutcome;
  /** "step": look again after the upgrade's step interval; "resync": the quiet resync. */
  next: "step" | "resync";
}

/**
 * The rule for everything that decides an upgrade (version resolution, the upgrade path, the
 * preflight): a decision that says no blocks only the upgrade. A release already deployed is then
 * rendered, applied and repaired at its deployed version by the rest of the pass, and the block is
 * reported; only a resource with nothing deployed yet fails the pass, having nothing to converge.
 */
export function holdUpgrade(
  p: PassBase & { target?: string | undefined },
  stage: FailedStage,
  reason: GitLabCoreReasonType,
  message: string,
): Held | StageFail<GitLabCoreReasonType, PassOutcome> {
  const deployed = p.status.version;
  if (!deployed) return fail(stage, reason, message, { targetVersion: p.target });
  p.log.info({ deployed, reason, err: message }, "upgrade blocked; converging the deployed version");
  return { blocked: { reason, message }, step: deployed, upgradePass: false, target: p.target };
}

export const isStop = <T extends object>(
  x: T | StageFail<GitLabCoreReasonType, PassOutcome>,
): x is StageFail<GitLabCoreReasonType, PassOutcome> => "kind" in x && x.kind === "fail";

/** The pass ends failed at `stage`: retried with the runtime's failure backoff. */
export function fail(
  stage: FailedStage,
  reason: GitLabCoreReasonType,
  message: string,
  extra: Partial<Extract<PassOutcome, { kind: "failed" }>> = {},
): StageFail<GitLabCoreReasonType, PassOutcome> {
  return stageFail(reason, message, {
    message,
    detail: { kind: "failed", stage, reason, message, ...extra },
  });
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
