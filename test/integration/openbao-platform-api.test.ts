import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { type ControlPlane, startControlPlane } from "../../src/testenv/controlplane.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// The openbao target's `platform: auto` with the real operator process on a real API server (no
// node: the voter StatefulSet is written before any pod runs, which is all the platform changes).
// A control plane of its own: whether security.openshift.io is served is a fact of the whole API
// server, so installing it on the shared one would turn every openbao target started meanwhile by
// another test file into an OpenShift one, whatever the names used.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const CRD: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
};
const GROUP = "security.openshift.io";
/** Just enough of OpenShift's SecurityContextConstraints for discovery to serve its group. */
const SCC_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `securitycontextconstraints.${GROUP}` },
  spec: {
    group: GROUP,
    scope: "Cluster",
    names: {
      plural: "securitycontextconstraints",
      singular: "securitycontextconstraints",
      kind: "SecurityContextConstraints",
      listKind: "SecurityContextConstraintsList",
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
};
const IDS = ["runAsUser", "runAsGroup", "fsGroup"];

describe("openbao platform: auto on a real API server", () => {
  let cp: ControlPlane;
  let client: KubeClient;

  before(async () => {
    cp = await startControlPlane();
    client = clientFor(cp.kubeconfigPath);
    await installOpenBaoClusterCrd(client);
  });
  after(async () => {
    client?.close();
    await cp?.stop();
  });

  /** The operator on its own namespace with `extra` config; the platform it logged and its voter pod's security context. */
  const run = async (prefix: string, extra = "", spec: Json = {}): Promise<{ logged: Json; pod: Json }> => {
    const ns = await freshNamespace(client, prefix);
    const op = await startOpenBaoOperatorOnApi(cp.kubeconfigPath, ns, extra);
    try {
      const logged = await eventually(
        () =>
          op
            .output()
            .split("\n")
            .map((l) => (l.startsWith("{") ? (JSON.parse(l) as Json) : undefined))
            .find((l) => l?.["platform"] !== undefined && /target platform/.test(l["msg"] ?? "")),
        60_000,
        "the operator to log its platform",
      );
      await createOpenBaoCluster(client, ns, "bao", { replicas: 1, ...spec });
      const sts = await eventually(
        async () => (await client.get(STATEFULSET, "bao", ns).catch(() => undefined)) as Json | undefined,
        90_000,
        "the voter StatefulSet",
      );
      const found = op.output().match(/target platform/g) ?? [];
      assert.equal(found.length, 1, "the platform is logged once");
      return { logged, pod: sts["spec"].template.spec };
    } finally {
      await op.stop();
    }
  };

  it("without security.openshift.io: kubernetes, and the pods pin uid 100, gid 1000, fsGroup 1000", async () => {
    const { logged, pod } = await run("ob-plat-k8s");
    assert.equal(logged["platform"], "kubernetes");
    assert.equal(logged["detected"], true);
    assert.equal(logged["level"], "info");
    assert.equal(pod.securityContext.runAsUser, 100);
    assert.equal(pod.securityContext.runAsGroup, 1000);
    assert.equal(pod.securityContext.fsGroup, 1000);
  });

  it("with a security.openshift.io CRD served: openshift, and the pods leave uid, gid and fsGroup to the SCC", async () => {
    await client.create(CRD, SCC_CRD as unknown as KubeObject);
    try {
      // What the operator asks at start is the served groups: wait until the API server lists it.
      await eventually(
        async () => ((await client.resources.servedGroups()).includes(GROUP) ? true : undefined),
        60_000,
        `${GROUP} to be served`,
      );
      const auto = await run("ob-plat-ocp");
      assert.equal(auto.logged["platform"], "openshift");
      assert.equal(auto.logged["detected"], true);
      for (const k of IDS) assert.equal(k in auto.pod.securityContext, false, k);
      assert.equal(auto.pod.securityContext.runAsNonRoot, true);
      assert.deepEqual(auto.pod.securityContext.seccompProfile, { type: "RuntimeDefault" });

      // What a cluster's spec.securityContext sets is still written on OpenShift.
      const given = await run("ob-plat-ocp-sc", "", { securityContext: { fsGroup: 1000680000 } });
      assert.equal(given.pod.securityContext.fsGroup, 1000680000);
      assert.equal("runAsUser" in given.pod.securityContext, false);

      // An explicit kubernetes is taken as it is, even where OpenShift's group is served.
      const pinned = await run("ob-plat-pinned", "    platform: kubernetes\n");
      assert.equal(pinned.logged["platform"], "kubernetes");
      assert.equal(pinned.logged["detected"], false);
      assert.equal(pinned.pod.securityContext.runAsUser, 100);
    } finally {
      await client.delete(CRD, SCC_CRD.metadata.name).catch(() => undefined);
    }
  });
});
