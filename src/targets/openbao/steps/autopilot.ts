import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { POD } from "../../../runtime/builtin-types.js";
import { errorMessage } from "../../../runtime/errors.js";
import { LastingFailures } from "../../../runtime/lasting-failures.js";
import { proceed } from "../../../runtime/stages.js";
import { type BaoClient, BaoRequestError } from "../baoclient/client.js";
import { servingRef } from "../cluster-ref.js";
import { LABEL_CLUSTER, podName } from "../identity.js";
import { oidcEnabled } from "../oidc-roles.js";
import { autopilotStamp, reconcileAutopilot } from "../workload/autopilot/autopilot.js";
import { selfInitEnabled } from "../workload/init/init.js";
import { baoForOrdinal } from "./bao.js";
import type { PassBase, StepResult } from "./context.js";
import { forgetOperatorJwt, operatorJwtToken, operatorServiceAccount } from "./operator-jwt.js";
import { keepReadReplicasNonVoters } from "./read-replica-suffrage.js";
import { noteRootTokenFailure, usableRootToken } from "./root-token.js";

/**
 * Day-2 Raft Autopilot: first attempt right after init, then whenever the spec differs. It never
 * blocks the workload; a failure is logged and retried next pass. Once the settings were found as
 * wanted, the quiet passes after do not ask again (autopilotStamp says when they do). The read
 * replicas are kept on Autopilot's non-voter list the same way (read-replica-suffrage.ts).
 */
/** Pod 0 restarting fails a few passes in a row: warn only when a failure lasts (a minute). */
const failures = new LastingFailures();

export async function autopilotStep(pass: PassBase): Promise<StepResult> {
  const { cluster, ctx, deps, writes, result } = pass;
  if (selfInitEnabled(cluster) || result.selfInitialized) return operatorRoleSuffrage(pass);
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
    await keepReadReplicasNonVoters(pass, baoOf, async () => token, "root-token");
    failures.succeeded(`${key} autopilot`);
  } catch (e) {
    // A refused token is said once (event, Degraded) and not used again; anything else retries.
    if (!noteRootTokenFailure(deps, cluster, ctx, token, e, result))
      ctx.log[failures.failed(`${key} autopilot`)](
        { err: errorMessage(e) },
        "Autopilot configuration not applied yet",
      );
  }
  return proceed();
}

/**
 * A self-initialized cluster keeps no root token, so the operator logs in as selfInit.oidc's
 * operator role, and only to keep its read replicas non-voters (ours, beyond upstream; Autopilot's
 * settings stay as self-init wrote them). Without the bootstrap, read replicas or an identity of
 * its own the operator has no way in and asks nothing.
 */
async function operatorRoleSuffrage(pass: PassBase): Promise<StepResult> {
  const { cluster, ctx, deps, result } = pass;
  if (!oidcEnabled(cluster) || !result.initialized || (cluster.spec.readReplicas?.replicas ?? 0) <= 0)
    return proceed();
  const sa = operatorServiceAccount(deps.config.operatorServiceAccount);
  if (!sa) {
    ctx.log.debug(
      {},
      "no ServiceAccount of its own (not in a pod, none configured): read replicas not checked",
    );
    return proceed();
  }
  let bao: Promise<BaoClient> | undefined;
  const baoOf = () => (bao ??= baoForOrdinal(deps, cluster, ctx, 0));
  const tokenOf = async () =>
    (await operatorJwtToken(
      ctx.client,
      baoOf,
      cluster,
      sa,
      ctx.now().getTime(),
      ctx.signal,
      deps.config.openBaoAudience,
    ))!;
  const what = `${cluster.metadata.namespace}/${cluster.metadata.name} suffrage`;
  try {
    await keepReadReplicasNonVoters(pass, baoOf, tokenOf, "operator-role");
    failures.succeeded(what);
  } catch (e) {
    // A 403 before the demotion is a token OpenBao no longer knows (a restore replaced its token
    // store): the next pass logs in afresh.
    if (e instanceof BaoRequestError && e.status === 403) forgetOperatorJwt(cluster);
    ctx.log[failures.failed(what)](
      { err: errorMessage(e) },
      "read replicas' suffrage not checked yet (operator role)",
    );
  }
  return proceed();
}
