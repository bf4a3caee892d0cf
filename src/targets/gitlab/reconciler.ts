import type { GitLabCore, GitLabCoreStatus, GitLabVersion } from "../../apis/gitlabcore.js";
import { GitLabCoreFinalizer, GitLabCoreReason as R } from "../../apis/gitlabcore-names.js";
import { JOB } from "../../runtime/builtin-types.js";
import type { KubeClient } from "../../runtime/client.js";
import {
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
  retry,
} from "../../runtime/controller.js";
import { errorMessage, isNotFound } from "../../runtime/errors.js";
import type { EventRecorder } from "../../runtime/events.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../runtime/finalizers.js";
import type { Informer } from "../../runtime/informer.js";
import type { Logger } from "../../runtime/log.js";
import { StatusWriter } from "../../runtime/status.js";
import type { KubeObject, ResourceType } from "../../runtime/types.js";
import { applyPlanned } from "./apply/exec.js";
import { AppliedMemory, type LiveObjects } from "./apply/live.js";
import { FIELD_MANAGER, planApply, releaseSelector } from "./apply/plan.js";
import type { Rendered } from "./apply/rendered.js";
import { cleanUpRelease } from "./deletion/index.js";
import { runHooks } from "./hooks/exec.js";
import { hookEventFor, hooksDue, planHooks, postHookEventFor } from "./hooks/plan.js";
import { applyWrites, hooksRun, passSeconds, preflights, pruned } from "./metrics.js";
import { dryRunPreflight } from "./preflight/exec.js";
import { planPreflight } from "./preflight/plan.js";
import { prunable, pruneRelease } from "./prune/index.js";
import { type PassOutcome, planStatus } from "./status/plan.js";
import {
  gitlabVersionOf,
  type MigrationsState,
  migrationsState,
  TARGET_VERSION_LABEL,
} from "./status/version.js";
import { workloadReadiness } from "./status/workloads.js";

/** What the cluster serves, as Helm's --kube-version and --api-versions want it. */
export interface Capabilities {
  kubeVersion: string;
  apiVersions: string[];
}

/** Thrown by a release source to say which reason a failure reports (ChartPullFailed, RenderFailed). */
export interface ReasonedError extends Error {
  reason?: string;
}

/** Where charts come from and how they are rendered: the renderer's side, injected. */
export interface ReleaseSource {
  capabilities(signal?: AbortSignal): Promise<Capabilities>;
  /** Chart versions that can be rendered: the charts directory or the repository index. */
  versions(signal?: AbortSignal): Promise<string[]>;
  /** Renders one chart version; the same inputs are answered from the render cache. */
  render(
    req: {
      version: string;
      releaseName: string;
      namespace: string;
      values: unknown;
      capabilities: Capabilities;
    },
    signal?: AbortSignal,
  ): Promise<Rendered>;
}

export type Resolution = { version: string } | { error: string; reason: string };
export type UpgradePath = { steps: string[] } | { error: string; reason: string };

/** Version resolution, pure; injected so the reconciler does not depend on how it is decided. */
export interface VersionPolicy {
  resolve(input: {
    spec: GitLabVersion;
    available: string[];
    deployed?: string;
    versionRefValue?: string;
  }): Resolution;
  /** The chart versions to apply in turn from `from` to `to`, one minor at a time, ending with `to`. */
  path(from: string, to: string, available: string[]): UpgradePath;
}

export interface GitLabTargetSettings {
  /** Quiet resync after a successful pass (30 s). */
  requeueMs: number;
  /** While an upgrade steps through minors or waits for migrations. */
  stepRequeueMs: number;
  /** The longest one hook Job may run. */
  hookTimeoutMs: number;
  /** Decide everything, write nothing to the release; the Drifted condition says what would change. */
  observeOnly?: boolean;
}

export interface GitLabReconcilerDeps {
  type: ResourceType;
  client: KubeClient;
  informer: Informer<GitLabCore>;
  configMaps: Informer<KubeObject>;
  events: EventRecorder;
  release: ReleaseSource;
  versions: VersionPolicy;
  /** Effective chart values for a resource and the chart version about to be rendered. */
  values: (gl: GitLabCore, chartVersion: string) => unknown;
  settings: GitLabTargetSettings;
  /**
   * Informers of the release's objects (a quiet pass then compares against them and asks the API
   * nothing); without them each object is read and the inventory listed on every pass.
   */
  live?: LiveObjects;
  now?: () => Date;
}

/** A type that follows the repository retries a failed resolution this often. */
const TRACKING_RETRY_MS = 600_000;

interface Pass {
  outcome: PassOutcome;
  next: "resync" | "step" | "retry" | "tracking-retry";
}

/**
 * One GitLabCore: resolve the version, render, run the hooks once per release, apply every object,
 * report readiness, prune what the render dropped. A pass over unchanged inputs writes nothing.
 */
export class GitLabCoreReconciler {
  private readonly statuses: StatusWriter<GitLabCoreStatus>;
  private readonly applied = new AppliedMemory();
  private readonly now: () => Date;

  constructor(private readonly d: GitLabReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.statuses = new StatusWriter<GitLabCoreStatus>({
      client: d.client,
      type: d.type,
      fieldManager: FIELD_MANAGER,
    });
    d.informer.addHandler({ delete: (o) => this.forget(`${o.metadata.namespace}/${o.metadata.name}`) });
  }

  readonly reconcile = async (key: string, ctx: ReconcileContext): Promise<ReconcileResult> => {
    const cached = this.d.informer.get(key);
    if (!cached) {
      this.forget(key);
      return undefined;
    }
    let obj = this.statuses.freshest(key, cached);
    const observe = this.d.settings.observeOnly === true;
    if (obj.metadata.deletionTimestamp) {
      if (!observe) await this.finalize(obj, ctx.log, ctx.signal);
      return undefined;
    }
    if (!observe && !hasFinalizer(obj, GitLabCoreFinalizer)) {
      const patched = await addFinalizer(this.d.client, this.d.type, obj, GitLabCoreFinalizer, ctx.signal);
      obj = { ...obj, metadata: { ...obj.metadata, ...patched.metadata } };
    }
    const started = performance.now();
    const pass = await this.converge(obj, ctx.log, ctx.signal);
    passSeconds.observe({ outcome: pass.outcome.kind }, (performance.now() - started) / 1000);
    await this.writeStatus(obj, pass.outcome, ctx.log, ctx.signal);
    return this.next(pass);
  };

  /** A failed pass backs off in the runtime (5 s doubling to 5 minutes), counted as an error. */
  private next(pass: Pass): ReconcileResult {
    switch (pass.next) {
      case "resync":
        return requeueAfter(this.d.settings.requeueMs);
      case "step":
        return requeueAfter(this.d.settings.stepRequeueMs);
      case "tracking-retry":
        return requeueAfter(TRACKING_RETRY_MS);
      case "retry":
        return retry(pass.outcome.kind === "failed" ? pass.outcome.reason : pass.outcome.kind);
    }
  }

  private async converge(obj: GitLabCore, log: Logger, signal: AbortSignal): Promise<Pass> {
    const spec = obj.spec;
    const status = obj.status ?? {};
    const release = { name: obj.metadata.name!, namespace: obj.metadata.namespace! };
    const fail = (
      stage: "version" | "chart" | "render" | "preflight" | "hooks" | "apply",
      reason: string,
      message: string,
      extra: Partial<Extract<PassOutcome, { kind: "failed" }>> = {},
    ): Pass => ({
      outcome: { kind: "failed", stage, reason, message, ...extra },
      next: stage === "version" && spec.version.type !== "Static" ? "tracking-retry" : "retry",
    });

    // 1. Capabilities: a discovery failure is transient and retried with backoff (thrown).
    const capabilities = await this.d.release.capabilities(signal);

    // 2. The target version.
    let available: string[];
    try {
      available = await this.d.release.versions(signal);
    } catch (e) {
      return fail("chart", reasonOf(e, R.ChartPullFailed), errorMessage(e));
    }
    let versionRefValue: string | undefined;
    const ref = spec.version.versionRef;
    if (ref) {
      const cm = this.d.configMaps.get(`${release.namespace}/${ref.name}`);
      const data = (cm as { data?: Record<string, string> } | undefined)?.data;
      if (!cm)
        return fail(
          "version",
          R.VersionUnresolved,
          `spec.version.versionRef: ConfigMap ${ref.name} not found`,
        );
      if (typeof data?.[ref.key] !== "string")
        return fail(
          "version",
          R.VersionUnresolved,
          `spec.version.versionRef: ConfigMap ${ref.name} has no key ${ref.key}`,
        );
      versionRefValue = data[ref.key];
    }
    const resolved = this.d.versions.resolve({
      spec: spec.version,
      available,
      deployed: status.version,
      versionRefValue,
    });
    if ("error" in resolved) return fail("version", resolved.reason, resolved.error);
    const target = resolved.version;

    // 3. Which chart this pass applies: the target, or the next minor on the way to it.
    const deployed = status.version;
    let step = target;
    let migrations: MigrationsState | undefined;
    if (deployed && deployed !== target) {
      if (!spec.upgrade?.skipBatchedMigrationCheck && status.gitlabVersion)
        migrations = await this.migrationsOf(release, status.gitlabVersion, signal);
      if (migrations === "running" || migrations === "failed") step = deployed;
      else {
        const path = this.d.versions.path(deployed, target, available);
        if ("error" in path) return fail("version", path.reason, path.error, { targetVersion: target });
        step = path.steps[0] ?? target;
      }
      log.info({ deployed, target, migrations: migrations ?? "not checked", next: step }, "upgrade step");
    }
    const upgradePass = deployed !== undefined && step !== deployed;

    // 4. Render.
    let render: Rendered;
    try {
      const values = this.d.values(obj, step);
      render = await this.d.release.render(
        { version: step, releaseName: release.name, namespace: release.namespace, values, capabilities },
        signal,
      );
    } catch (e) {
      if (signal.aborted) throw e;
      return fail("render", reasonOf(e, R.RenderFailed), errorMessage(e), { targetVersion: target });
    }

    // 5. Preflight: an upgrade step is first dry-run (dryRun=All) as its first pass would apply it,
    // the gated workloads paused and the pre-migrations Job, so a step the API server refuses fails
    // here, before a hook runs or an object changes. Observe-only runs it too: it stores nothing.
    const plan = planApply(render.objects, release);
    if (upgradePass) {
      const preflight = planPreflight(plan.objects);
      if (preflight.objects.length) {
        const checked = await dryRunPreflight(this.d.client, obj, preflight.objects, signal);
        preflights.inc({ outcome: checked.refused.length ? "refused" : "passed" });
        if (checked.refused.length)
          return fail(
            "preflight",
            R.PreflightFailed,
            `preflight of chart ${step} refused: ${checked.refused.map((r) => `${r.object}: ${r.error}`).join("; ")}`,
            { targetVersion: target },
          );
        log.info({ chart: step, accepted: checked.accepted }, "upgrade preflight passed");
      }
    }

    // 6. Hooks, once per release.
    const observe = this.d.settings.observeOnly === true;
    let hooksRan = false;
    const wouldHook: string[] = [];
    // Helm runs post-install/post-upgrade hooks once the release's objects are applied; a release
    // with some is complete only after them, so an apply that fails before them retries it whole.
    const postHooks = planHooks(render.hooks, postHookEventFor(deployed));
    if (observe && hooksDue(status, obj.metadata.generation, render.chart.version)) {
      for (const p of [...planHooks(render.hooks, hookEventFor(deployed)).run, ...postHooks.run])
        wouldHook.push(`${p.hook.object.kind} ${p.hook.object.metadata.name}`);
    } else if (hooksDue(status, obj.metadata.generation, render.chart.version)) {
      const plan = planHooks(render.hooks, hookEventFor(deployed));
      const run = await runHooks(this.d.client, obj, plan.run, {
        timeoutMs: this.d.settings.hookTimeoutMs,
        signal,
        log,
      });
      hooksRun.inc({ outcome: run.failed ? "failed" : "succeeded" }, run.ran.length + (run.failed ? 1 : 0));
      if (run.failed)
        return fail("hooks", R.HooksFailed, `hook ${run.failed.hook}: ${run.failed.error}`, {
          targetVersion: target,
        });
      hooksRan = true;
      if (plan.excluded.length)
        log.info(
          { excluded: plan.excluded.map((h) => `${h.object.kind} ${h.object.metadata.name}`) },
          "RBAC hooks left to the administrator",
        );
    }

    // 7. Apply.
    const report = await applyPlanned(this.d.client, obj, plan.objects, {
      signal,
      dryRun: observe,
      live: this.d.live,
      memory: this.applied,
      memoryKey: `${release.namespace}/${release.name}`,
    });
    applyWrites.inc(report.applied.length);
    const recorded = new Set([...(status.renderedKinds ?? []), ...report.servedKinds]);
    if (report.unserved.length || report.failed.length) {
      const parts = [
        ...report.unserved.map((k) => `kind ${k} is not served by the cluster`),
        ...report.failed.map((f) => `${f.object}: ${f.error}`),
      ];
      return fail("apply", R.ApplyFailed, parts.join("; "), {
        targetVersion: target,
        renderedKinds: [...recorded].sort(),
        hooksRanFor: hooksRan && postHooks.run.length === 0 ? render.chart.version : undefined,
      });
    }
    if (report.applied.length)
      log.info({ applied: report.applied.length, chart: step }, "applied the release");

    // 7b. Post-apply hooks of the same release, in Helm's order, with the same deletion rules.
    if (hooksRan && !observe && postHooks.run.length) {
      const run = await runHooks(this.d.client, obj, postHooks.run, {
        timeoutMs: this.d.settings.hookTimeoutMs,
        signal,
        log,
      });
      hooksRun.inc({ outcome: run.failed ? "failed" : "succeeded" }, run.ran.length + (run.failed ? 1 : 0));
      if (run.failed)
        return fail("hooks", R.HooksFailed, `hook ${run.failed.hook}: ${run.failed.error}`, {
          targetVersion: target,
          renderedKinds: [...recorded].sort(),
        });
    }

    // 8. Prune what the render no longer produces; never in the middle of an upgrade.
    if (observe) {
      const would = upgradePass
        ? []
        : await prunable(this.d.client, {
            live: this.d.live,
            release,
            kinds: recorded,
            keep: report.keep,
            namespaces: [release.namespace],
          });
      return {
        outcome: {
          kind: "observed",
          targetVersion: target,
          chartVersion: step,
          wouldHook,
          wouldApply: report.wouldApply,
          wouldPrune: would.map(
            (i) =>
              `${i.type.kind} ${i.metadata.namespace ? `${i.metadata.namespace}/` : ""}${i.metadata.name}`,
          ),
        },
        next: "resync",
      };
    }
    if (!upgradePass) {
      const result = await pruneRelease(this.d.client, {
        live: this.d.live,
        release,
        kinds: recorded,
        keep: report.keep,
        namespaces: [release.namespace],
        signal,
      });
      pruned.inc(result.deleted.length);
      if (result.deleted.length)
        log.info({ pruned: result.deleted.map((i) => `${i.type.kind} ${i.metadata.name}`) }, "pruned");
      for (const f of result.failed) log.warn({ object: f.item.metadata.name, err: f.error }, "prune failed");
    }

    const stepping = step !== target;
    return {
      outcome: {
        kind: "applied",
        targetVersion: target,
        chartVersion: step,
        gitlabVersion: gitlabVersionOf(render),
        hooksRan,
        renderedKinds: report.servedKinds,
        workloads: workloadReadiness(report.live),
        stepping,
        migrations,
      },
      next: stepping || migrations === "running" ? "step" : "resync",
    };
  }

  /** State of the migrations Jobs this release ran for a GitLab version (the label the chart stamps). */
  private async migrationsOf(
    release: { name: string; namespace: string },
    gitlabVersion: string,
    _signal: AbortSignal,
  ): Promise<MigrationsState> {
    const list = await this.d.client.list(JOB, {
      namespace: release.namespace,
      labelSelector: `${releaseSelector(release)},${TARGET_VERSION_LABEL}=${gitlabVersion}`,
    });
    return migrationsState(list.items as { status?: { conditions?: { type: string; status: string }[] } }[]);
  }

  private async finalize(obj: GitLabCore, log: Logger, signal: AbortSignal): Promise<void> {
    if (!hasFinalizer(obj, GitLabCoreFinalizer)) return;
    const release = { name: obj.metadata.name!, namespace: obj.metadata.namespace! };
    const report = await cleanUpRelease(this.d.client, release, obj.status?.renderedKinds ?? [], log, signal);
    for (const f of report.failed)
      this.d.events.record(obj, {
        type: "Warning",
        reason: R.CleanupFailed,
        action: "Delete",
        note: `${f.object}: ${f.error}`,
      });
    try {
      await removeFinalizer(this.d.client, this.d.type, obj, GitLabCoreFinalizer, signal);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  private async writeStatus(
    obj: GitLabCore,
    outcome: PassOutcome,
    log: Logger,
    signal: AbortSignal,
  ): Promise<void> {
    const { status, events } = planStatus(obj.status, obj.metadata.generation, outcome, this.now());
    try {
      await this.statuses.write(obj, status, {
        signal,
        onChange: () => {
          for (const e of events)
            this.d.events.record(obj, { type: e.type, reason: e.reason, action: "Reconcile", note: e.note });
        },
      });
    } catch (e) {
      log.warn({ err: errorMessage(e) }, "could not write status");
      throw e;
    }
  }

  private forget(key: string): void {
    this.statuses.forget(key);
    this.applied.forgetAll(`${key}|`);
  }
}

function reasonOf(e: unknown, fallback: string): string {
  const r = (e as ReasonedError | undefined)?.reason;
  return typeof r === "string" && r ? r : fallback;
}
