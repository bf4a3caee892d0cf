import { SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";

/** The user name the API server authenticated this client as (SelfSubjectReview). */
export async function whoAmI(client: KubeClient): Promise<string> {
  const review = await client.request<{ status?: { userInfo?: { username?: string } } }>({
    method: "POST",
    path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  });
  const name = review.status?.userInfo?.username;
  if (!name) throw new Error("SelfSubjectReview returned no user name");
  return name;
}

/** A fresh ServiceAccount token from the TokenRequest API (the admin client asks for it). */
export async function serviceAccountToken(
  admin: KubeClient,
  namespace: string,
  name: string,
): Promise<string> {
  await admin.request({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
  });
  const res = await admin.request<{ status: { token: string } }>({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  });
  return res.status.token;
}

/**
 * What a Job's projected token volume holds for `sa` (made if missing): a TokenRequest with the
 * audience the volume names.
 */
export async function projectedToken(
  admin: KubeClient,
  namespace: string,
  sa: string,
  audience: string,
  expirationSeconds = 600,
): Promise<string> {
  await admin.apply(
    SERVICE_ACCOUNT,
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace } },
    { fieldManager: "test-setup", force: true },
  );
  const answer = await admin.request<{ status?: { token?: string } }>({
    method: "POST",
    path: admin.resourcePath(SERVICE_ACCOUNT, namespace, sa, "token"),
    body: {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: [audience], expirationSeconds },
    },
  });
  const token = answer.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${sa} returned no token`);
  return token;
}
