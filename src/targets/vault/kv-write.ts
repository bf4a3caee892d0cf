/** The writes of one plan to OpenBao: data with compare-and-set, then custom metadata. */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedEventReason as E, type VaultSeedEventReasonType } from "../../apis/vaultseed-names.js";
import type { Logger } from "../../runtime/log.js";
import { BackendError } from "./backend-errors.js";
import type { KvState } from "./kv.js";
import { writesTotal } from "./metrics.js";
import { countByAction, summarizeChanges } from "./plan-summary.js";
import type { Plan } from "./planner.js";
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
  if (p.data) {
    try {
      version = await ctx.d.kv.write(path, p.data, p.expectedVersion, signal);
      data = p.data;
    } catch (e) {
      if (e instanceof BackendError && e.failure === "conflict") {
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
    ctx.d.reads.set(path, { exists: true, version, data, customMetadata: current.customMetadata });
    for (const dependent of ctx.d.refs.dependentsOf(path)) ctx.d.enqueue(dependent);
  }
  let metadata = current.customMetadata;
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
