import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// Tenant mode on the local node with real OpenBao: the operator watches only its own namespace at
// start; a tenant there onboards a second namespace, which gets its Role, ResourceQuota, LimitRange
// and Pod Security `restricted` labels. A 1-voter cluster in that namespace then forms under all
// three (every container fits the quota through the limit range's defaults or its own resources,
// and passes `restricted` admission); deleting cluster and tenant offboards the namespace.

const NAME = "tenanted";
const TENANT_CRD = fileURLToPath(
  new URL("../../../deploy/crds/openbao.org_openbaotenants.yaml", import.meta.url),
);
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao tenant mode: a cluster forms in an onboarded namespace", { timeout: 30 * 60_000 }, () => {
  let op: NodeNamespace;
  let team: NodeNamespace;
  let untenanted: NodeNamespace;
  let operator: OperatorProcess | undefined;

  before(async () => {
    op = await nodeNamespace("obtenant-op");
    team = await nodeNamespace("obtenant-t");
    untenanted = await nodeNamespace("obtenant-none");
    await installOpenBaoCrd(op);
    await op.kubectl(["apply", "--server-side", "--force-conflicts", "-f", TENANT_CRD]);
    await op.waitFor("crd/openbaotenants.openbao.org", "condition=Established", 120);
  });
  after(async () => {
    await operator?.stop();
    await deleteNamespace(team);
    await deleteNamespace(untenanted);
    await deleteNamespace(op);
  });

  it("onboards the namespace, the cluster forms under its quota, limits and Pod Security, and offboarding follows", async () => {
    operator = await startOpenBaoOperator(op, {
      pollInterval: "2s",
      resyncInterval: "5s",
      // Other files' clusters on the shared node are not this operator's.
      tenants: `{ enabled: true, serviceAccount: po-openbao, operatorNamespace: ${op.namespace}, clusterSelector: "tests.platform-operator/tenant=${op.namespace}" }`,
    });
    await op.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoTenant",
      metadata: { name: "team" },
      spec: { targetNamespace: team.namespace },
    });
    await op.waitFor("openbaotenant/team", "jsonpath={.status.provisioned}=true", 120);
    const ns = JSON.parse(await op.kubectl(["get", "namespace", team.namespace, "-o", "json"]));
    assert.equal(ns.metadata.labels["pod-security.kubernetes.io/enforce"], "restricted");

    await team.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME, labels: { "tests.platform-operator/tenant": op.namespace } },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 1, storage: { size: "128Mi" } },
    });
    // A cluster in a namespace no tenant onboards, at the same time: it waits and says why.
    await untenanted.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME, labels: { "tests.platform-operator/tenant": op.namespace } },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 1, storage: { size: "128Mi" } },
    });
    const started = performance.now();
    await team.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 900);
    await team.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 120);
    process.stdout.write(
      `# formed in ${((performance.now() - started) / 1000).toFixed(1)} s under the tenant\n`,
    );
    const waiting = await untenanted.getJson(`openbaocluster/${NAME}`);
    const available = (waiting.status?.conditions ?? []).find((c: Json) => c.type === "Available");
    assert.equal(available?.reason, "TenantNotProvisioned", JSON.stringify(waiting.status));
    assert.match(available?.message ?? "", new RegExp(untenanted.namespace));
    const made = JSON.parse(await untenanted.kubectl(["get", "statefulsets,pods", "-o", "json"])).items;
    assert.deepEqual(made, [], "nothing is created for a cluster whose namespace has no tenant");
    const warned = JSON.parse(
      await untenanted.kubectl(["get", "events.events.k8s.io", "-o", "json"]),
    ).items.some((e: Json) => e.reason === "TenantNotProvisioned" && e.type === "Warning");
    assert.ok(warned, "a Warning event says why it waits");
    await untenanted.kubectl(["delete", "openbaocluster", NAME, "--wait=true", "--timeout=120s"]);

    const quota = await team.getJson("resourcequota/openbao-operator-tenant-quota");
    assert.ok(Number(quota.status?.used?.pods ?? 0) >= 1, "the quota counts the cluster's pod");
    const pod = await team.getJson(`pod/${NAME}-0`);
    for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers] as Json[]) {
      assert.ok(c.resources?.limits?.memory && c.resources?.requests?.cpu, `${c.name}: requests and limits`);
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false, `${c.name}: restricted`);
    }

    await team.kubectl(["delete", "openbaocluster", NAME, "--wait=true", "--timeout=180s"]);
    await op.kubectl(["delete", "openbaotenant", "team", "--wait=true", "--timeout=180s"]);
    const left = JSON.parse(await team.kubectl(["get", "roles,rolebindings", "-o", "json"])).items.map(
      (o: Json) => o.metadata.name,
    );
    assert.ok(
      !left.some((n: string) => n.startsWith("openbao-operator-tenant")),
      `tenant RBAC removed: ${left}`,
    );
    await poll(
      async () =>
        operator!
          .output()
          .split("\n")
          .some((l) => l.includes('"namespaces changed"') && l.includes(`"removed":["${team.namespace}"]`))
          ? true
          : undefined,
      60_000,
      "the namespace no longer watched",
    );
  });
});
