/** The deletion side of a pass: deletionPolicy Delete removes the path it owns, then the finalizer goes. */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedReason as R } from "../../apis/vaultseed-names.js";
import { isNotFound } from "../../runtime/errors.js";
import { hasFinalizer, removeFinalizer } from "../../runtime/finalizers.js";
import type { Logger } from "../../runtime/log.js";
import { writesTotal } from "./metrics.js";
import { failure } from "./outcome.js";
import { OWNER_MARKER_KEY, ownerMarkerOf } from "./planner.js";
import { writeRefusal } from "./scope.js";
import type { Outcome, SeedPass } from "./seed-pass.js";
import { FINALIZER, TARGET } from "./seed-pass.js";

/** Ends the deletion attempt of a path outside the allow-list; the finalizer is removed all the same. */
class ScopeSkip extends Error {}

/** deletionPolicy Delete: remove the path if it carries this object's marker, then the finalizer. */
export async function finalize(
  ctx: SeedPass,
  obj: VaultSeed,
  log: Logger,
  signal: AbortSignal,
): Promise<Outcome | undefined> {
  if (!hasFinalizer(obj, FINALIZER)) return undefined;
  const path = obj.spec.path;
  const policy = obj.spec.deletionPolicy ?? "Retain";
  if (policy === "Delete") {
    if (!ctx.d.config.allowDelete) {
      return {
        verdict: {
          ready: false,
          stalled: true,
          reason: R.Forbidden,
          message:
            "removing the path is not allowed: the vault target's configuration does not set allowDelete: true",
        },
      };
    }
    if (ctx.d.config.observeOnly) {
      return {
        verdict: {
          ready: false,
          reason: R.ObserveOnly,
          message: `observe-only: a real run would delete ${path}`,
          drift: "1 delete-path",
        },
      };
    }
    const refusal = writeRefusal(ctx.d.config.applications, obj.metadata.namespace!, path);
    try {
      if (refusal) {
        // The allow-list changed since the finalizer was added: the path is no longer this namespace's.
        ctx.d.events.record(obj, {
          type: "Warning",
          reason: R.Forbidden,
          action: "Delete",
          note: `${path} was left in place: ${refusal}`,
        });
        throw new ScopeSkip();
      }
      const current = await ctx.d.kv.read(path, signal);
      const me = ownerMarkerOf({ namespace: obj.metadata.namespace!, name: obj.metadata.name! });
      const owner = current.customMetadata[OWNER_MARKER_KEY];
      if (owner === me) {
        await ctx.d.kv.deleteAll(path, signal);
        ctx.d.reads.forget(path);
        writesTotal.inc({ target: TARGET, action: "delete-path" });
        log.info({ path }, "deleted path");
        ctx.d.events.record(obj, {
          type: "Normal",
          reason: R.Deleted,
          action: "Delete",
          note: `deleted ${path} with every version`,
        });
      } else if (current.exists || owner !== undefined) {
        ctx.d.events.record(obj, {
          type: "Warning",
          reason: R.OwnedByAnother,
          action: "Delete",
          note: `${path} was left in place: it does not carry this object's owner marker`,
        });
      }
    } catch (e) {
      if (!(e instanceof ScopeSkip)) return failure(e, log);
    }
  }
  try {
    await removeFinalizer(ctx.d.client, ctx.d.type, obj, FINALIZER, signal);
  } catch (e) {
    // A conflict means the object changed since it was read: the error requeues the key and the
    // next pass removes the finalizer from the fresh copy. Swallowing it would leave the object
    // Terminating until a restart, since an edit that changes neither spec nor finalizers
    // enqueues nothing.
    if (!isNotFound(e)) throw e;
  }
  ctx.forget(`${obj.metadata.namespace}/${obj.metadata.name}`);
  return undefined;
}
