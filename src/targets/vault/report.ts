/** Outcome to status: the conditions and fields of the pass, applied only when they changed. */
import type { VaultSeed } from "../../apis/vaultseed.js";
import type { VaultSeedReasonType } from "../../apis/vaultseed-names.js";
import { findCondition } from "../../runtime/conditions.js";
import { errorMessage } from "../../runtime/errors.js";
import type { Logger } from "../../runtime/log.js";
import type { Settled } from "../../runtime/stages-settle.js";
import type { StatusWriter } from "../../runtime/status.js";
import type { Outcome, SeedPass } from "./seed-pass.js";
import { conditionsFor } from "./status.js";

/** Applies the status only when something in it changed, so a quiet resync writes nothing. */
export async function writeStatus(
  ctx: SeedPass,
  statuses: StatusWriter<VaultSeed["status"]>,
  obj: VaultSeed,
  o: Outcome,
  settled: Settled<VaultSeedReasonType>,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const prev = obj.status ?? {};
  const conditions = conditionsFor(prev.conditions, settled, o.verdict, obj.metadata.generation, ctx.now());
  const status: Record<string, unknown> = {
    observedGeneration: obj.metadata.generation,
    conditions,
    managedKeys: o.managedKeys ?? prev.managedKeys,
    kvVersion: o.kvVersion ?? prev.kvVersion,
    rotationToken: o.rotationToken ?? prev.rotationToken,
  };
  for (const k of Object.keys(status)) if (status[k] === undefined) delete status[k];
  const before = findCondition(prev.conditions, "Ready");
  try {
    await statuses.write(obj, status as VaultSeed["status"], {
      signal,
      onChange: () => {
        if (!o.verdict.ready && (before?.reason !== o.verdict.reason || before?.status !== "False"))
          ctx.d.events.record(obj, {
            type: "Warning",
            reason: o.verdict.reason,
            action: "Reconcile",
            note: o.verdict.message,
          });
      },
    });
  } catch (e) {
    log.warn({ err: errorMessage(e) }, "could not write status");
    throw e;
  }
}
