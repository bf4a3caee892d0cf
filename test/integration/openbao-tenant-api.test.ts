import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoTenant } from "../../src/apis/openbaotenant.js";
import { applyAny } from "../../src/runtime/apply.js";
import { CONFIGMAP, NAMESPACE, STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { registry } from "../../src/runtime/metrics.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { openbaoTarget } from "../../src/targets/openbao/target.js";
import { TenantObjectNames as N } from "../../src/targets/openbao/tenant/plan.js";
import { TenantProvisioner } from "../../src/targets/openbao/tenant/provisioner.js";
import { OPENBAOTENANT } from "../../src/targets/openbao/tenant/types.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { ApiForwarder } from "../support/api-forwarder.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  createOpenBaoCluster,
  installOpenBaoClusterCrd,
  installOpenBaoTenantCrd,
} from "../support/openbao-cluster.js";
import { metricSum, startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";
import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  clientWithToken,
  serviceAccountAllowed,
  serviceAccountToken,
} from "../support/rbac.js";

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
  const can = (verb: string, resource: string, name?: string, group = ""): Promise<boolean> =>
    serviceAccountAllowed(
      client,
      opNs,
      SA,
      { resourceAttributes: { namespace: target, group, verb, resource, ...(name ? { name } : {}) } },
      ["system:authenticated"],
    );
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

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
const RUN_LABEL = "tests.platform-operator/tenant-run";

describe("openbao tenant mode in the running operator (tenants.enabled)", () => {
  let client: KubeClient;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;
  let opNs: string;
  let watched: string;
  let target: string;
  let lonely: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    await installOpenBaoTenantCrd(client);
    opNs = await freshNamespace(client, "tenant-run-op");
    watched = await freshNamespace(client, "tenant-run-w");
    target = await freshNamespace(client, "tenant-run-t");
    lonely = await freshNamespace(client, "tenant-run-n");
    op = await startOpenBaoOperatorOnApi(
      sharedEnv().kubeconfigPath,
      watched,
      // Only this file's clusters: the operator sees every namespace's, others' files included.
      `    tenants: { enabled: true, serviceAccount: po-openbao, operatorNamespace: ${opNs}, clusterSelector: "${RUN_LABEL}=${opNs}" }\n`,
    );
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  const RUN = () => ({ [RUN_LABEL]: opNs });
  const cluster = (ns: string) => client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, "bao", ns);
  const available = async (ns: string) =>
    (await cluster(ns))?.status?.conditions?.find((c) => c.type === "Available");
  const children = async (ns: string) => ({
    statefulSets: (await client.list(STATEFULSET, { namespace: ns })).items.length,
    configMaps: (await client.list(CONFIGMAP, { namespace: ns })).items.filter(
      (c) => c.metadata.labels?.["openbao.org/cluster"],
    ).length,
  });
  const clusterWarnings = async (ns: string): Promise<Json[]> =>
    ((await client.list(EVENTS, { namespace: ns })).items as Json[]).filter(
      (e) =>
        e["regarding"]?.kind === "OpenBaoCluster" &&
        e["type"] === "Warning" &&
        e["reason"] === "TenantNotProvisioned",
    );
  const waitsForTenant = (ns: string) =>
    eventually(
      async () => {
        const c = await available(ns);
        return c?.reason === "TenantNotProvisioned" ? c : undefined;
      },
      60_000,
      `the cluster in ${ns} waiting for its tenant`,
    );
  const namespacesChanged = (key: "added" | "removed", ns: string) =>
    op!
      .output()
      .split("\n")
      .some((l) => l.includes('"namespaces changed"') && new RegExp(`"${key}":\\[[^\\]]*"${ns}"`).test(l));

  it("a cluster in a namespace no tenant onboards waits, saying what is missing, and nothing is created there", async () => {
    await createOpenBaoCluster(client, lonely, "bao", {}, RUN());
    await createOpenBaoCluster(client, target, "bao", {}, RUN());
    const c = await waitsForTenant(lonely);
    assert.equal(c.status, "False");
    assert.match(c.message, new RegExp(`namespace ${lonely} is not onboarded: no OpenBaoTenant names it`));
    assert.match(c.message, new RegExp(`create one in namespace ${opNs}`));
    await eventually(async () => (await clusterWarnings(lonely)).length > 0, 30_000, "the Warning event");
    assert.equal((await waitsForTenant(target)).status, "False");
    assert.deepEqual(await children(lonely), { statefulSets: 0, configMaps: 0 });
    assert.equal((await cluster(lonely))?.metadata.finalizers, undefined, "no finalizer either");
    assert.deepEqual(await children(target), { statefulSets: 0, configMaps: 0 });
  });

  it("a tenant onboards a namespace the operator did not watch: it is watched at once and its cluster reconciled", async () => {
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
    await eventually(async () => (await children(target)).statefulSets > 0, 90_000, "the StatefulSet");
    assert.ok((await children(target)).configMaps > 0, "the cluster's ConfigMap");
    assert.ok(namespacesChanged("added", target), "the target namespace added to the watched ones");
    // The pass that created the StatefulSet writes the status at its end.
    await eventually(
      async () => ((await available(target))?.reason !== "TenantNotProvisioned" ? true : undefined),
      60_000,
      "the cluster's status past TenantNotProvisioned",
    );
    // The other namespace still has no tenant: still waiting, still nothing there.
    assert.equal((await available(lonely))?.reason, "TenantNotProvisioned");
    assert.deepEqual(await children(lonely), { statefulSets: 0, configMaps: 0 });
  });

  it("deleting the tenant offboards it once its cluster is gone, and the namespace stops being watched", async () => {
    await client.delete(OPENBAOTENANT, "run", opNs);
    await eventually(
      async () => {
        const got = await client.getOrUndefined<OpenBaoTenant>(OPENBAOTENANT, "run", opNs);
        return got?.status?.conditions?.find((c) => c.reason === "ClustersRemain");
      },
      60_000,
      "the tenant waiting for the cluster",
    );
    assert.ok(await client.getOrUndefined(ROLE_BINDING, N.roleBinding, target), "access stays meanwhile");
    assert.ok(!namespacesChanged("removed", target), "still watched while the cluster remains");
    await client.delete(OPENBAOCLUSTER, "bao", target);
    await eventually(
      async () => (await client.getOrUndefined(OPENBAOTENANT, "run", opNs)) === undefined,
      90_000,
      "the tenant offboarded",
    );
    assert.equal(await cluster(target), undefined, "the cluster's finalizer was removed by the operator");
    assert.equal(await client.getOrUndefined(ROLE_BINDING, N.roleBinding, target), undefined);
    assert.ok(await client.getOrUndefined(QUOTA, N.resourceQuota, target));
    await eventually(() => namespacesChanged("removed", target), 30_000, "the namespace no longer watched");
    // A new cluster there waits again, for a tenant.
    await createOpenBaoCluster(client, target, "again", {}, RUN());
    await eventually(
      async () =>
        (
          await client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, "again", target)
        )?.status?.conditions?.find((c) => c.type === "Available" && c.reason === "TenantNotProvisioned"),
      60_000,
      "the new cluster waiting for a tenant",
    );
  });
});

describe("openbao tenant provisioner as the chart's ServiceAccount (tenancy.mode multi), on the API server's RBAC", () => {
  let admin: KubeClient;
  let sa: KubeClient;
  let opNs: string;
  let target: string;
  let provisioner: TenantProvisioner;
  let events: EventRecorder;
  const NAME = "po-openbao";

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    await installOpenBaoTenantCrd(admin);
    opNs = await freshNamespace(admin, "tenant-rbac-op");
    target = await freshNamespace(admin, "tenant-rbac-t");
    const helm = await ensureHelm();
    const out = await runCommand(helm, [
      "template",
      "po",
      CHART,
      "--namespace",
      opNs,
      "--set=targets.vault.enabled=false",
      "--set=targets.openbao.enabled=true",
      "--set=tenancy.mode=multi",
    ]);
    // Only the chart's RBAC: the provisioner runs in this process, as the chart's ServiceAccount.
    const rbacKinds = ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"];
    for (const doc of parseAllDocuments(out.stdout)) {
      const o = doc.toJS() as Json | null;
      if (o && rbacKinds.includes(o["kind"])) await applyAny(admin, o as never, { fieldManager: "tests" });
    }
    sa = clientWithToken(admin, await serviceAccountToken(admin, opNs, NAME));
    // The authorizer reads bindings from its own cache: wait until it knows the grant by name.
    await eventually(
      async () =>
        (await reviewAs(admin, opNs, NAME, {
          namespace: target,
          group: "rbac.authorization.k8s.io",
          resource: "roles",
          verb: "escalate",
          name: N.role,
        })) &&
        (await reviewAs(admin, opNs, NAME, {
          namespace: opNs,
          group: "openbao.org",
          resource: "openbaotenants",
          verb: "patch",
        })),
      30_000,
      "the chart's grant in effect",
    );
    events = new EventRecorder(sa, "platform-operator/openbao", "test", silentLogger());
    provisioner = new TenantProvisioner({
      client: sa,
      events,
      operator: { namespace: opNs, serviceAccount: NAME },
    });
  });
  after(async () => {
    await events?.flush();
    for (const kind of [CLUSTER_ROLE_BINDING, CLUSTER_ROLE])
      await admin?.delete(kind, `${opNs}-po-openbao`).catch(() => undefined);
    sa?.close();
    admin?.close();
  });

  it("onboards a namespace with exactly the Roles it plans, and offboards it", async () => {
    // A cluster that reads a Secret by reference: the reader Role is planned too.
    await createOpenBaoCluster(admin, target, "bao", {
      tls: { mode: "External" },
    });
    await admin.create<OpenBaoTenant>(OPENBAOTENANT, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoTenant",
      metadata: { name: "a", namespace: opNs },
      spec: { targetNamespace: target },
    });
    await provisioner.reconcile(await admin.get<OpenBaoTenant>(OPENBAOTENANT, "a", opNs));
    const t = await admin.get<OpenBaoTenant>(OPENBAOTENANT, "a", opNs);
    assert.equal(t.status?.lastError, undefined);
    assert.equal(t.status?.provisioned, true);
    for (const name of [N.role, N.secretsWriterRole, N.secretsReaderRole])
      assert.ok(await admin.getOrUndefined(ROLE, name, target), name);
    for (const name of [N.roleBinding, N.secretsWriterRoleBinding, N.secretsReaderRoleBinding])
      assert.ok(await admin.getOrUndefined(ROLE_BINDING, name, target), name);
    // Least privilege: the ServiceAccount may not write any other Role, nor bind one.
    assert.equal(
      await reviewAs(admin, opNs, NAME, {
        namespace: target,
        group: "rbac.authorization.k8s.io",
        resource: "roles",
        verb: "escalate",
        name: "admin-ish",
      }),
      false,
    );
    assert.equal(
      await reviewAs(admin, opNs, NAME, {
        namespace: target,
        group: "rbac.authorization.k8s.io",
        resource: "clusterroles",
        verb: "bind",
        name: "cluster-admin",
      }),
      false,
    );
    await admin.delete(OPENBAOCLUSTER, "bao", target);
    await admin.delete(OPENBAOTENANT, "a", opNs);
    await eventually(
      async () => !(await admin.getOrUndefined(OPENBAOCLUSTER, "bao", target)),
      20_000,
      "the cluster gone",
    );
    await provisioner.reconcile(await admin.get<OpenBaoTenant>(OPENBAOTENANT, "a", opNs));
    assert.equal(await admin.getOrUndefined(OPENBAOTENANT, "a", opNs), undefined);
    for (const name of [N.role, N.secretsWriterRole, N.secretsReaderRole])
      assert.equal(await admin.getOrUndefined(ROLE, name, target), undefined, name);
  });
});

describe("openbao tenant provisioner: a settled tenant's pass sends no request", () => {
  let admin: KubeClient;
  let fwd: ApiForwarder;
  let client: KubeClient;
  let manager: Manager;
  let opNs: string;
  let target: string;
  const passes = async () =>
    metricSum(await registry.metrics(), "controller_runtime_reconcile_total", {
      controller: "openbaotenant",
    });

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    await installOpenBaoTenantCrd(admin);
    opNs = await freshNamespace(admin, "tenant-quiet-op");
    const watched = await freshNamespace(admin, "tenant-quiet-w");
    target = await freshNamespace(admin, "tenant-quiet-t");
    fwd = await ApiForwarder.start(sharedEnv().kubeconfigPath, {});
    client = fwd.client();
    manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [watched] });
    const config = parseOpenBaoConfig(
      {
        pollInterval: "1s",
        resyncInterval: "1s",
        // No other file's clusters: the tenant's pass is the only one here.
        tenants: {
          enabled: true,
          serviceAccount: "po-openbao",
          operatorNamespace: opNs,
          clusterSelector: `${RUN_LABEL}=${opNs}`,
        },
      },
      "targets.openbao",
    );
    await openbaoTarget().setup(manager, config);
    await manager.start();
  });
  after(async () => {
    await manager?.stop();
    client?.close();
    await fwd?.close();
    admin?.close();
  });

  it("re-applies nothing and reads from the informers once the tenant is provisioned", {
    timeout: 180_000,
  }, async () => {
    await admin.create<OpenBaoTenant>(OPENBAOTENANT, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoTenant",
      metadata: { name: "quiet", namespace: opNs },
      spec: { targetNamespace: target },
    });
    await eventually(
      async () =>
        (await admin.get<OpenBaoTenant>(OPENBAOTENANT, "quiet", opNs)).status?.provisioned ? true : undefined,
      60_000,
      "the tenant provisioned",
    );
    // Settled: two passes in a row without a write.
    let mark = fwd.requests.length;
    let from = await passes();
    await eventually(
      async () => {
        const writes = fwd.requests.slice(mark).filter((r) => r.method !== "GET");
        const now = await passes();
        if (writes.length > 0) {
          mark = fwd.requests.length;
          from = now;
          return undefined;
        }
        return now >= from + 2 ? true : undefined;
      },
      120_000,
      "two passes in a row without a write",
    );
    await manager.discoverySettled();
    await manager.events.flush();
    const start = fwd.requests.length;
    const before = await passes();
    await eventually(
      async () => ((await passes()) >= before + 5 ? true : undefined),
      60_000,
      "5 quiet passes",
    );
    const quiet = fwd.requests
      .slice(start)
      .filter((r) => r.query.get("watch") !== "true")
      .map((r) => `${r.method} ${r.path}`);
    const count = (await passes()) - before;
    process.stdout.write(
      `# API requests per settled tenant pass: ${(quiet.length / count).toFixed(1)} over ${count} passes\n`,
    );
    assert.deepEqual(quiet, [], "requests during settled passes");
  });
});

function reviewAs(
  admin: KubeClient,
  namespace: string,
  serviceAccount: string,
  attributes: { namespace: string; group: string; resource: string; verb: string; name?: string },
): Promise<boolean> {
  return serviceAccountAllowed(admin, namespace, serviceAccount, { resourceAttributes: attributes }, [
    "system:authenticated",
  ]);
}
