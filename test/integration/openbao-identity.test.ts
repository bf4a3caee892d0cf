import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { SERVICE_ACCOUNT, STATEFULSET } from "../../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../../src/runtime/client.js";
import { isForbidden } from "../../src/runtime/errors.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { reconcileIdentity } from "../../src/targets/openbao/workload/identity/reconcile.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { tokenCredentials } from "../support/credentials.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import {
  createOpenBaoCluster,
  installOpenBaoClusterCrd,
  serviceContext,
} from "../support/openbao-cluster.js";
import { ROLE, ROLE_BINDING } from "../support/rbac.js";

// The identity service on the real API server, checked the way OpenBao will use it: with a token of
// the ServiceAccount it made, the pods' own labels can be read and patched; another pod cannot be
// patched and no pod can be deleted. A second pass writes nothing.

const POD: ResourceType = { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true };
const pod = (name: string, ns: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: ns },
  spec: { containers: [{ name: "c", image: "busybox:1.35.0" }] },
});

describe("openbao identity service on the real API server", () => {
  let admin: KubeClient;
  let ns: string;
  let cluster: OpenBaoCluster;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    ns = await freshNamespace(admin, "ot-identity");
    cluster = await createOpenBaoCluster(admin, ns, "bao", { replicas: 1 });
    // Pods are only API objects here (no node on this server), enough for authorization. Their
    // admission wants the namespace's default ServiceAccount, which no controller may have made yet.
    await admin.apply(
      SERVICE_ACCOUNT,
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: ns } },
      { fieldManager: "test-setup", force: true },
    );
    await admin.create(POD, pod("bao-0", ns));
    await admin.create(POD, pod("somebody-else", ns));
  });
  after(async () => {
    await admin.delete(NAMESPACE, ns).catch(() => {});
    admin.close();
  });

  it("grants OpenBao's service registration its own pods and nothing more", async () => {
    const ctx = serviceContext(admin, cluster, "openbao-identity");
    const out = await reconcileIdentity(ctx, cluster);
    assert.equal(out.ready, true, out.message);
    for (const [type, name] of [
      [SERVICE_ACCOUNT, "bao-serviceaccount"],
      [ROLE, "bao-serviceaccount-role"],
      [ROLE_BINDING, "bao-serviceaccount-rolebinding"],
    ] as const) {
      const o = await admin.get(type, name, ns);
      assert.equal(o.metadata.ownerReferences?.find((r) => r.controller)?.uid, cluster.metadata.uid, name);
    }
    const token = (
      await admin.request<{ status: { token: string } }>({
        method: "POST",
        path: admin.resourcePath(SERVICE_ACCOUNT, ns, "bao-serviceaccount", "token"),
        body: {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { expirationSeconds: 600 },
        },
      })
    ).status.token;
    const asBao = new KubeClient(
      tokenCredentials(loadKubeConfig(sharedEnv().kubeconfigPath), token),
      "openbao-as-pod",
    );
    try {
      // What service registration does: read its pod, then patch its labels.
      await eventually(
        async () => {
          await asBao.mergePatch(POD, "bao-0", ns, { metadata: { labels: { "openbao-active": "true" } } });
          return true;
        },
        30_000,
        "the ServiceAccount allowed to patch bao-0",
      );
      const self = await asBao.get(POD, "bao-0", ns);
      assert.equal(self.metadata.labels?.["openbao-active"], "true");
      await assert.rejects(
        asBao.mergePatch(POD, "somebody-else", ns, { metadata: { labels: { x: "y" } } }),
        (e: unknown) => isForbidden(e),
      );
      await assert.rejects(asBao.delete(POD, "bao-0", ns), (e: unknown) => isForbidden(e));
      await assert.rejects(asBao.list(POD, { namespace: ns }), (e: unknown) => isForbidden(e));
    } finally {
      asBao.close();
    }

    const versions = async () =>
      Promise.all([
        admin.get(SERVICE_ACCOUNT, "bao-serviceaccount", ns),
        admin.get(ROLE, "bao-serviceaccount-role", ns),
        admin.get(ROLE_BINDING, "bao-serviceaccount-rolebinding", ns),
      ]).then((all) => all.map((o) => o.metadata.resourceVersion));
    const before = await versions();
    const quiet = await reconcileIdentity(ctx, cluster);
    assert.deepEqual(quiet.changes, []);
    assert.deepEqual(await versions(), before, "an unchanged cluster costs no write");
  });

  // A cluster from before upstream's names: its pods run as ServiceAccount `<name>`, whose grant is
  // the Role and RoleBinding `<name>-service-registration`. They go only once no StatefulSet of the
  // cluster asks for that account and every one has rolled out; until then registration keeps working.
  it("retires the old ServiceAccount and its grant once the StatefulSets have rolled away from it", async () => {
    const old = await createOpenBaoCluster(admin, ns, "old", { replicas: 1 });
    const owner = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      name: "old",
      uid: old.metadata.uid!,
      controller: true,
    };
    const meta = (name: string) => ({
      name,
      namespace: ns,
      labels: { "openbao.org/cluster": "old" },
      ownerReferences: [owner],
    });
    await admin.create(SERVICE_ACCOUNT, { apiVersion: "v1", kind: "ServiceAccount", metadata: meta("old") });
    const rbac = "rbac.authorization.k8s.io/v1";
    await admin.create(ROLE, {
      apiVersion: rbac,
      kind: "Role",
      metadata: meta("old-service-registration"),
      rules: [],
    });
    await admin.create(ROLE_BINDING, {
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: meta("old-service-registration"),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "old-service-registration" },
      subjects: [{ kind: "ServiceAccount", name: "old", namespace: ns }],
    });
    const selector = { "openbao.org/cluster": "old", "openbao.org/component": "server" };
    const set = (account: string) => ({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: meta("old"),
      spec: {
        serviceName: "old-internal",
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: selector },
          spec: { serviceAccountName: account, containers: [{ name: "c", image: "busybox:1.35.0" }] },
        },
      },
    });
    const sts = await admin.create(STATEFULSET, set("old"));
    const legacy = async () =>
      Promise.all([
        admin.getOrUndefined(SERVICE_ACCOUNT, "old", ns),
        admin.getOrUndefined(ROLE, "old-service-registration", ns),
        admin.getOrUndefined(ROLE_BINDING, "old-service-registration", ns),
      ]).then((all) => all.map((o) => o !== undefined));
    const ctx = serviceContext(admin, old, "openbao-identity");

    await reconcileIdentity(ctx, old);
    assert.deepEqual(await legacy(), [true, true, true], "kept while the pods run as the old account");

    // The template moved to the new account; the pods have not rolled yet.
    const moved = await admin.apply(STATEFULSET, set("old-serviceaccount"), {
      fieldManager: "test",
      force: true,
    });
    const status = (updated: number, current: string) =>
      admin.mergePatch(
        STATEFULSET,
        "old",
        ns,
        {
          status: {
            observedGeneration: moved.metadata.generation,
            replicas: 1,
            updatedReplicas: updated,
            currentRevision: current,
            updateRevision: "old-2",
          },
        },
        "status",
      );
    await status(0, "old-1");
    await reconcileIdentity(ctx, old);
    assert.deepEqual(await legacy(), [true, true, true], "kept while the rollout runs");
    assert.notEqual(moved.metadata.generation, sts.metadata.generation);

    await status(1, "old-2");
    const out = await reconcileIdentity(ctx, old);
    assert.deepEqual(await legacy(), [false, false, false], "retired once every pod runs as the new account");
    for (const line of [
      "RoleBinding/old-service-registration deleted",
      "Role/old-service-registration deleted",
      "ServiceAccount/old deleted",
    ])
      assert.ok(out.changes?.includes(line), `${line} in ${out.changes?.join(", ")}`);
  });
});
