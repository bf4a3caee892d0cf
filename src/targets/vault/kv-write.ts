/** The writes of one plan to OpenBao: data with compare-and-set, then custom metadata. */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedEventReason as E, type VaultSeedEventReasonType } from "../../apis/vaultseed-names.js";
import type { Logger } from "../../runtime/log.js";
import { BackendError } from "./backend-errors.js";
import type { KvState } from "./kv.js";
import { writesTotal } from "./metrics.js";
import { countByAction, summarizeChanges } from "./plan-summary.js";
import { type Plan, ROTATION_PENDING_KEY } from "./planner.js";
import type { Progress, SeedPass } from "./seed-pass.js";
import { TARGET } from "./seed-pass.js";

/** Writes data (with CAS) then custom metadata, as the plan orders. */
export async function writePlan(
  ctx: SeedPass,
  obj: VaultSeed,
  path: string,
  p: Plan,
  current: KvState,
  log: Logger,
  signal: AbortSignal,
  progress: Progress,
): Promise<"conflict" | { version: number; metadata: Record<string, string> }> {
  let version = current.version;
  let data = current.data;
  let stored = current.customMetadata;
  if (p.data && obj.spec.prune === true) await recordManagedKeys(ctx, obj, p.managedKeys, signal);
  if (p.data && p.intentMetadata) {
    // The rotation is announced before it is written (see the planner): a successor of a pass
    // killed after the data write records it instead of rotating again.
    await ctx.d.kv.writeMetadata(path, p.intentMetadata, signal);
    stored = p.intentMetadata;
    ctx.d.reads.set(path, { ...current, customMetadata: stored });
  }
  if (p.data) {
    try {
      version = await ctx.d.kv.write(path, p.data, p.expectedVersion, signal);
      data = p.data;
    } catch (e) {
      if (e instanceof BackendError && e.failure === "conflict") {
        // Someone else wrote the version the marker names: it must not pass for the rotation.
        if (p.intentMetadata) {
          const { [ROTATION_PENDING_KEY]: _mine, ...before } = current.customMetadata;
          await ctx.d.kv.writeMetadata(path, before, signal);
        }
        ctx.d.reads.forget(path);
        return "conflict";
      }
      // No answer is not a refusal: the write may have landed (see UnconfirmedWrites).
      if (!(e instanceof BackendError) || e.failure === "unavailable") {
        const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
        ctx.unconfirmed.record(key, obj.metadata.uid ?? "", path, p.data, p.managedKeys);
      }
      throw e;
    }
    ctx.unconfirmed.forget(`${obj.metadata.namespace}/${obj.metadata.name}`);
    // Should the metadata write below fail, the status still follows what was written.
    progress.kvVersion = version;
    progress.managedKeys = p.managedKeys;
    ctx.d.reads.set(path, { exists: true, version, data, customMetadata: stored });
    for (const dependent of ctx.d.refs.dependentsOf(path)) ctx.d.enqueue(dependent);
  }
  let metadata = stored;
  if (p.customMetadata) {
    await ctx.d.kv.writeMetadata(path, p.customMetadata, signal);
    metadata = p.customMetadata;
    ctx.d.reads.set(path, { exists: true, version, data, customMetadata: metadata });
  }
  if (p.changes.length > 0) {
    for (const [action, n] of countByAction(p.changes)) writesTotal.inc({ target: TARGET, action }, n);
    const summary = summarizeChanges(p.changes);
    log.info({ path, changes: summary }, "wrote path");
    ctx.d.events.record(obj, {
      type: "Normal",
      reason: eventReason(p),
      action: "Write",
      note: `${path}: ${summary}`,
    });
  }
  return { version, metadata };
}

/**
 * Keys about to be written are listed in status.managedKeys before the write: the status is
 * otherwise written after it, and a controller killed in between would leave keys it wrote
 * unrecorded, so never pruned. Listing a key whose write then fails costs nothing: the next
 * pass writes it. Nothing is written when every key is listed already, nor for an object that
 * does not prune: managedKeys decide pruning only, and this status write costs about as much as
 * the three OpenBao requests of a new path together (bench:vault). An object that turns prune on
 * later does not prune a key written by a pass that was killed before its status.
 */
async function recordManagedKeys(
  ctx: SeedPass,
  obj: VaultSeed,
  planned: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const prev = ctx.statuses.freshest(`${obj.metadata.namespace}/${obj.metadata.name}`, obj).status ?? {};
  const known = new Set(prev.managedKeys ?? []);
  if (planned.every((k) => known.has(k))) return;
  const status: Record<string, unknown> = {
    observedGeneration: prev.observedGeneration,
    conditions: prev.conditions,
    managedKeys: [...new Set([...known, ...planned])].sort(),
    kvVersion: prev.kvVersion,
    rotationToken: prev.rotationToken,
  };
  for (const k of Object.keys(status)) if (status[k] === undefined) delete status[k];
  await ctx.statuses.write(obj, status as VaultSeed["status"], { signal });
}

/** The event reason for a write: the most telling action in it. */
function eventReason(p: Plan): VaultSeedEventReasonType {
  const actions = new Set(p.changes.map((c) => c.action));
  if (actions.has("adopt")) return E.Adopted;
  // A path created now (first time, or again after a metadata delete) gets fresh values anyway:
  // its rotation token is only recorded, nothing is rotated.
  if (actions.has("create-path")) return E.Wrote;
  if (actions.has("rotate-field") || actions.has("record-rotation")) return E.Rotated;
  if (actions.has("prune-field") && actions.size === 1) return E.Pruned;
  return E.Wrote;
}
