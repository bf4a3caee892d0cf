/**
 * A VaultSeed pass as the runtime's stages: validate → scope → deletion policy → mounts → seed (the
 * compare-and-set replan loop, converge.ts); a deleted object's pass is the one finalize stage.
 * Each part still says what it found as an Outcome (the status's fields, metrics, events); `stageOf`
 * is the one place that says how an Outcome reads to the kernel, which then gives the conditions
 * and the reconcile result (reconciler.ts).
 */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedReason as R, type VaultSeedReasonType } from "../../apis/vaultseed-names.js";
import type { Logger } from "../../runtime/log.js";
import {
  defer,
  fail,
  invalid,
  proceed,
  type StageDefer,
  type StageResult,
  Stages,
  wait,
} from "../../runtime/stages.js";
import { type CompiledSeed, compileSeed } from "./compile.js";
import { seedPath } from "./converge.js";
import { finalize } from "./finalize.js";
import { failure } from "./outcome.js";
import { ensureDeletionPolicy, scopeRefusal } from "./scope-checks.js";
import type { Outcome, Progress, SeedPass } from "./seed-pass.js";

/** What every stage of a pass reads. */
export interface SeedBase {
  readonly ctx: SeedPass;
  readonly obj: VaultSeed;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** What the pass has written so far, so that a failure after a write still reports it. */
  readonly progress: Progress;
  /** When a pass that ends quietly or stalled looks again: the resync, sooner for a rotation due. */
  readonly resyncAfter: (o: Outcome) => number;
}

export type SeedStage<O> = StageResult<VaultSeedReasonType, Outcome, O, StageDefer>;

/**
 * An Outcome as the kernel reads it: ready → the pass goes on (or ends: Ready); waiting on the
 * backend or on another object → a failure the runtime retries with its backoff and counts
 * (Reconciling), as the backend's own errors are; stalled → Stalled, looked at again at the resync;
 * any other not-ready verdict (owned by another object, observe-only drift) → only Ready=False,
 * looked at again at the resync.
 */
export function stageOf(base: SeedBase, o: Outcome): SeedStage<{ outcome: Outcome }> {
  const v = o.verdict;
  if (v.ready) return proceed({ outcome: o });
  if (o.next === "wait") return fail(v.reason, v.message, { message: v.message, detail: o });
  return wait(v.reason, v.message, {
    afterMs: base.resyncAfter(o),
    by: v.stalled ? "stalled" : "quiet",
    detail: o,
  });
}

/** A spec that does not compile: nothing is written and nothing retried until the object changes. */
function validate(base: SeedBase): SeedStage<{ seed: CompiledSeed }> {
  const compiled = compileSeed(base.obj.spec);
  if (compiled.ok) return proceed({ seed: compiled.seed });
  const first = compiled.problems[0];
  const reason = first?.reason ?? R.InvalidSpec;
  const message = compiled.problems
    .map((p) => (p.key && !p.message.startsWith(`${p.key}: `) ? `${p.key}: ${p.message}` : p.message))
    .join("; ");
  return invalid(reason, message, { detail: { verdict: { ready: false, stalled: true, reason, message } } });
}

/**
 * Before anything else, the finalizer included: an application object outside its prefixes makes
 * the controller do nothing at all for it.
 */
function scope(base: SeedBase & { seed: CompiledSeed }): SeedStage<object> {
  const refusal = scopeRefusal(base.ctx, base.obj.metadata.namespace ?? "", base.seed);
  if (!refusal) return proceed();
  return stageOf(base, { verdict: { ready: false, stalled: true, reason: R.Forbidden, message: refusal } });
}

/** Delete needs the target's allowDelete; the finalizer follows the policy. API errors go to the runtime. */
async function deletionPolicy(base: SeedBase & { seed: CompiledSeed }): Promise<SeedStage<object>> {
  const refused = await ensureDeletionPolicy(base.ctx, base.obj, base.seed, base.signal);
  return refused ? stageOf(base, refused) : proceed();
}

/** Read, plan, write until the path holds what is declared; a backend failure ends in a condition. */
async function seed(base: SeedBase & { seed: CompiledSeed }): Promise<SeedStage<{ outcome: Outcome }>> {
  let o: Outcome;
  try {
    const seeded = await seedPath(base.ctx, base.obj, base.seed, base.log, base.signal, base.progress);
    if ("deferred" in seeded)
      return defer(seeded.deferred.until, seeded.deferred.boundMs, seeded.deferred.why);
    o = seeded;
  } catch (e) {
    if (base.signal.aborted) throw e;
    o = { ...failure(e, base.log), ...base.progress };
  }
  return stageOf(base, o);
}

export const SEED_STAGES = Stages.over<SeedBase, VaultSeedReasonType, Outcome, StageDefer>()
  .stage("validate", validate)
  .stage("scope", scope)
  .stage("deletion-policy", deletionPolicy)
  .stage("seed", seed);

/** deletionPolicy Delete removes the path it owns, then the finalizer goes; nothing to report then. */
async function finalizeStage(base: SeedBase): Promise<SeedStage<{ outcome: Outcome | undefined }>> {
  const o = await finalize(base.ctx, base.obj, base.log, base.signal);
  return o ? stageOf(base, o) : proceed({ outcome: undefined });
}

export const FINALIZE_STAGES = Stages.over<SeedBase, VaultSeedReasonType, Outcome, StageDefer>().stage(
  "finalize",
  finalizeStage,
);
