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
import { SERVICE_ACCOUNT } from "../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { BaoClient } from "../baoclient/client.js";
import { DEFAULT_JWT_MOUNT_PATH } from "../executor/contract.js";
import { OidcRole } from "../oidc-roles.js";
import { OIDC_DEFAULT_AUDIENCE } from "../workload/config/oidc-bootstrap.js";
import { operatorSubject, subjectServiceAccount } from "./oidc-facts.js";

/** How long the ServiceAccount token asked for lives (the API server's minimum is 10 minutes). */
const SA_TOKEN_SECONDS = 600;
/** A cached OpenBao token is dropped this long before it expires. */
const EXPIRY_MARGIN_MS = 60_000;
/** The longest a token is reused, whatever its lease: a token revoked by hand is replaced soon. */
const MAX_REUSE_MS = 5 * 60_000;

const cache = new Map<string, { token: string; until: number }>();

/** The audience the bootstrapped operator role is bound to. */
export const operatorAudience = (c: OpenBaoCluster): string => {
  const a = c.spec.selfInit?.oidc?.audience;
  return (typeof a === "string" ? a.trim() : "") || OIDC_DEFAULT_AUDIENCE;
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
): Promise<string | undefined> {
  if (!sa) return undefined;
  const audience = operatorAudience(cluster);
  const key = `${cluster.metadata.uid ?? `${cluster.metadata.namespace}/${cluster.metadata.name}`}/${sa.namespace}/${sa.name}/${audience}`;
  for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
  const hit = cache.get(key);
  if (hit) return hit.token;
  const answer = await client.request<{ status?: { token?: string } }>({
    method: "POST",
    path: client.resourcePath(SERVICE_ACCOUNT, sa.namespace, sa.name, "token"),
    body: {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: [audience], expirationSeconds: SA_TOKEN_SECONDS },
    },
    signal,
  });
  const jwt = answer.status?.token;
  if (!jwt) throw new Error(`TokenRequest for ServiceAccount ${sa.namespace}/${sa.name} returned no token`);
  const { token, leaseSeconds } = await (await bao()).jwtLogin(
    DEFAULT_JWT_MOUNT_PATH,
    OidcRole.operator,
    jwt,
    signal,
  );
  const reuse =
    leaseSeconds > 0 ? Math.min(leaseSeconds * 1000 - EXPIRY_MARGIN_MS, MAX_REUSE_MS) : MAX_REUSE_MS;
  if (reuse > 0) cache.set(key, { token, until: now + reuse });
  return token;
}

/** Forgets `cluster`'s cached operator tokens (after OpenBao refused one). */
export function forgetOperatorJwt(cluster: OpenBaoCluster): void {
  const prefix = `${cluster.metadata.uid ?? `${cluster.metadata.namespace}/${cluster.metadata.name}`}/`;
  for (const k of cache.keys()) if (k.startsWith(prefix)) cache.delete(k);
}
