/**
 * The VaultSeed controller's pass: the runtime's stages (seed-stages.ts) finalize a deleted object
 * or converge any other; the kernel settles the outcome into conditions and the reconcile result,
 * and the status is written from both (report.ts); here only the metrics that follow each object.
 */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedReason as R, VaultSeedManagers } from "../../apis/vaultseed-names.js";
import type { ReconcileContext, ReconcileResult } from "../../runtime/controller.js";
import { runStages } from "../../runtime/stages.js";
import { settleStages, stageResult } from "../../runtime/stages-settle.js";
import { StatusWriter } from "../../runtime/status.js";
import { lastReconcileCompleted, objectsNotReady, plannedChanges, rotationNext } from "./metrics.js";
import { PLAN_ACTIONS } from "./plan-summary.js";
import { writeStatus } from "./report.js";
import {
  type Outcome,
  READY_MESSAGE,
  type SeedPass,
  TARGET,
  type VaultSeedReconcilerDeps,
} from "./seed-pass.js";
import { FINALIZE_STAGES, SEED_STAGES, type SeedBase } from "./seed-stages.js";
import type { Verdict } from "./status.js";
import { UnconfirmedWrites } from "./unconfirmed-writes.js";

export { FINALIZER, type KvBackend, type VaultSeedReconcilerDeps } from "./seed-pass.js";
export const FIELD_MANAGER = VaultSeedManagers.fieldManager;

/**
 * Reconciles one VaultSeed: read the path, plan, write with compare-and-set, report. A pass that
 * finds nothing to change writes nothing, neither to OpenBao nor to the API server.
 */
export class VaultSeedReconciler {
  private readonly notReady = new Map<string, string>();
  private readonly statuses: StatusWriter<VaultSeed["status"]>;
  private readonly unconfirmed = new UnconfirmedWrites();
  private readonly now: () => Date;
  private readonly pass: SeedPass;

  constructor(private readonly d: VaultSeedReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.statuses = new StatusWriter<VaultSeed["status"]>({
      client: d.client,
      type: d.type,
      fieldManager: FIELD_MANAGER,
      plane: statusPlane,
      // The runtime drops a written status once this cache shows it, or when the object goes.
      cache: d.informer,
    });
    this.pass = {
      d,
      unconfirmed: this.unconfirmed,
      statuses: this.statuses,
      now: this.now,
      forget: (key) => this.forget(key),
    };
    for (const reason of Object.values(R)) objectsNotReady.set({ target: TARGET, reason }, 0);
    d.informer.addHandler({
      delete: (o) => this.unconfirmed.forget(`${o.metadata.namespace}/${o.metadata.name}`),
    });
  }

  readonly reconcile = async (key: string, ctx: ReconcileContext): Promise<ReconcileResult> => {
    const cached = this.d.informer.get(key);
    if (!cached) {
      this.forget(key);
      return undefined;
    }
    const obj = this.statuses.freshest(key, cached);
    const base: SeedBase = {
      ctx: this.pass,
      obj,
      log: ctx.log,
      signal: ctx.signal,
      progress: {},
      resyncAfter: (o) => this.resyncAfter(o),
    };
    const pass = obj.metadata.deletionTimestamp
      ? await runStages(FINALIZE_STAGES, base, { signal: ctx.signal })
      : await runStages(SEED_STAGES, base, { signal: ctx.signal });
    // Nothing decided (a source being written by another pass): no status, the runtime runs it again.
    if (pass.kind === "defer") return stageResult(pass, { waitAfterMs: this.d.config.resyncMs });
    // Its path is not held for it any more, whether or not this pass reached it.
    this.d.passes?.release(key);
    const outcome = pass.kind === "done" ? pass.context.outcome : pass.detail;
    if (!outcome) return undefined;
    // Waiting on the backend or on another object fails the pass: it backs off in the runtime (5 s
    // doubling to 5 minutes) and counts as an error; an invalid spec waits for its next change.
    const settled = settleStages(pass, {
      readyReason: R.Reconciled,
      readyMessage: READY_MESSAGE,
      generation: obj.metadata.generation,
      doneAfterMs: this.resyncAfter(outcome),
      waitAfterMs: this.d.config.resyncMs,
    });
    await writeStatus(this.pass, this.statuses, obj, outcome, settled, ctx.log, ctx.signal);
    lastReconcileCompleted.set({ target: TARGET }, this.now().getTime() / 1000);
    this.trackReadiness(key, outcome.verdict);
    this.trackRotation(obj, outcome);
    return settled.result;
  };

  /**
   * A rotation due before the next resync is made on time, not up to a resync late. One already
   * past (observe-only, or a rotation that could not be stored) waits for the resync: no hot loop.
   */
  private resyncAfter(outcome: Outcome): number {
    const untilRotation =
      outcome.nextRotationMs === undefined ? 0 : outcome.nextRotationMs - this.now().getTime();
    const resync = this.d.config.resyncMs;
    return untilRotation > 0 ? Math.max(1_000, Math.min(resync, untilRotation)) : resync;
  }

  /**
   * The next-rotation gauge follows what the path records. A pass that failed before reading it
   * leaves the gauge as it was, so a rotation that cannot be written shows as overdue.
   */
  private trackRotation(obj: VaultSeed, outcome: Outcome): void {
    const labels = { target: TARGET, namespace: obj.metadata.namespace!, name: obj.metadata.name! };
    if (outcome.nextRotationMs !== undefined) rotationNext.set(labels, outcome.nextRotationMs / 1000);
    else if ((obj.spec.rotate as { every?: unknown } | undefined)?.every === undefined)
      rotationNext.remove(labels);
  }

  /** Moves the key between the not-ready counts in O(1): a pass over n objects stays O(n). */
  private trackReadiness(key: string, v: Verdict): void {
    const before = this.notReady.get(key);
    const after = v.ready ? undefined : v.reason;
    if (before === after) return;
    if (before !== undefined) objectsNotReady.dec({ target: TARGET, reason: before });
    if (after !== undefined) objectsNotReady.inc({ target: TARGET, reason: after });
    if (after === undefined) this.notReady.delete(key);
    else this.notReady.set(key, after);
  }

  private forget(key: string): void {
    this.statuses.forget(key);
    this.unconfirmed.forget(key);
    this.d.passes?.forget(key);
    const [namespace, name] = key.split("/");
    for (const action of PLAN_ACTIONS)
      plannedChanges.remove({ target: TARGET, namespace: namespace!, name: name!, action });
    rotationNext.remove({ target: TARGET, namespace: namespace!, name: name! });
    this.trackReadiness(key, { ready: true, reason: R.Reconciled, message: "" });
  }
}

/** The fields of a VaultSeed's status this controller writes; the comparison looks at these only. */
function statusPlane(s: VaultSeed["status"]): unknown {
  const { observedGeneration, conditions, managedKeys, kvVersion, rotationToken } = s ?? {};
  return { observedGeneration, conditions, managedKeys, kvVersion, rotationToken };
}
