import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoTenant } from "../../src/apis/openbaotenant.js";
import { NAMESPACE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { TenantObjectNames as N } from "../../src/targets/openbao/tenant/plan.js";
import { OPENBAOTENANT, TenantProvisioner } from "../../src/targets/openbao/tenant/provisioner.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  createOpenBaoCluster,
  installOpenBaoClusterCrd,
  installOpenBaoTenantCrd,
} from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// The tenant provisioner's pass against the real API server: what it writes in the target
// namespace, that the RoleBindings grant the openbao process exactly that (asked of the API
// server's own authorizer), the refusals, and the offboarding order.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const rbac = (kind: string, plural: string): ResourceType => ({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind,
  plural,
  namespaced: true,
});
const ROLE = rbac("Role", "roles");
const ROLE_BINDING = rbac("RoleBinding", "rolebindings");
const core = (kind: string, plural: string): ResourceType => ({
  group: "",
  version: "v1",
  kind,
  plural,
  namespaced: true,
});
const QUOTA = core("ResourceQuota", "resourcequotas");
const LIMITS = core("LimitRange", "limitranges");
const EVENTS: ResourceType = {
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};

describe("openbao tenant provisioner on the real API server", () => {
  let client: KubeClient;
  let opNs: string;
  let target: string;
  let events: EventRecorder;
  let provisioner: TenantProvisioner;
  const SA = "platform-operator-openbao";

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    await installOpenBaoTenantCrd(client);
    opNs = await freshNamespace(client, "tenant-op");
    target = await freshNamespace(client, "tenant-a");
    events = new EventRecorder(client, "platform-operator/openbao", "test", silentLogger());
    provisioner = new TenantProvisioner({
      client,
      events,
      operator: { namespace: opNs, serviceAccount: SA },
    });
  });
  after(async () => {
    await events?.flush();
    client?.close();
  });

  const createTenant = (ns: string, name: string, targetNamespace: string) =>
    client.create<OpenBaoTenant>(OPENBAOTENANT, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoTenant",
      metadata: { name, namespace: ns },
      spec: { targetNamespace },
    });
  const get = (ns: string, name: string) => client.get<OpenBaoTenant>(OPENBAOTENANT, name, ns);
  const provisioned = (t: OpenBaoTenant) => t.status?.conditions?.find((c) => c.type === "Provisioned");
  const can = async (verb: string, resource: string, name?: string, group = ""): Promise<boolean> => {
    const review = await client.request<Json>({
      method: "POST",
      path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: `system:serviceaccount:${opNs}:${SA}`,
          groups: ["system:serviceaccounts", `system:serviceaccounts:${opNs}`, "system:authenticated"],
          resourceAttributes: { namespace: target, group, verb, resource, ...(name ? { name } : {}) },
        },
      },
    });
    return review["status"]?.allowed === true;
  };
  const eventReasons = async (ns: string, name: string): Promise<string[]> =>
    ((await client.list(EVENTS, { namespace: ns })).items as Json[])
      .filter((e) => e["regarding"]?.kind === "OpenBaoTenant" && e["regarding"]?.name === name)
      .map((e) => String(e["reason"]));

  it("onboards a namespace: Roles, bindings, quota, limits and Pod Security labels, reported as Provisioned", async () => {
    await createOpenBaoCluster(client, target, "bao", {});
    await createTenant(opNs, "a", target);
    await provisioner.reconcile(await get(opNs, "a"));
    const t = await get(opNs, "a");
    assert.deepEqual(t.metadata.finalizers, ["openbao.org/openbaotenant-finalizer"]);
    assert.equal(t.status?.provisioned, true);
    assert.equal(t.status?.lastError, undefined);
    assert.equal(provisioned(t)?.status, "True");
    assert.equal(provisioned(t)?.reason, "Provisioned");
    for (const name of [N.role, N.secretsWriterRole])
      assert.ok(await client.getOrUndefined(ROLE, name, target), name);
    // The cluster uses no referenced Secret: no reader Role.
    assert.equal(await client.getOrUndefined(ROLE, N.secretsReaderRole, target), undefined);
    const rb = (await client.get(ROLE_BINDING, N.roleBinding, target)) as Json;
    assert.deepEqual(rb["subjects"], [{ kind: "ServiceAccount", name: SA, namespace: opNs }]);
    const quota = (await client.get(QUOTA, N.resourceQuota, target)) as Json;
    assert.equal(quota["spec"].hard.pods, "50");
    const limits = (await client.get(LIMITS, N.limitRange, target)) as Json;
    assert.equal(limits["spec"].limits[0].type, "Container");
    const ns = await client.get(NAMESPACE, target);
    assert.equal(ns.metadata.labels?.["pod-security.kubernetes.io/enforce"], "restricted");
    await eventually(
      async () => (await eventReasons(opNs, "a")).includes("Provisioned"),
      20_000,
      "the Provisioned event",
    );
  });

  it("grants the openbao process what it needs there, and Secrets only by the cluster's names", async () => {
    assert.equal(await can("create", "statefulsets", undefined, "apps"), true);
    assert.equal(await can("patch", "openbaoclusters", undefined, "openbao.org"), true);
    assert.equal(await can("list", "secrets"), true);
    assert.equal(await can("create", "secrets"), true);
    assert.equal(await can("patch", "secrets", "bao-root-token"), true);
    assert.equal(await can("patch", "secrets", "someone-elses"), false);
    assert.equal(await can("delete", "secrets", "bao-tls-ca"), true);
    assert.equal(await can("delete", "namespaces"), false);
  });

  it("refuses a tenant that names another namespace, touching nothing (SecurityViolation)", async () => {
    const other = await freshNamespace(client, "tenant-b");
    await createTenant(target, "sneaky", other);
    await provisioner.reconcile(await get(target, "sneaky"));
    const t = await get(target, "sneaky");
    assert.equal(t.status?.provisioned, false);
    assert.equal(provisioned(t)?.reason, "SecurityViolation");
    assert.match(t.status?.lastError ?? "", /may onboard only/);
    assert.equal(t.metadata.finalizers, undefined);
    assert.equal(await client.getOrUndefined(ROLE, N.role, other), undefined);
    await eventually(
      async () => (await eventReasons(target, "sneaky")).includes("SecurityViolation"),
      20_000,
      "the event",
    );
  });

  it("refuses kube-system and says a missing namespace is missing", async () => {
    await createTenant(opNs, "sys", "kube-system");
    await provisioner.reconcile(await get(opNs, "sys"));
    assert.equal(provisioned(await get(opNs, "sys"))?.reason, "NamespaceNotAllowed");
    assert.equal(await client.getOrUndefined(ROLE, N.role, "kube-system"), undefined);
    await createTenant(opNs, "nowhere", "tenant-missing-0");
    await provisioner.reconcile(await get(opNs, "nowhere"));
    const t = await get(opNs, "nowhere");
    assert.equal(provisioned(t)?.reason, "TargetNamespaceNotFound");
    assert.equal(t.status?.lastError, "target namespace tenant-missing-0 not found");
  });

  it("offboards only once no cluster remains; quota, limits and labels stay", async () => {
    await client.delete(OPENBAOTENANT, "a", opNs);
    await provisioner.reconcile(await get(opNs, "a"));
    const waiting = await get(opNs, "a");
    assert.equal(provisioned(waiting)?.reason, "ClustersRemain");
    assert.ok(await client.getOrUndefined(ROLE_BINDING, N.roleBinding, target));
    await client.delete(OPENBAOCLUSTER, "bao", target);
    await eventually(
      async () => !(await client.getOrUndefined(OPENBAOCLUSTER, "bao", target)),
      20_000,
      "the cluster gone",
    );
    await provisioner.reconcile(await get(opNs, "a"));
    assert.equal(await client.getOrUndefined(OPENBAOTENANT, "a", opNs), undefined);
    for (const [type, name] of [
      [ROLE, N.role],
      [ROLE_BINDING, N.roleBinding],
      [ROLE, N.secretsWriterRole],
      [ROLE_BINDING, N.secretsWriterRoleBinding],
    ] as const)
      assert.equal(await client.getOrUndefined(type, name, target), undefined, name);
    assert.ok(await client.getOrUndefined(QUOTA, N.resourceQuota, target));
    assert.ok(await client.getOrUndefined(LIMITS, N.limitRange, target));
    assert.equal(
      (await client.get(NAMESPACE, target)).metadata.labels?.["pod-security.kubernetes.io/enforce"],
      "restricted",
    );
    assert.equal(await can("create", "statefulsets", undefined, "apps"), false);
  });
});

describe("openbao tenant provisioning in the running operator (tenants.enabled)", () => {
  let client: KubeClient;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;
  let opNs: string;
  let watched: string;
  let target: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    await installOpenBaoTenantCrd(client);
    opNs = await freshNamespace(client, "tenant-run-op");
    watched = await freshNamespace(client, "tenant-run-w");
    target = await freshNamespace(client, "tenant-run-t");
    op = await startOpenBaoOperatorOnApi(
      sharedEnv().kubeconfigPath,
      watched,
      `    tenants: { enabled: true, serviceAccount: po-openbao, operatorNamespace: ${opNs} }\n`,
    );
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  it("provisions a tenant of the operator's namespace for a namespace it does not watch, and offboards it", async () => {
    await client.create<OpenBaoTenant>(OPENBAOTENANT, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoTenant",
      metadata: { name: "run", namespace: opNs },
      spec: { targetNamespace: target },
    });
    const t = await eventually(
      async () => {
        const got = await client.get<OpenBaoTenant>(OPENBAOTENANT, "run", opNs);
        return got.status?.provisioned ? got : undefined;
      },
      60_000,
      "the tenant provisioned",
    );
    assert.equal(t.status?.conditions?.find((c) => c.type === "Provisioned")?.status, "True");
    const rb = (await client.get(ROLE_BINDING, N.roleBinding, target)) as Json;
    assert.deepEqual(rb["subjects"], [{ kind: "ServiceAccount", name: "po-openbao", namespace: opNs }]);
    assert.match(op!.output(), /OpenBaoTenant provisioning is on/);
    await client.delete(OPENBAOTENANT, "run", opNs);
    await eventually(
      async () => (await client.getOrUndefined(OPENBAOTENANT, "run", opNs)) === undefined,
      60_000,
      "the tenant offboarded",
    );
    assert.equal(await client.getOrUndefined(ROLE_BINDING, N.roleBinding, target), undefined);
    assert.ok(await client.getOrUndefined(QUOTA, N.resourceQuota, target));
  });
});
