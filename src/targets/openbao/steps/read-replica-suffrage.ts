import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { POD } from "../../../runtime/builtin-types.js";
import { type BaoClient, BaoRequestError } from "../baoclient/client.js";
import { refOf, servingRef } from "../cluster-ref.js";
import { Component, LABEL_CLUSTER, podName } from "../identity.js";
import { readReplicasSettled, readReplicasToDemote } from "../workload/autopilot/read-replica-suffrage.js";
import { OidcPolicy, OPERATOR_DEMOTE_GRANT, policyText } from "../workload/config/oidc-bootstrap.js";
import type { PassBase } from "./context.js";

/** How the operator is logged in: the kept root token, or selfInit.oidc's operator role. */
export type OperatorLogin = "root-token" | "operator-role";

/**
 * What the condition and the Warning event say when OpenBao refuses the operator role the demotion.
 * The grant cannot be added by the operator itself: its role may not write sys/policies (upstream's
 * grants, and ours add only the demotion), and selfInit's bootstrap requests ran once, at first
 * initialization; a restored snapshot also brings back its source's policies. So it names the
 * policy and the line a person with policy rights adds.
 */
export function demoteRefusedMessage(replicas: readonly string[]): string {
  return `OpenBao refuses sys/storage/raft/demote (HTTP 403) to the operator's JWT role, so read replicas ${replicas.join(", ")} are voters and stay so. Its policy ${OidcPolicy.operator} was written when this cluster initialized itself without read replicas (or came with a restored snapshot); add this line to policy ${OidcPolicy.operator}: ${policyText([OPERATOR_DEMOTE_GRANT])}`;
}

/**
 * Keeps the read replicas on Autopilot's permanent non-voter list (why it can fall off: see
 * read-replica-suffrage.ts). Asked once per set of pods, leader and restore; a pass whose stamp
 * matches the last settled one asks OpenBao nothing. `tokenOf` is called only when OpenBao is asked.
 */
export async function keepReadReplicasNonVoters(
  { cluster, ctx, deps, writes, result }: Pick<PassBase, "cluster" | "ctx" | "deps" | "writes" | "result">,
  baoOf: () => Promise<BaoClient>,
  tokenOf: () => Promise<string>,
  login: OperatorLogin,
): Promise<void> {
  const wanted = cluster.spec.readReplicas?.replicas ?? 0;
  if (wanted <= 0) return;
  const ns = cluster.metadata.namespace!;
  const labels = { [LABEL_CLUSTER]: cluster.metadata.name! };
  const ids = Array.from({ length: wanted }, (_, i) => podName(refOf(cluster), i, Component.ReadReplica));
  const pods = await Promise.all(
    [podName(servingRef(cluster), 0), ...ids].map((n) => ctx.reader.get(POD, n, ns, { labels })),
  );
  const stamp = [
    cluster.metadata.uid ?? "",
    cluster.status?.activeLeader ?? "",
    cluster.status?.restore?.uid ?? "",
    ...pods.map((p) => p?.metadata.uid ?? "-"),
  ].join("|");
  const key = `${ns}/${cluster.metadata.name}/read-replica-suffrage`;
  const now = ctx.now().getTime();
  const standing = deps.demoteRefusals?.standing(key, stamp, now);
  if (standing) {
    result.readReplicaSuffrage = standing;
    return;
  }
  if (deps.autopilotChecks?.current(key, stamp)) return;
  const bao = await baoOf();
  const token = await tokenOf();
  const state = await bao.autopilotDetail(token, ctx.signal);
  const demote = readReplicasToDemote(state, ids);
  for (const id of demote) {
    writes.record("autopilot", `non-voter ${id}`);
    if (writes.dryRun) continue;
    try {
      await bao.demote(token, id, ctx.signal);
    } catch (e) {
      // The same token just read Autopilot's state, so a 403 here is the policy, not the token.
      // (With the root token a 403 means the token is unknown: the caller says that.)
      if (login !== "operator-role" || !(e instanceof BaoRequestError) || e.status !== 403) throw e;
      const message = demoteRefusedMessage(demote);
      result.readReplicaSuffrage = message;
      if (deps.demoteRefusals?.remember(key, stamp, now, message) ?? true)
        ctx.events.record(cluster, {
          type: "Warning",
          reason: OpenBaoClusterReason.DemoteRefused,
          action: "Configure",
          note: message,
        });
      return;
    }
  }
  deps.demoteRefusals?.forget(key);
  if (demote.length > 0 && !writes.dryRun)
    ctx.events.record(cluster, {
      type: "Normal",
      reason: OpenBaoClusterReason.AutopilotConfigured,
      action: "Configure",
      note: `Raft Autopilot told to keep read replicas ${demote.join(", ")} non-voters (its non-voter list did not name them, as after a restore of data taken without them)`,
    });
  // Settled only as found: after a demotion the next pass looks again.
  if (readReplicasSettled(state, ids)) deps.autopilotChecks?.remember(key, stamp);
}
