/**
 * The operator's own OpenBao token for a cluster that initialized itself (self-init revokes the root
 * token, so none is kept). selfInit.oidc bootstraps role `openbao-operator` at auth/jwt-operator,
 * bound to the operator's ServiceAccount and the spec's audience (workload/config/oidc-bootstrap.ts).
 * The operator asks the API server for a short-lived token of that ServiceAccount with that audience
 * (TokenRequest) and logs in through pod 0 (a standby forwards the login to the active node).
 *
 * Which ServiceAccount: the one the operator's own pod token names, or the configured
 * `operatorServiceAccount` outside a pod; neither means no login (undefined), said by the caller.
 * A token is kept in memory until shortly before it expires, so a pass every few seconds does not
 * log in each time. Nothing here is logged; errors name the role, the mount and the HTTP status only.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { BaoClient } from "../baoclient/client.js";
import { DEFAULT_OPENBAO_AUDIENCE } from "../config.js";
import { DEFAULT_JWT_MOUNT_PATH } from "../executor/contract.js";
import { clusterKey, LoginTokens } from "../login-tokens.js";
import { OidcRole } from "../oidc-roles.js";
import { serviceAccountToken } from "../serviceaccount-token.js";
import { operatorSubject, subjectServiceAccount } from "./oidc-facts.js";

const tokens = new LoginTokens();

/** The audience the bootstrapped operator role is bound to: the spec's, else the target's openBaoAudience. */
export const operatorAudience = (c: OpenBaoCluster, fallback = DEFAULT_OPENBAO_AUDIENCE): string => {
  const a = c.spec.selfInit?.oidc?.audience;
  return (typeof a === "string" ? a.trim() : "") || fallback;
};

/** Whom the operator logs in as: its configured ServiceAccount, else its pod's. */
export function operatorServiceAccount(configured?: {
  namespace: string;
  name: string;
}): { namespace: string; name: string } | undefined {
  if (configured) return configured;
  const own = operatorSubject().operatorSubject;
  return own ? subjectServiceAccount(own) : undefined;
}

/**
 * A fresh (or still valid) token of role `openbao-operator`, or undefined when the operator knows
 * no ServiceAccount of its own. Throws with the reason when the TokenRequest or the login fails.
 */
export async function operatorJwtToken(
  client: KubeClient,
  bao: () => Promise<Pick<BaoClient, "jwtLogin">>,
  cluster: OpenBaoCluster,
  sa: { namespace: string; name: string } | undefined,
  now: number,
  signal?: AbortSignal,
  /** The target's openBaoAudience, when the spec names no audience of its own. */
  defaultAudience?: string,
): Promise<string | undefined> {
  if (!sa) return undefined;
  const audience = operatorAudience(cluster, defaultAudience);
  const key = `${clusterKey(cluster)}${sa.namespace}/${sa.name}/${audience}`;
  const kept = tokens.get(key, now);
  if (kept) return kept;
  const jwt = await serviceAccountToken(client, sa.namespace, sa.name, audience, signal);
  const { token, leaseSeconds } = await (await bao()).jwtLogin(
    DEFAULT_JWT_MOUNT_PATH,
    OidcRole.operator,
    jwt,
    signal,
  );
  tokens.keep(key, token, leaseSeconds, now);
  return token;
}

/** Forgets `cluster`'s cached operator tokens (after OpenBao refused one). */
export function forgetOperatorJwt(cluster: OpenBaoCluster): void {
  tokens.forget(clusterKey(cluster));
}
