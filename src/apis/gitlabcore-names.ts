/**
 * GitLabCore's names and the constants the reconciler uses, without the schema: the gitlab target's
 * run path imports these, and so never loads TypeBox, which only the CRD builder and offline
 * validation need (gitlabcore.ts re-exports everything here).
 */
import { reasonTable } from "./reason.js";

export const GitLabCoreGroup = "apps.gitlab.com";
export const GitLabCoreVersion = "v2alpha1";
export const GitLabCoreApiVersion = `${GitLabCoreGroup}/${GitLabCoreVersion}` as const;
export const GitLabCoreKind = "GitLabCore";
export const GitLabCorePlural = "gitlabcores";

export const GitLabCoreFinalizer = "gitlabcore.apps.gitlab.com/finalizer";
export const GitLabReleaseNameLabel = "operator.gitlab.com/release-name";
export const GitLabReleaseNamespaceLabel = "operator.gitlab.com/release-namespace";
/**
 * On every hook object the operator creates: the id of the hook run (status.hookRun.id) it belongs
 * to. A later pass tells this run's Job from a previous run's by it, without any memory.
 */
export const GitLabHookRunAnnotation = "operator.gitlab.com/hook-run";
/**
 * A ConfigMap or Secret the operator may read (valuesFrom, versionRef) carries this label set to
 * "true"; its informers select on it, so an unlabelled object is never seen and counts as missing.
 */
export const GitLabConfigSourceLabel = "operator.gitlab.com/config-source";
export const ValuesFromKinds = ["ConfigMap", "Secret"] as const;
export const DefaultValuesKey = "values.yaml";

export const GitLabCoreCondition = {
  Initialized: "Initialized",
  Available: "Available",
  Progressing: "Progressing",
  Upgradeable: "Upgradeable",
} as const;
export type GitLabCoreConditionType = (typeof GitLabCoreCondition)[keyof typeof GitLabCoreCondition];

export const GitLabCoreReason = reasonTable<typeof GitLabCoreKind>()({
  ChartRendered: "ChartRendered",
  RenderFailed: "RenderFailed",
  HooksFailed: "HooksFailed",
  ApplyFailed: "ApplyFailed",
  WorkloadsReady: "WorkloadsReady",
  WorkloadsNotReady: "WorkloadsNotReady",
  VersionUnresolved: "VersionUnresolved",
  // Not in the upstream list: a Static version (or a stale index) below the deployed chart. Named
  // apart from VersionUnresolved because the version did resolve; it is the move that is refused.
  DowngradeRefused: "DowngradeRefused",
  ChartPullFailed: "ChartPullFailed",
  MissingIntermediateChart: "MissingIntermediateChart",
  MigrationsJobFailed: "MigrationsJobFailed",
  // Not upstream's name: the dry run of an upgrade step's first pass (spec 001, Preflight) was
  // refused by the API server, so the step was not started.
  PreflightFailed: "PreflightFailed",
  // A required spec.chart.valuesFrom entry is missing (or unlabelled), or holds no map of values.
  ValuesReferenceNotFound: "ValuesReferenceNotFound",
  ValuesReferenceInvalid: "ValuesReferenceInvalid",
  // A Job an upgrade step gates on failed an attempt and retries (not Failed=True yet): the
  // pre-deployment migrations, the migrations (post-deployment included), the batched background
  // migrations wait.
  RetryingPreMigrations: "RetryingPreMigrations",
  RetryingPostMigrations: "RetryingPostMigrations",
  RetryingBatchedMigrationsCheck: "RetryingBatchedMigrationsCheck",
  UpgradeComplete: "UpgradeComplete",
  CleanupFailed: "CleanupFailed",
  // Beyond the upstream reasons: an upgrade step waits for the previous version's batched migrations.
  MigrationsRunning: "MigrationsRunning",
  // Not an upstream reason: a pass is waiting for hooks, reported before the wait.
  HooksRunning: "HooksRunning",
  // Not an upstream reason: a Job whose pod template changed was deleted to be created again, and a
  // finalizer still holds the old one; the pass waits for its deletion.
  JobReplacing: "JobReplacing",
  // Observe-only mode: the Drifted condition says what a real pass would change.
  ObserveOnly: "ObserveOnly",
});
export type GitLabCoreReasonType = (typeof GitLabCoreReason)[keyof typeof GitLabCoreReason];

export const VersionTypes = ["Static", "Patch", "Latest", "Previous", "OldestSupported"] as const;
export type GitLabVersionType = (typeof VersionTypes)[number];

export const GitLabCorePhases = ["Preparing", "Upgrading", "Running", "Failed"] as const;
export type GitLabCorePhase = (typeof GitLabCorePhases)[number];

export const Editions = ["ce", "ee"] as const;
export type GitLabEdition = (typeof Editions)[number];

/** The controller and the field managers that write GitLabCore objects and their release. */
export const GitLabCoreManagers = {
  controller: "gitlabcore",
  fieldManager: "gitlabcore-controller",
} as const;
