import type { NodeNamespace } from "./node.js";

export interface JwtRole {
  name: string;
  /** The ServiceAccount (in the test's namespace) whose projected or requested token may log in. */
  serviceAccount: string;
  /** OpenBao policies the login's token gets. */
  policies: string[];
}

/**
 * Enables OpenBao's JWT auth at `jwt` on a cluster in the node (run in `pod` with the root token),
 * trusting the node API server's own ServiceAccount signing key: a pod cannot fetch the issuer's
 * JWKS anonymously, so the key is configured, as upstream allows. Then writes `role`, bound to one
 * ServiceAccount and the audience the operator's Jobs and logins use.
 */
export async function enableNodeJwtAuth(ctx: NodeNamespace, pod: string, rootToken: string, role: JwtRole) {
  const bao = (cmd: string, stdin?: unknown) =>
    ctx.kubectl(
      [
        "exec",
        ...(stdin === undefined ? [] : ["-i"]),
        pod,
        "--",
        "sh",
        "-c",
        `BAO_TOKEN=${rootToken} ${cmd}`,
      ],
      stdin === undefined ? undefined : JSON.stringify(stdin),
    );
  await bao("bao auth enable jwt");
  await bao("bao write auth/jwt/config -", {
    jwt_validation_pubkeys: [ctx.node.serviceAccountPublicKeyPem],
    bound_issuer: ctx.node.addresses.serviceAccountIssuer,
  });
  await bao(`bao write auth/jwt/role/${role.name} -`, {
    role_type: "jwt",
    bound_audiences: ["openbao-internal"],
    user_claim: "sub",
    bound_subject: `system:serviceaccount:${ctx.namespace}:${role.serviceAccount}`,
    token_policies: role.policies,
    token_ttl: "10m",
  });
}
