import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { errorMessage } from "../../../runtime/errors.js";
import { secretValue } from "../../../runtime/secrets.js";
import { refOf } from "../cluster-ref.js";
import { clusterNames } from "../identity.js";
import { autopilotStamp, reconcileAutopilot } from "../workload/autopilot/autopilot.js";
import { ROOT_TOKEN_KEY, selfInitEnabled } from "../workload/init/init.js";
import { baoForOrdinal } from "./bao.js";
import type { Pass, Step, StepOutcome } from "./context.js";

/**
 * Day-2 Raft Autopilot: first attempt right after init, then whenever the spec differs. It never
 * blocks the workload; a failure is logged and retried next pass. Once the settings were found as
 * wanted, the quiet passes after do not ask again (autopilotStamp says when they do).
 */
export const autopilotStep: Step = {
  name: "autopilot",
  async run({ cluster, ctx, deps, writes, result }: Pass): Promise<StepOutcome> {
    if (selfInitEnabled(cluster) || result.selfInitialized) return undefined;
    const names = clusterNames(refOf(cluster));
    const token = await secretValue(
      ctx.reader,
      cluster.metadata.namespace!,
      names.rootTokenSecret,
      ROOT_TOKEN_KEY,
    );
    if (!token) return undefined;
    const key = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
    const stamp = autopilotStamp(cluster);
    if (deps.autopilotChecks?.current(key, stamp)) return undefined;
    const bao = await baoForOrdinal(deps, cluster, ctx, 0);
    try {
      const changed = await reconcileAutopilot(bao, token, cluster, writes.dryRun, ctx.signal);
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
    } catch (e) {
      ctx.log.warn({ err: errorMessage(e) }, "Autopilot configuration not applied yet");
    }
    return undefined;
  },
};
