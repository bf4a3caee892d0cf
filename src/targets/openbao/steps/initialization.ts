import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { proceed, wait } from "../../../runtime/stages.js";
import { servingRef } from "../cluster-ref.js";
import { podName } from "../identity.js";
import { reconcileInit, selfInitEnabled } from "../workload/init/init.js";
import { baoForOrdinal } from "./bao.js";
import { failedWith, type PassBase, type StepResult } from "./context.js";

/** Only while status.initialized is false: operator init through the API, or self-init observed. */
export async function initializationStep(pass: PassBase): Promise<StepResult> {
  const { cluster, ctx, deps, writes, result } = pass;
  if (result.initialized) return proceed();
  const init = await reconcileInit(
    { ctx, writes, bao: (i) => baoForOrdinal(deps, cluster, ctx, i) },
    cluster,
  );
  // Observe-only never gets a pod to run, so it says what a real run would do next: initialize
  // pod 0 through the API (self-init needs no call from the operator).
  if (!init.done && writes.dryRun && !init.failed && !selfInitEnabled(cluster))
    if (!writes.changes.some((c) => c.action === "initialize"))
      writes.record("initialize", podName(servingRef(cluster), 0));
  if (!init.done)
    return init.failed ? failedWith(init.reason, init.message) : wait(init.reason, init.message);
  result.initialized = true;
  result.selfInitialized = init.selfInitialized;
  if (init.recovered)
    ctx.events.record(cluster, {
      type: "Normal",
      reason: OpenBaoClusterReason.InitializationRecovered,
      action: "Initialize",
      note: "OpenBao was already initialized by this operator; status recorded, nothing initialized again",
    });
  return proceed();
}
