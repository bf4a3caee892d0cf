/**
 * spec.upgrade.jwtAuthRole: the upgrade managers' OpenBao token from a JWT login instead of a stored
 * token, for clusters whose root token was revoked (self-init) and that keep no long-lived token in
 * a Secret. The operator asks the API server for a short-lived token of the cluster's upgrade
 * ServiceAccount (`<name>-upgrade-serviceaccount`, the one the pre-upgrade snapshot Job runs as), with
 * the target's openBaoAudience like the executor Jobs, and logs in with that role where the executor does
 * (upstream's `jwt-operator` mount, then the `jwt` mount this operator used before), so one OpenBao
 * role serves the snapshot Job and the step-down alike.
 *
 * Tokens are kept in memory until shortly before they expire: a pass every few seconds must not
 * log in every time. Nothing here is logged; errors name the role and the HTTP status only.
 */
import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { errorMessage } from "../../../../../runtime/errors.js";
import { BaoClient } from "../../../baoclient/client.js";
import { refOf, servingRef } from "../../../cluster-ref.js";
import { DEFAULT_OPENBAO_AUDIENCE } from "../../../config.js";
import { jwtMounts } from "../../../executor/contract.js";
import { Component, revisionNames, voterSetName } from "../../../identity.js";
import { clusterKey, LoginTokens } from "../../../login-tokens.js";
import { serviceAccountToken } from "../../../serviceaccount-token.js";
import { ensureExecutorServiceAccount } from "../../jobs/snapshot-upload.js";
import { upgradeServiceAccount } from "../snapshot/plan.js";
import { type BaoAccess, podClient } from "./observe.js";

const tokens = new LoginTokens();

/** A fresh (or still valid) OpenBao token for `role`; throws with the reason when login fails. */
export async function jwtUpgradeToken(
  client: KubeClient,
  access: BaoAccess,
  cluster: OpenBaoCluster,
  role: string,
  /** Wall-clock milliseconds of the injected clock: how long a cached token is still reused. */
  now: number,
  signal?: AbortSignal,
): Promise<string> {
  const ns = cluster.metadata.namespace!;
  const key = `${clusterKey(cluster)}${role}`;
  const kept = tokens.get(key, now);
  if (kept) return kept;

  const sa = upgradeServiceAccount({ name: cluster.metadata.name!, namespace: ns });
  await ensureExecutorServiceAccount(client, cluster, sa, Component.Upgrade, signal);
  const audience = access.jwtAudience ?? DEFAULT_OPENBAO_AUDIENCE;
  const jwt = await serviceAccountToken(client, ns, sa, audience, signal);
  let last = "no voter answered";
  // Any member logs in for the cluster (a standby forwards to the active node).
  for (const pod of members(cluster)) {
    try {
      const member = await podClient(
        client,
        access,
        cluster,
        pod,
        (ep) => access.baoClient?.(ep) ?? new BaoClient(ep),
      );
      const { token, leaseSeconds } = await loginAtMounts(member, role, jwt, signal);
      tokens.keep(key, token, leaseSeconds, now);
      return token;
    } catch (e) {
      signal?.throwIfAborted();
      last = errorMessage(e);
    }
  }
  const serving = servingRef(cluster);
  throw new Error(
    `spec.upgrade.jwtAuthRole: JWT login as ${JSON.stringify(role)} to ${serving.name} failed: ${last}`,
  );
}

/** The executor's mounts in its order (executor/contract.ts jwtMounts); every refusal is named. */
async function loginAtMounts(
  member: Pick<BaoClient, "jwtLogin">,
  role: string,
  jwt: string,
  signal?: AbortSignal,
): Promise<{ token: string; leaseSeconds: number }> {
  const refused: string[] = [];
  for (const mount of jwtMounts(undefined)) {
    try {
      return await member.jwtLogin(mount, role, jwt, signal);
    } catch (e) {
      signal?.throwIfAborted();
      refused.push(`at auth/${mount}: ${errorMessage(e)}`);
    }
  }
  throw new Error(refused.join("; "));
}

/**
 * The voter pods to try, serving revision first, then a blue-green upgrade's green revision (after
 * Cleanup began, blue's pods are going or gone).
 */
function members(cluster: OpenBaoCluster): string[] {
  const bg = cluster.status?.blueGreen;
  const serving = voterSetName(servingRef(cluster));
  const blue = Math.max(bg?.blueReplicas ?? cluster.spec.replicas ?? 3, 1);
  const pods = Array.from({ length: blue }, (_, i) => `${serving}-${i}`);
  if (bg?.greenRevision) {
    const green = revisionNames(refOf(cluster), bg.greenRevision).statefulSet;
    for (let i = 0; i < (bg.greenReplicas ?? 0); i++) pods.push(`${green}-${i}`);
  }
  return pods;
}

/** Forgets `cluster`'s cached tokens, so the next pass logs in again. */
export function forgetJwtToken(cluster: OpenBaoCluster): void {
  tokens.forget(clusterKey(cluster));
}
