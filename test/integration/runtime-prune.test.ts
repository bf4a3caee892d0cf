import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import { inventoryIdOf, listInventory, prune } from "../../src/runtime/prune.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CONFIGMAP, clientFor, freshNamespace } from "../support/kube.js";

const SECRET: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
const CLUSTER_ROLE: ResourceType = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
};

describe("prune inventory", () => {
  let client: KubeClient;
  let ns: string;
  let ns2: string;
  const release = `rel-${randomBytes(3).toString("hex")}`;
  const selector = `test.platform-operator.dev/release=${release}`;
  const labels = { "test.platform-operator.dev/release": release };
  const kinds = [
    { apiVersion: "v1", kind: "ConfigMap" },
    { apiVersion: "v1", kind: "Secret" },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole" },
    { apiVersion: "gone.test.dev/v1", kind: "Removed" },
  ];
  const obj = (type: ResourceType, name: string, namespace?: string, extra: object = {}): KubeObject => ({
    apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
    kind: type.kind,
    metadata: { name, namespace, labels },
    ...extra,
  });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-prune");
    ns2 = await freshNamespace(client, "rt-prune-b");
    const apply = (o: KubeObject, type: ResourceType) => client.apply(type, o, { fieldManager: "t-prune" });
    await apply(obj(CONFIGMAP, "keep", ns, { data: { big: "x".repeat(1000) } }), CONFIGMAP);
    await apply(obj(CONFIGMAP, "old", ns), CONFIGMAP);
    await apply(obj(CONFIGMAP, "old-b", ns2), CONFIGMAP);
    await apply(obj(SECRET, "precious", ns, { stringData: { k: "v" } }), SECRET);
    await apply(obj(CLUSTER_ROLE, `${release}-old`, undefined, { rules: [] }), CLUSTER_ROLE);
    await apply(obj(CLUSTER_ROLE, `${release}-keep`, undefined, { rules: [] }), CLUSTER_ROLE);
    // Same kind and namespace, not selected: never part of the inventory.
    await client.apply(
      CONFIGMAP,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "unrelated", namespace: ns } },
      { fieldManager: "t-prune" },
    );
  });
  after(async () => {
    for (const n of [`${release}-old`, `${release}-keep`])
      await client.delete(CLUSTER_ROLE, n).catch(() => undefined);
    client.close();
  });

  it("lists every selected object of the recorded kinds, namespaced and cluster-scoped, as metadata only", async () => {
    const inv = await listInventory(client, kinds, { labelSelector: selector, namespaces: [ns, ns2] });
    const names = inv.items
      .map((i) => `${i.type.kind}/${i.metadata.namespace ?? ""}/${i.metadata.name}`)
      .sort();
    assert.deepEqual(
      names,
      [
        `ClusterRole//${release}-keep`,
        `ClusterRole//${release}-old`,
        `ConfigMap/${ns2}/old-b`,
        `ConfigMap/${ns}/keep`,
        `ConfigMap/${ns}/old`,
        `Secret/${ns}/precious`,
      ].sort(),
    );
    assert.deepEqual(inv.unserved, [{ apiVersion: "gone.test.dev/v1", kind: "Removed" }]);
    for (const i of inv.items) {
      assert.ok(i.metadata.uid, "uids are listed");
      assert.equal((i as unknown as { data?: unknown }).data, undefined);
    }
    await assert.rejects(
      listInventory(client, kinds, { labelSelector: " ", namespaces: [ns] }),
      /labelSelector/,
    );
  });

  it("deletes what is not wanted one by one with a uid precondition, never the kinds named", async () => {
    const inv = await listInventory(client, kinds, { labelSelector: selector, namespaces: [ns, ns2] });
    // Between listing and pruning, "old" is deleted and created again: the new object is not the one listed.
    await client.delete(CONFIGMAP, "old", ns);
    const reborn = await client.apply(CONFIGMAP, obj(CONFIGMAP, "old", ns), { fieldManager: "t-prune" });
    const keep = new Set([
      inventoryIdOf(obj(CONFIGMAP, "keep", ns)),
      inventoryIdOf(obj(CLUSTER_ROLE, `${release}-keep`), false),
    ]);
    const result = await prune(client, inv, { keep, neverPrune: [{ group: "", kind: "Secret" }] });
    const names = (items: { metadata: { name?: string } }[]) => items.map((i) => i.metadata.name).sort();
    assert.deepEqual(names(result.deleted), [`${release}-old`, "old-b"].sort());
    assert.deepEqual(names(result.kept), [`${release}-keep`, "keep", "precious"].sort());
    assert.deepEqual(names(result.skipped), ["old"], "the uid precondition protected the new object");
    assert.deepEqual(result.failed, []);
    assert.equal((await client.get(CONFIGMAP, "old", ns)).metadata.uid, reborn.metadata.uid);
    assert.ok(await client.get(SECRET, "precious", ns));
    assert.ok(await client.get(CONFIGMAP, "unrelated", ns));
    assert.ok(isNotFound(await client.get(CLUSTER_ROLE, `${release}-old`).catch((e) => e)));
    assert.ok(isNotFound(await client.get(CONFIGMAP, "old-b", ns2).catch((e) => e)));
  });
});
