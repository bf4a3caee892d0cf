import { SERVICE_ACCOUNT } from "../../runtime/builtin-types.js";
import type { KubeClient } from "../../runtime/client.js";

/**
 * How long a token asked for to log in to OpenBao lives: the login happens at once, and OpenBao's
 * own token outlives it, so ten minutes (the API server's minimum) is plenty.
 */
const TOKEN_SECONDS = 600;

/**
 * A short-lived token of ServiceAccount `namespace/name` for `audience` (TokenRequest), as the JWT a
 * login at OpenBao's `jwt-operator` mount takes. Never logged: the caller hands it to OpenBao only.
 */
export async function serviceAccountToken(
  client: KubeClient,
  namespace: string,
  name: string,
  audience: string,
  signal?: AbortSignal,
): Promise<string> {
  const answer = await client.request<{ status?: { token?: string } }>({
    method: "POST",
    path: client.resourcePath(SERVICE_ACCOUNT, namespace, name, "token"),
    body: {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: [audience], expirationSeconds: TOKEN_SECONDS },
    },
    signal,
  });
  const token = answer.status?.token;
  if (!token) throw new Error(`TokenRequest for ServiceAccount ${namespace}/${name} returned no token`);
  return token;
}
