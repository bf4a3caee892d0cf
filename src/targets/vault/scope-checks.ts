/**
 * What the vault target's configuration allows an object before anything is written: its path and
 * references inside the namespace's allow-list, and deletionPolicy Delete only with allowDelete.
 */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedReason as R } from "../../apis/vaultseed-names.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../runtime/finalizers.js";
import type { CompiledSeed } from "./compile.js";
import { readRefusal, writeRefusal } from "./scope.js";
import type { Outcome, SeedPass } from "./seed-pass.js";
import { FINALIZER } from "./seed-pass.js";

/** Why the allow-list refuses this object's path or one of its references, if it does. */
export function scopeRefusal(ctx: SeedPass, namespace: string, seed: CompiledSeed): string | undefined {
  const scopes = ctx.d.config.applications;
  const write = writeRefusal(scopes, namespace, seed.path);
  if (write) return write;
  for (const [key, template] of seed.declarations) {
    if (template.kind !== "ref") continue;
    const read = readRefusal(scopes, namespace, key, template.ref.path);
    if (read) return read;
  }
  return undefined;
}

/** Delete needs the target's allowDelete; then the object carries the finalizer, otherwise it does not. */
export async function ensureDeletionPolicy(
  ctx: SeedPass,
  obj: VaultSeed,
  seed: CompiledSeed,
  signal: AbortSignal,
): Promise<Outcome | undefined> {
  if (seed.deletionPolicy === "Delete") {
    if (!ctx.d.config.allowDelete) {
      return {
        verdict: {
          ready: false,
          stalled: true,
          reason: R.Forbidden,
          message:
            "deletionPolicy Delete is not allowed: the vault target's configuration does not set allowDelete: true",
        },
      };
    }
    if (!ctx.d.config.observeOnly && !hasFinalizer(obj, FINALIZER))
      await addFinalizer(ctx.d.client, ctx.d.type, obj, FINALIZER, signal);
  } else if (hasFinalizer(obj, FINALIZER) && !ctx.d.config.observeOnly) {
    await removeFinalizer(ctx.d.client, ctx.d.type, obj, FINALIZER, signal);
  }
  return undefined;
}
