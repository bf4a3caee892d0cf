import type { GitLabCore, GitLabCoreStatus } from "../../apis/gitlabcore.js";
import { GitLabCoreFinalizer, GitLabCoreReason as R } from "../../apis/gitlabcore-names.js";
import type { ReconcileContext, ReconcileResult } from "../../runtime/controller.js";
import { errorMessage, isNotFound } from "../../runtime/errors.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../runtime/finalizers.js";
import type { Logger } from "../../runtime/log.js";
import { stageResult } from "../../runtime/stages-settle.js";
import { StatusWriter } from "../../runtime/status.js";
import { AppliedMemory } from "./apply/live.js";
import { FIELD_MANAGER } from "./apply/plan.js";
import { cleanUpRelease } from "./deletion/index.js";
import { HookMemory } from "./hooks/exec.js";
import { passSeconds } from "./metrics.js";
import { type GitLabPass, runPass } from "./pass/index.js";
import type { GitLabReconcilerDeps } from "./ports.js";
import { forgetReleaseMetrics, publishReleaseMetrics } from "./release-metrics.js";
import { type PassOutcome, planStatus } from "./status/plan.js";

export type {
  Capabilities,
  GitLabReconcilerDeps,
  GitLabTargetSettings,
  ReasonedError,
  ReleaseSource,
  Resolution,
  UpgradePath,
  VersionPolicy,
} from "./ports.js";

/**
 * One GitLabCore: resolve the version, render, run the hooks once per release, apply every object,
 * report readiness, prune what the render dropped. A pass over unchanged inputs writes nothing.
 */
export class GitLabCoreReconciler {
  private readonly statuses: StatusWriter<GitLabCoreStatus>;
  private readonly applied = new AppliedMemory();
  private readonly hookMemory = new HookMemory();
  private readonly now: () => Date;

  constructor(private readonly d: GitLabReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.statuses = new StatusWriter<GitLabCoreStatus>({
      client: d.client,
      type: d.type,
      fieldManager: FIELD_MANAGER,
      cache: d.informer,
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
    const current = obj;
    const selected: { version?: string | undefined } = {};
    const pass = await runPass(obj, {
      selected,
      deps: this.d,
      applied: this.applied,
      hookMemory: this.hookMemory,
      now: this.now,
      log: ctx.log,
      signal: ctx.signal,
      progress: (outcome) => this.writeStatus(current, outcome, ctx.log, ctx.signal, selected.version),
    });
    const outcome = pass.kind === "done" ? pass.context.outcome : pass.detail;
    if (!outcome)
      throw new Error(
        `gitlab pass: stage ${pass.kind === "done" ? "" : pass.stage} stopped without an outcome`,
      );
    passSeconds.observe({ outcome: outcome.kind }, (performance.now() - started) / 1000);
    // A pass waiting for hooks wrote its status before it created them (progress): nothing more to write.
    if (outcome.kind !== "hooks") await this.writeStatus(obj, outcome, ctx.log, ctx.signal, selected.version);
    return this.next(pass);
  };

  /**
   * The kernel's result: a failed pass (or an upgrade held on a version that cannot be resolved)
   * backs off in the runtime (5 s doubling to 5 minutes), counted as an error; a pass waiting for a
   * hook looks again by the hook's deadline at the latest, its watch waking it sooner; an upgrade
   * stepping on after the step interval; anything else at the resync. The result only: the
   * conditions are GitLabCore's own (status/plan.ts), not the kernel's kstatus trio.
   */
  private next(pass: GitLabPass): ReconcileResult {
    const { requeueMs, stepRequeueMs } = this.d.settings;
    return stageResult(pass, {
      doneAfterMs: pass.kind === "done" && pass.context.next === "step" ? stepRequeueMs : requeueMs,
      waitAfterMs: stepRequeueMs,
    });
  }

  /** State of the migrations Jobs this release ran for a GitLab version (the label the chart stamps). */
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
    selected: string | undefined,
  ): Promise<void> {
    const { status, events } = planStatus(obj.status, obj.metadata.generation, outcome, this.now(), selected);
    publishReleaseMetrics(obj.metadata.namespace!, obj.metadata.name!, status);
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
    const [namespace, name] = key.split("/") as [string, string];
    forgetReleaseMetrics(namespace, name);
    this.statuses.forget(key);
    this.applied.forgetAll(`${key}|`);
    this.hookMemory.forget(key);
  }
}
