import { SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { tokenCredentials } from "./credentials.js";

const rbac = (plural: string, kind: string, namespaced: boolean): ResourceType => ({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind,
  plural,
  namespaced,
});
export const ROLE = rbac("roles", "Role", true);
export const ROLE_BINDING = rbac("rolebindings", "RoleBinding", true);
export const CLUSTER_ROLE = rbac("clusterroles", "ClusterRole", false);
export const CLUSTER_ROLE_BINDING = rbac("clusterrolebindings", "ClusterRoleBinding", false);

export type PolicyRule = {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
};

/** Creates a ServiceAccount and returns a short-lived token for it from the TokenRequest API. */
export async function serviceAccountToken(
  admin: KubeClient,
  namespace: string,
  name: string,
): Promise<string> {
  await admin.apply(
    SERVICE_ACCOUNT,
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
    { fieldManager: "tests" },
  );
  const res = await admin.request<{ status: { token: string } }>({
    method: "POST",
    path: admin.resourcePath(SERVICE_ACCOUNT, namespace, name, "token"),
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  });
  return res.status.token;
}

/** Grants `rules` to a ServiceAccount in its namespace (Role + RoleBinding). */
export async function grantInNamespace(
  admin: KubeClient,
  namespace: string,
  serviceAccount: string,
  roleName: string,
  rules: PolicyRule[],
): Promise<void> {
  await admin.apply(
    ROLE,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: roleName, namespace },
      rules,
    },
    { fieldManager: "tests" },
  );
  await admin.apply(
    ROLE_BINDING,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: roleName, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
      subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
    },
    { fieldManager: "tests" },
  );
  await untilGranted(admin, namespace, serviceAccount, rules, namespace);
}

/** Grants cluster-wide `rules` (non-resource URLs need a ClusterRole). */
export async function grantClusterWide(
  admin: KubeClient,
  namespace: string,
  serviceAccount: string,
  roleName: string,
  rules: PolicyRule[],
): Promise<void> {
  await admin.apply(
    CLUSTER_ROLE,
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: roleName }, rules },
    { fieldManager: "tests" },
  );
  await admin.apply(
    CLUSTER_ROLE_BINDING,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: roleName },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
      subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
    },
    { fieldManager: "tests" },
  );
  await untilGranted(admin, namespace, serviceAccount, rules, undefined);
}

/**
 * What the authorizer answers for a ServiceAccount (a SubjectAccessReview with the groups its token
 * carries, and `extraGroups`): whether its pod may do what `attributes` say
 * ({ resourceAttributes } or { nonResourceAttributes }).
 */
export async function serviceAccountAllowed(
  admin: KubeClient,
  namespace: string,
  serviceAccount: string,
  attributes: Record<string, unknown>,
  extraGroups: string[] = [],
): Promise<boolean> {
  const review = await admin.request<{ status?: { allowed?: boolean } }>({
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, ...extraGroups],
        ...attributes,
      },
    },
  });
  return review.status?.allowed === true;
}

/**
 * The API server's RBAC authorizer reads Roles and bindings from its own informers, so a grant
 * takes effect a moment after it is written. Asks the authorizer (SubjectAccessReview) about every
 * verb the rules name until it allows them all, so a test's next request meets the new grant.
 */
async function untilGranted(
  admin: KubeClient,
  namespace: string,
  serviceAccount: string,
  rules: PolicyRule[],
  scope: string | undefined,
): Promise<void> {
  const questions: Record<string, unknown>[] = [];
  for (const rule of rules) {
    for (const verb of rule.verbs) {
      for (const path of rule.nonResourceURLs ?? []) {
        questions.push({ nonResourceAttributes: { path: path.replace(/\*$/, ""), verb } });
      }
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          const [plural, subresource] = resource.split("/", 2);
          questions.push({
            resourceAttributes: { namespace: scope, verb, group, resource: plural, subresource },
          });
        }
      }
    }
  }
  const deadline = Date.now() + 30_000;
  for (const attributes of questions) {
    for (;;) {
      if (await serviceAccountAllowed(admin, namespace, serviceAccount, attributes)) break;
      if (Date.now() > deadline) {
        throw new Error(
          `the grant to system:serviceaccount:${namespace}:${serviceAccount} did not take effect within 30 s: ${JSON.stringify(attributes)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A client for the same API server as `admin`, authenticating with a bearer token. */
export function clientWithToken(admin: KubeClient, token: string, server?: string): KubeClient {
  return new KubeClient(tokenCredentials(admin.credentials, token, server), "platform-operator-tests");
}
