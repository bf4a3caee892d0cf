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
