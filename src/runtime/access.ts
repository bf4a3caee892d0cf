import type { KubeClient } from "./client.js";
import type { ResourceType } from "./types.js";

interface AccessReview {
  status?: { allowed?: boolean };
}

/**
 * Whether this client may `verb` the type in every namespace at once (a SelfSubjectAccessReview, so
 * the API server's own authorizers answer, RBAC and webhooks alike).
 */
export async function mayClusterWide(client: KubeClient, type: ResourceType, verb: string): Promise<boolean> {
  const review = await client.request<AccessReview>({
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { verb, group: type.group, version: type.version, resource: type.plural } },
    },
  });
  return review.status?.allowed === true;
}
