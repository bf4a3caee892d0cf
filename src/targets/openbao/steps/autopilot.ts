import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { POD } from "../../../runtime/builtin-types.js";
import { errorMessage } from "../../../runtime/errors.js";
import { proceed } from "../../../runtime/stages.js";
import type { BaoClient } from "../baoclient/client.js";
import { servingRef } from "../cluster-ref.js";
import { LABEL_CLUSTER, podName } from "../identity.js";
import { autopilotStamp, reconcileAutopilot } from "../workload/autopilot/autopilot.js";
import { selfInitEnabled } from "../workload/init/init.js";
import { baoForOrdinal } from "./bao.js";
import type { PassBase, StepResult } from "./context.js";
import { keepReadReplicasNonVoters } from "./read-replica-suffrage.js";
import { noteRootTokenFailure, usableRootToken } from "./root-token.js";

/**
 * Day-2 Raft Autopilot: first attempt right after init, then whenever the spec differs. It never
 * blocks the workload; a failure is logged and retried next pass. Once the settings were found as
 * wanted, the quiet passes after do not ask again (autopilotStamp says when they do). The read
 * replicas are kept on Autopilot's non-voter list the same way (read-replica-suffrage.ts).
 */
export async function autopilotStep({ cluster, ctx, deps, writes, result }: PassBase): Promise<StepResult> {
  if (selfInitEnabled(cluster) || result.selfInitialized) return proceed();
  const token = await usableRootToken(deps, cluster, ctx, result);
  if (!token) return proceed();
  const key = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
  // The voter pods carry the cluster's label: the reader's label-selected pod cache answers.
  const pod0 = await ctx.reader.get(POD, podName(servingRef(cluster), 0), cluster.metadata.namespace!, {
    labels: { [LABEL_CLUSTER]: cluster.metadata.name! },
  });
  const stamp = autopilotStamp(cluster, pod0?.metadata.uid);
  // Pod 0's client only when something is asked: a quiet pass reads no Secret for its CA.
  let bao: Promise<BaoClient> | undefined;
  const baoOf = () => (bao ??= baoForOrdinal(deps, cluster, ctx, 0));
  try {
    if (!deps.autopilotChecks?.current(key, stamp)) {
      const changed = await reconcileAutopilot(await baoOf(), token, cluster, writes.dryRun, ctx.signal);
      // Observe-only keeps asking while it would change something: its report must stay true.
      if (changed.length === 0 || !writes.dryRun) deps.autopilotChecks?.remember(key, stamp);
      if (changed.length > 0) {
        for (const key of changed) writes.record("autopilot", key);
        if (!writes.dryRun)
          ctx.events.record(cluster, {
            type: "Normal",
            reason: OpenBaoClusterReason.AutopilotConfigured,
            action: "Configure",
            note: `Raft Autopilot settings applied: ${changed.join(", ")}`,
          });
      }
    }
    await keepReadReplicasNonVoters(cluster, ctx, deps, writes, baoOf, token);
  } catch (e) {
    // A refused token is said once (event, Degraded) and not used again; anything else retries.
    if (!noteRootTokenFailure(deps, cluster, ctx, token, e, result))
      ctx.log.warn({ err: errorMessage(e) }, "Autopilot configuration not applied yet");
  }
  return proceed();
}
