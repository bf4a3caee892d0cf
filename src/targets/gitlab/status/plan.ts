import type { GitLabCorePhase, GitLabCoreStatus } from "../../../apis/gitlabcore.js";
import {
  GitLabCoreCondition as C,
  type GitLabCoreReasonType,
  GitLabCoreReason as R,
} from "../../../apis/gitlabcore-names.js";
import {
  type Condition,
  type ConditionInput,
  findCondition,
  setCondition,
} from "../../../runtime/conditions.js";
import { type MigrationsRetry, retryMessage, retryReason } from "./migrations.js";
import type { MigrationsState } from "./version.js";
import type { Readiness } from "./workloads.js";

export const DriftedCondition = "Drifted";

/** Where a pass stopped before anything was applied, and why. */
export type FailedStage = {
  stage: "version" | "chart" | "render" | "preflight" | "hooks" | "apply";
  reason: GitLabCoreReasonType;
  /** Names fields, kinds and objects; never values. */
  message: string;
};

/** Why the upgrade a pass was asked for cannot go ahead (the deployed version was converged instead). */
export interface UpgradeBlock {
  reason: GitLabCoreReasonType;
  /** Names versions, fields and objects; never values. */
  message: string;
}

export type PassOutcome =
  | {
      /** Written in the middle of a pass, before it waits for hooks; the pass's own outcome follows. */
      kind: "hooks";
      event: string;
      chartVersion: string;
      targetVersion?: string | undefined;
      /** The hooks are an upgrade step's (not an install's, nor a rerun of the deployed chart's). */
      upgrading: boolean;
      hooks: string[];
      /** The run in progress, recorded so later passes (and a restarted operator) continue it. */
      hookRun: NonNullable<GitLabCoreStatus["hookRun"]>;
    }
  | {
      /**
       * The pass applied the release but for Jobs whose old copies are still being deleted (a
       * finalizer holds them): it waits, and the pass their deletion brings creates them.
       */
      kind: "replacing";
      targetVersion?: string | undefined;
      /** An upgrade step's apply (not an install's, nor a repair of the deployed chart). */
      upgrading: boolean;
      chartVersion: string;
      renderedKinds: string[];
      /** "Job ns/name (held by finalizer a, b)", one per Job waited for. */
      objects: string[];
    }
  | {
      kind: "observed";
      /** Undefined when the version could not be resolved (the block says why). */
      targetVersion?: string | undefined;
      blocked?: UpgradeBlock | undefined;
      /** As an applied pass's: the kept target, with spec.version unreadable (a versionRef gone). */
      notice?: UpgradeBlock | undefined;
      chartVersion: string;
      wouldHook: string[];
      wouldApply: string[];
      wouldPrune: string[];
    }
  | ({
      kind: "failed";
      targetVersion?: string;
      renderedKinds?: string[];
      /** The chart version whose hooks completed in this pass before a later stage failed. */
      hooksRanFor?: string;
    } & FailedStage)
  | {
      kind: "applied";
      /** Undefined when the version could not be resolved: the recorded target stays. */
      targetVersion?: string | undefined;
      /** The upgrade was held, and this pass applied the deployed version instead. */
      blocked?: UpgradeBlock | undefined;
      /**
       * The pass converged to a kept target, but spec.version could not be resolved (a versionRef
       * gone): no other version can be taken until it is (Upgradeable=False).
       */
      notice?: UpgradeBlock | undefined;
      /** Chart version applied this pass (an intermediate one while stepping through minors). */
      chartVersion: string;
      gitlabVersion?: string;
      /** The hooks of this chart ran in this pass (or ran before and were not due). */
      hooksRan: boolean;
      renderedKinds: string[];
      workloads: Readiness;
      /** The applied values turn GitLab's ClickHouse integration on; unset keeps the recorded one. */
      clickHouseEnabled?: boolean;
      /** A multi-minor upgrade stopped short of the target: more steps follow. */
      stepping: boolean;
      /** The previous step's migrations Jobs, when an upgrade waits for them. */
      migrations?: MigrationsState;
      /** The gating Job that retries, when migrations is "retrying". */
      migrationsRetry?: MigrationsRetry | undefined;
    };

export interface StatusEvent {
  type: "Normal" | "Warning";
  reason: GitLabCoreReasonType;
  note: string;
}

const WARNING_REASONS = new Set<GitLabCoreReasonType>([
  R.RenderFailed,
  R.HooksFailed,
  R.ApplyFailed,
  R.VersionUnresolved,
  R.ChartPullFailed,
  R.MissingIntermediateChart,
  R.MigrationsJobFailed,
  R.PreflightFailed,
  // Reported by the version logic when a literal version is below the deployed one.
  R.DowngradeRefused,
]);

/** "apply 3: ConfigMap ns/a, ..." with at most 10 names, so the message stays short. */
function listed(what: string, names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const shown = names.slice(0, 10).join(", ");
  return `${what} ${names.length}: ${shown}${names.length > 10 ? ", ..." : ""}`;
}

const cond = (
  type: string,
  ok: boolean,
  reason: GitLabCoreReasonType,
  message: string,
  g?: number,
): ConditionInput<GitLabCoreReasonType> => ({
  type,
  status: ok ? "True" : "False",
  reason,
  message,
  observedGeneration: g,
});

/**
 * The status a pass leads to, and the events that say what changed. Pure: the same inputs give the
 * same status, so a quiet pass finds nothing to write. Events come only from condition changes,
 * never from a pass that changed nothing.
 */
export function planStatus(
  prev: GitLabCoreStatus | undefined,
  generation: number | undefined,
  outcome: PassOutcome,
  now: Date,
  /** What spec.version selects now, when this pass resolved it (status.availableVersion). */
  selected?: string,
): { status: GitLabCoreStatus; events: StatusEvent[] } {
  const g = generation;
  const before = (prev?.conditions ?? []) as Condition[];
  const inputs: ConditionInput<GitLabCoreReasonType>[] = [];
  const status: GitLabCoreStatus = { ...(prev ?? {}) };
  if (selected) status.availableVersion = selected;
  let phase: GitLabCorePhase;

  if (outcome.kind === "hooks") {
    // An interim report. Initialized is the hooks' own record, so it says they run now, for this
    // generation: left as it was, it would keep the last release's "completed" (or a failure's
    // reason) with an older generation for as long as the hooks take. Available and Upgradeable
    // wait for the pass's end, which reads the workloads.
    if (outcome.targetVersion) status.targetVersion = outcome.targetVersion;
    status.hookRun = outcome.hookRun;
    phase = outcome.upgrading ? "Upgrading" : "Preparing";
    const running = `running the ${outcome.event} hooks of chart ${outcome.chartVersion}`;
    const after = outcome.event.startsWith("post-")
      ? "the release's objects are applied and it is complete after them"
      : "the release is applied after them";
    inputs.push(cond(C.Initialized, false, R.HooksRunning, `${running}; ${after}`, g));
    inputs.push(
      cond(C.Progressing, true, R.HooksRunning, `${running}: ${listed("hooks", outcome.hooks)}`, g),
    );
  } else if (outcome.kind === "replacing") {
    // Like hooks: only Progressing says what the pass waits for; the rest stays until a pass ends.
    if (outcome.targetVersion) status.targetVersion = outcome.targetVersion;
    status.renderedKinds = outcome.renderedKinds;
    phase = outcome.upgrading ? "Upgrading" : (prev?.phase ?? "Preparing");
    inputs.push(
      cond(
        C.Progressing,
        true,
        R.JobReplacing,
        `chart ${outcome.chartVersion}: a Job's pod template cannot change, so it is deleted and created again; waiting for the old one to go: ${outcome.objects.join("; ")}`,
        g,
      ),
    );
  } else if (outcome.kind === "observed") {
    // Nothing was applied: only the target and what a real pass would do are reported.
    if (outcome.targetVersion) status.targetVersion = outcome.targetVersion;
    phase = prev?.phase ?? "Preparing";
    if (outcome.blocked) {
      const b = outcome.blocked;
      inputs.push(cond(C.Progressing, false, b.reason, b.message, g));
      inputs.push(cond(C.Upgradeable, false, b.reason, b.message, g));
    } else if (outcome.notice) {
      // Observing decides as a real pass would: the kept target stays, and no other version can be
      // taken while the versionRef cannot be read (GitLab's "Version reference").
      inputs.push(cond(C.Upgradeable, false, outcome.notice.reason, outcome.notice.message, g));
    } else if (outcome.targetVersion) {
      // Stated every pass, so a reason above that no longer holds is not left behind.
      inputs.push(
        cond(
          C.Upgradeable,
          true,
          R.ObserveOnly,
          `spec.version resolves to ${outcome.targetVersion}; observing only, nothing is applied`,
          g,
        ),
      );
    }
    const parts = [
      listed("run hooks", outcome.wouldHook),
      listed("apply", outcome.wouldApply),
      listed("prune", outcome.wouldPrune),
    ].filter((p): p is string => !!p);
    inputs.push(
      parts.length
        ? cond(
            DriftedCondition,
            true,
            R.ObserveOnly,
            `chart ${outcome.chartVersion}: would ${parts.join("; would ")}`,
            g,
          )
        : cond(
            DriftedCondition,
            false,
            R.ObserveOnly,
            `chart ${outcome.chartVersion}: a real pass would change nothing`,
            g,
          ),
    );
  } else if (outcome.kind === "failed") {
    // A failed pass ends the hook run: the next one starts a new run (Helm's rerun of the event).
    delete status.hookRun;
    if (outcome.targetVersion) status.targetVersion = outcome.targetVersion;
    if (outcome.renderedKinds) status.renderedKinds = outcome.renderedKinds;
    phase = "Failed";
    if (outcome.hooksRanFor) {
      status.hooksVersion = outcome.hooksRanFor;
      inputs.push(
        cond(C.Initialized, true, R.ChartRendered, `hooks of chart ${outcome.hooksRanFor} completed`, g),
      );
    }
    // Apply failures are retried without the hooks, so Initialized (the hooks' record) stays as is:
    // the hooks were not due, so it already speaks for this generation. Every other condition is
    // stated for this generation, so none keeps a message of an earlier one (issue 44). An upgrade
    // that is only held never gets here: the pass converged the deployed version instead.
    if (outcome.stage !== "apply")
      inputs.push(cond(C.Initialized, false, outcome.reason, outcome.message, g));
    inputs.push(cond(C.Available, false, outcome.reason, outcome.message, g));
    inputs.push(cond(C.Progressing, false, outcome.reason, outcome.message, g));
    inputs.push(cond(C.Upgradeable, false, outcome.reason, outcome.message, g));
  } else {
    const o = outcome;
    delete status.hookRun;
    if (o.targetVersion) status.targetVersion = o.targetVersion;
    status.version = o.chartVersion;
    if (o.gitlabVersion) status.gitlabVersion = o.gitlabVersion;
    else delete status.gitlabVersion;
    status.renderedKinds = o.renderedKinds;
    if (o.clickHouseEnabled !== undefined) status.clickHouseEnabled = o.clickHouseEnabled;
    if (o.hooksRan) {
      status.hooksVersion = o.chartVersion;
      inputs.push(
        cond(C.Initialized, true, R.ChartRendered, `hooks of chart ${o.chartVersion} completed`, g),
      );
    }
    const notReady = o.workloads.notReady;
    const ready = notReady.length === 0;
    const total = o.workloads.ready.length + notReady.length;
    inputs.push(
      ready
        ? cond(C.Available, true, R.WorkloadsReady, `${total} Deployments and StatefulSets ready`, g)
        : cond(
            C.Available,
            false,
            R.WorkloadsNotReady,
            notReady.map((n) => `${n.object}: ${n.why}`).join("; "),
            g,
          ),
    );
    const waitingMigrations = o.migrations === "running";
    if (o.blocked) {
      // The release runs (and was repaired) at its version; the upgrade asked for cannot start.
      phase = "Failed";
      inputs.push(cond(C.Progressing, false, o.blocked.reason, o.blocked.message, g));
      inputs.push(cond(C.Upgradeable, false, o.blocked.reason, o.blocked.message, g));
    } else if (o.migrations === "failed") {
      phase = "Failed";
      const m = `the migrations Jobs of GitLab ${o.gitlabVersion ?? o.chartVersion} failed; the upgrade to ${o.targetVersion} waits`;
      inputs.push(cond(C.Upgradeable, false, R.MigrationsJobFailed, m, g));
      inputs.push(cond(C.Progressing, false, R.MigrationsJobFailed, m, g));
    } else if (o.migrations === "retrying" && o.migrationsRetry) {
      // Not failed until Failed=True: the step keeps waiting, and says which Job retries and why.
      phase = "Upgrading";
      const r = o.migrationsRetry;
      const m = retryMessage(r);
      inputs.push(cond(C.Progressing, true, retryReason(r), m, g));
      inputs.push(cond(C.Upgradeable, false, retryReason(r), m, g));
    } else if (o.stepping || waitingMigrations) {
      phase = "Upgrading";
      const m = waitingMigrations
        ? `chart ${o.chartVersion} applied; waiting for its batched migrations before the next step to ${o.targetVersion}`
        : `chart ${o.chartVersion} applied on the way to ${o.targetVersion}`;
      inputs.push(cond(C.Progressing, true, waitingMigrations ? R.MigrationsRunning : R.ChartRendered, m, g));
      inputs.push(
        waitingMigrations
          ? cond(C.Upgradeable, false, R.MigrationsRunning, m, g)
          : cond(C.Upgradeable, true, R.ChartRendered, m, g),
      );
    } else {
      phase = ready ? "Running" : "Preparing";
      inputs.push(
        ready
          ? cond(C.Progressing, false, R.UpgradeComplete, `chart ${o.chartVersion} applied and ready`, g)
          : cond(
              C.Progressing,
              true,
              R.WorkloadsNotReady,
              `chart ${o.chartVersion} applied; waiting for workloads`,
              g,
            ),
      );
      inputs.push(cond(C.Upgradeable, true, R.UpgradeComplete, `chart ${o.chartVersion} is the target`, g));
    }
    // The kept target was converged to; what the spec selects cannot be read, so nothing else can
    // be taken: this Upgradeable replaces the one above (never both set in one pass, which would
    // move its transition time, and write the status, on every pass).
    if (o.notice) {
      const at = inputs.findIndex((i) => i.type === C.Upgradeable);
      const notice = cond(C.Upgradeable, false, o.notice.reason, o.notice.message, g);
      if (at >= 0) inputs[at] = notice;
      else inputs.push(notice);
    }
  }
  status.phase = phase;
  status.observedGeneration = g;
  let conditions = before;
  const events: StatusEvent[] = [];
  for (const input of inputs) {
    const old = findCondition(conditions, input.type);
    if (!old || old.status !== input.status || old.reason !== input.reason) {
      // Progressing/Upgradeable repeat what Available and Initialized say; one event per reason change.
      if (!events.some((e) => e.reason === input.reason))
        events.push({
          type: WARNING_REASONS.has(input.reason) ? "Warning" : "Normal",
          reason: input.reason,
          note: `${input.type}: ${input.message}`,
        });
    }
    conditions = setCondition(conditions, input, now);
  }
  status.conditions = conditions;
  return { status, events };
}
