import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { informerRelists } from "../../src/runtime/metrics.js";
import { type KubeObject, objectKey } from "../../src/runtime/types.js";
import { type ControlPlane, startControlPlane } from "../../src/testenv/controlplane.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";

const cm = (
  namespace: string,
  name: string,
  data: Record<string, string> = {},
  extra: Partial<KubeObject["metadata"]> = {},
) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace, ...extra },
  data,
});

async function relists(): Promise<number> {
  const m = await informerRelists.get();
  return m.values.filter((v) => v.labels["resource"] === "configmaps").reduce((a, v) => a + v.value, 0);
}

describe("informer against the shared API server", () => {
  let client: KubeClient;
  let ns: string;
  let other: string;
  let inf: Informer;
  const seen: string[] = [];

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-inf");
    other = await freshNamespace(client, "rt-inf-other");
    await client.apply(CONFIGMAP, cm(ns, "pre", { a: "1" }), { fieldManager: "t" });
    inf = new Informer(client, CONFIGMAP, { namespaces: [ns], log: silentLogger() });
    inf.addHandler({
      add: (o) => seen.push(`add ${o.metadata.name}`),
      update: (_, n) => seen.push(`update ${n.metadata.name}`),
      delete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    inf.start();
    await inf.waitForSync();
  });
  after(async () => {
    await inf.stop();
    client.close();
  });

  it("lists what exists, then follows adds, updates and deletes", async () => {
    assert.ok(inf.get(`${ns}/pre`), "listed before the watch");
    await client.apply(CONFIGMAP, cm(ns, "w", { a: "1" }), { fieldManager: "t" });
    await client.apply(CONFIGMAP, cm(ns, "w", { a: "2" }), { fieldManager: "t" });
    await eventually(
      () =>
        (inf.get(`${ns}/w`) as KubeObject & { data?: Record<string, string> })?.data?.a === "2" || undefined,
    );
    await client.delete(CONFIGMAP, "w", ns);
    await eventually(() => (inf.get(`${ns}/w`) === undefined ? true : undefined));
    assert.deepEqual(
      seen.filter((s) => s.endsWith(" w")),
      ["add w", "update w", "delete w"],
    );
  });

  it("sees only the namespaces it was given", async () => {
    await client.apply(CONFIGMAP, cm(other, "elsewhere"), { fieldManager: "t" });
    await client.apply(CONFIGMAP, cm(ns, "marker"), { fieldManager: "t" });
    await eventually(() => inf.get(`${ns}/marker`));
    assert.equal(inf.get(`${other}/elsewhere`), undefined);
    assert.ok(inf.list().every((o) => o.metadata.namespace === ns));
  });

  it("indexes by owner uid and drops managedFields", async () => {
    const owner = await client.apply(CONFIGMAP, cm(ns, "owner"), { fieldManager: "t" });
    await client.apply(
      CONFIGMAP,
      cm(
        ns,
        "child",
        {},
        {
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid! }],
        },
      ),
      { fieldManager: "t" },
    );
    const id = { group: "", kind: "ConfigMap", uid: owner.metadata.uid! };
    await eventually(() => (inf.keysOwnedBy(id).length === 1 ? true : undefined));
    assert.deepEqual(inf.keysOwnedBy(id), [`${ns}/child`]);
    assert.deepEqual(inf.keysOwnedBy({ ...id, group: "other.dev" }), [], "the group is part of the key");
    assert.equal(inf.get(`${ns}/child`)!.metadata.managedFields, undefined);
  });

  it("a target's pruning drops what it names, from the list and from watch events, and keeps metadata; one it cannot prune is cached whole", async () => {
    await client.apply(CONFIGMAP, cm(other, "listed", { big: "x".repeat(1000), kept: "1" }), {
      fieldManager: "t",
    });
    // No data at all: the pruning below throws on it. That must not fail the list (which would
    // relist forever and never sync, as the first version of this test found).
    await client.apply(
      CONFIGMAP,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bare", namespace: other } },
      {
        fieldManager: "t",
      },
    );
    const pruned = new Informer(client, CONFIGMAP, {
      namespaces: [other],
      log: silentLogger(),
      prune: {
        name: "no-big",
        apply(o) {
          delete (o["data"] as Record<string, string>)["big"];
          return o;
        },
      },
    });
    pruned.start();
    try {
      await pruned.waitForSync();
      assert.equal(pruned.prunedBy, "no-big");
      const listed = pruned.get(`${other}/listed`)!;
      assert.deepEqual(listed["data"], { kept: "1" });
      assert.equal(pruned.get(`${other}/bare`)?.metadata.name, "bare", "cached unpruned");
      assert.ok(listed.metadata.resourceVersion && listed.metadata.uid, "metadata is whole");
      await client.apply(CONFIGMAP, cm(other, "watched", { big: "y", kept: "2" }), { fieldManager: "t" });
      const watched = await eventually(() => pruned.get(`${other}/watched`));
      assert.deepEqual(watched["data"], { kept: "2" });
      assert.equal(watched.kind, "ConfigMap");
    } finally {
      await pruned.stop();
    }
  });
});

/**
 * A control plane of its own, because these tests stop the API server. The watch cache is off so
 * a watch reads etcd directly and an etcd compaction really makes an old resourceVersion expire.
 */
describe("informer across API server restarts and 410 Gone", () => {
  let cp: ControlPlane;
  let client: KubeClient;
  let ns: string;
  let inf: Informer;

  before(async () => {
    cp = await startControlPlane({ apiServerArgs: ["--watch-cache=false"] });
    client = clientFor(cp.kubeconfigPath);
    ns = await freshNamespace(client, "rt-restart");
    inf = new Informer(client, CONFIGMAP, {
      namespaces: [ns],
      log: silentLogger(),
      backoffMinMs: 100,
      backoffMaxMs: 1000,
    });
    inf.start();
    await inf.waitForSync();
  });
  after(async () => {
    await inf.stop();
    client.close();
    await cp.stop();
  });

  it("resumes the watch after the API server restarts, without a relist", async () => {
    await client.apply(CONFIGMAP, cm(ns, "before"), { fieldManager: "t" });
    await eventually(() => inf.get(`${ns}/before`));
    const relistsBefore = await relists();
    await cp.stopApiServer();
    await new Promise((r) => setTimeout(r, 1500));
    await cp.startApiServer();
    await client.apply(CONFIGMAP, cm(ns, "after"), { fieldManager: "t" });
    await eventually(() => inf.get(`${ns}/after`), 20_000, "the object created after the restart");
    assert.equal(await relists(), relistsBefore, "the watch resumed from its resourceVersion");
  });

  it("relists on 410 Gone and catches up with what it missed", async () => {
    await client.apply(CONFIGMAP, cm(ns, "doomed"), { fieldManager: "t" });
    await eventually(() => inf.get(`${ns}/doomed`));
    const relistsBefore = await relists();
    await cp.stopApiServer();
    // While the API server is down: remove an object behind its back and compact etcd past the
    // informer's resourceVersion, so resuming the watch must fail with 410 Gone.
    await cp.etcd.deleteKey(`/registry/configmaps/${ns}/doomed`);
    await cp.etcd.compact();
    await cp.startApiServer();
    await eventually(
      () => (inf.get(`${ns}/doomed`) === undefined ? true : undefined),
      20_000,
      "the relist to drop the deleted object",
    );
    assert.ok((await relists()) > relistsBefore, "a relist happened");
    await client.apply(CONFIGMAP, cm(ns, "later"), { fieldManager: "t" });
    await eventually(() => inf.get(`${ns}/later`), 10_000, "watching again after the relist");
    const keys = inf.list().map(objectKey);
    for (const k of ["before", "after", "later"]) assert.ok(keys.includes(`${ns}/${k}`), `${k} is cached`);
    assert.ok(!keys.includes(`${ns}/doomed`));
  });
});
