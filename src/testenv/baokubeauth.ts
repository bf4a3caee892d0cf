import { type BaoEndpoint, baoCall, baoRequest } from "./baohttp.js";
import { ensureNamespace, ensureServiceAccount, KubeHttp, requestServiceAccountToken } from "./kubehttp.js";

export interface KubeApiAccess {
  server: string;
  caPem: string;
  /** Admin kubeconfig, used to create the token reviewer. */
  kubeconfigPath: string;
}

export interface KubernetesAuthOptions {
  mount?: string;
  role: string;
  serviceAccount: string;
  namespace: string;
  /** Audience the login JWT must carry; OpenBao passes it on in the TokenReview. */
  audience?: string;
  policies: string[];
  /** Policy name → HCL, written before the role. */
  policyHcl?: Record<string, string>;
  ttl?: string;
  /**
   * Tokens without OpenBao's `default` policy (the role's token_no_default_policy): OpenBao builds
   * each request's ACL from all of a token's policies, and the default one is most of that work.
   */
  noDefaultPolicy?: boolean;
}

export const REVIEWER_NAMESPACE = "testenv-system";
export const REVIEWER_SERVICE_ACCOUNT = "openbao-token-reviewer";

/**
 * Points a kubernetes auth mount at the harness API server. OpenBao reviews login JWTs with its own
 * long-lived reviewer token rather than the client's JWT: a login JWT carries the audience OpenBao
 * expects (e.g. "vault"), which the API server does not accept as a credential for its own API.
 */
export async function configureKubernetesAuth(
  bao: BaoEndpoint,
  cp: KubeApiAccess,
  opts: KubernetesAuthOptions,
): Promise<{ mount: string; role: string }> {
  const mount = opts.mount ?? "kubernetes";
  const reviewerJwt = await tokenReviewerJwt(KubeHttp.fromKubeconfig(cp.kubeconfigPath));

  const existing = await baoCall(bao.addr, bao.rootToken, "GET", "sys/auth");
  if (!existing.data?.[`${mount}/`]) {
    await baoCall(bao.addr, bao.rootToken, "POST", `sys/auth/${mount}`, { type: "kubernetes" });
  }
  await baoCall(bao.addr, bao.rootToken, "POST", `auth/${mount}/config`, {
    kubernetes_host: cp.server,
    kubernetes_ca_cert: cp.caPem,
    token_reviewer_jwt: reviewerJwt,
    // OpenBao does not run in a Pod here; there is no local ServiceAccount token to fall back to.
    disable_local_ca_jwt: true,
  });
  for (const [name, policy] of Object.entries(opts.policyHcl ?? {})) {
    await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/acl/${name}`, { policy });
  }
  const role: Record<string, unknown> = {
    bound_service_account_names: [opts.serviceAccount],
    bound_service_account_namespaces: [opts.namespace],
    token_policies: opts.policies,
  };
  if (opts.audience) role["audience"] = opts.audience;
  if (opts.ttl) role["token_ttl"] = opts.ttl;
  if (opts.noDefaultPolicy) role["token_no_default_policy"] = true;
  await baoCall(bao.addr, bao.rootToken, "POST", `auth/${mount}/role/${opts.role}`, role);
  return { mount, role: opts.role };
}

/** A ServiceAccount allowed to call TokenReview, and a day-long token for it. */
async function tokenReviewerJwt(admin: KubeHttp): Promise<string> {
  await ensureNamespace(admin, REVIEWER_NAMESPACE);
  await ensureServiceAccount(admin, REVIEWER_NAMESPACE, REVIEWER_SERVICE_ACCOUNT);
  await admin.ensure("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    metadata: { name: `${REVIEWER_NAMESPACE}:${REVIEWER_SERVICE_ACCOUNT}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "ServiceAccount", name: REVIEWER_SERVICE_ACCOUNT, namespace: REVIEWER_NAMESPACE }],
  });
  return requestServiceAccountToken(admin, {
    namespace: REVIEWER_NAMESPACE,
    serviceAccount: REVIEWER_SERVICE_ACCOUNT,
    expirationSeconds: 24 * 3600,
  });
}

export interface LoginResult {
  ok: boolean;
  status: number;
  clientToken?: string;
  policies?: string[];
  errors?: string[];
}

/** Logs in with a JWT; a refusal is a result, not an exception, because tests assert on it. */
export async function kubernetesLogin(
  bao: { addr: string },
  opts: { mount?: string; role: string; jwt: string },
): Promise<LoginResult> {
  const res = await baoRequest(bao.addr, "POST", `auth/${opts.mount ?? "kubernetes"}/login`, {
    body: { role: opts.role, jwt: opts.jwt },
  });
  if (res.status === 200) {
    return {
      ok: true,
      status: 200,
      clientToken: res.body.auth.client_token,
      policies: res.body.auth.policies,
    };
  }
  return { ok: false, status: res.status, errors: res.body?.errors };
}
