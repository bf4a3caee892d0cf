import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { Controller } from "../../src/runtime/controller.js";
import type { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { setControllerReference } from "../../src/runtime/ownership.js";
import { type KubeObject, splitKey } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";
import { installWidgetCrd, WIDGET } from "../support/widgets.js";

type Widget = KubeObject & { spec?: { size?: number; color?: string } };

/** Counts reconciles per key, so a test can wait for "one more pass of X" and check "no pass of Y". */
class Ledger {
  private readonly counts = new Map<string, number>();
  hit(key: string): void {
    this.counts.set(key, this.count(key) + 1);
  }
  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}

/** Resolves once the controller's queue holds nothing: no key waiting, delayed or being reconciled. */
const idle = (c: Controller) =>
  eventually(
    () => c.queue.length === 0 && c.queue.processingCount === 0 && c.queue.delayedCount === 0,
    20_000,
    "an idle queue",
  );

describe("owned and mapped watches, informers added while running", () => {
  let client: KubeClient;
  let ns: string;
  let mgr: Manager;
  let ctrl: Controller;
  let widgets: Informer<Widget>;
  const ledger = new Ledger();
  const suffix = randomBytes(3).toString("hex");
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installWidgetCrd(client);
    ns = await freshNamespace(client, "rt-owned");
    mgr = new Manager({ target: `owned-${suffix}`, client, log: silentLogger(), namespaces: [ns] });
    widgets = mgr.informer<Widget>(WIDGET);
    const configMaps = mgr.informer(CONFIGMAP);
    ctrl = new Controller({
      name: `widgets-${suffix}`,
      log: silentLogger(),
      reconcile: async (key) => {
        ledger.hit(key);
        const w = widgets.get(key);
        if (!w || w.metadata.deletionTimestamp) return undefined;
        // The child every widget owns: the owner reference comes from the cached object.
        const child = setControllerReference(w, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `${w.metadata.name}-child`, namespace: w.metadata.namespace },
          data: { size: String(w.spec?.size ?? 0) },
        });
        await client.apply(CONFIGMAP, child, { fieldManager: "widget-controller", force: true });
        return undefined;
      },
    })
      .watchPrimary(widgets)
      .watchOwned(configMaps, WIDGET)
      // A palette ConfigMap concerns every widget of its colour (its name).
      .watchMapped(configMaps, (cm) =>
        cm.metadata.labels?.["widgets.test/palette"] === "true"
          ? widgets
              .list(cm.metadata.namespace)
              .filter((w) => w.spec?.color === cm.metadata.name)
              .map((w) => `${w.metadata.namespace}/${w.metadata.name}`)
          : [],
      );
    mgr.add(ctrl);
    await mgr.start();
  });
  after(async () => {
    await mgr.stop();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    client.close();
  });

  const widget = (name: string, spec: Widget["spec"]) =>
    client.apply<Widget>(WIDGET, { metadata: { name, namespace: ns }, spec }, { fieldManager: "t" });

  it("a change to a child wakes its controlling owner", async () => {
    const w1 = await widget("w1", { size: 1 });
    const child = await eventually(() => client.getOrUndefined(CONFIGMAP, "w1-child", ns), 20_000, "child");
    assert.deepEqual(child.metadata.ownerReferences, [
      {
        apiVersion: `${WIDGET.group}/${WIDGET.version}`,
        kind: "Widget",
        name: "w1",
        uid: w1.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    await idle(ctrl);
    const before = ledger.count(`${ns}/w1`);
    await client.mergePatch(CONFIGMAP, "w1-child", ns, { data: { size: "tampered" } });
    await eventually(() => ledger.count(`${ns}/w1`) > before, 20_000, "the owner's reconcile");
    await eventually(
      async () =>
        ((await client.get(CONFIGMAP, "w1-child", ns))["data"] as Record<string, string>)["size"] === "1",
      20_000,
      "the child repaired",
    );
  });

  it("a reference to a same-named kind of another group wakes nobody", async () => {
    const w1 = await client.get(WIDGET, "w1", ns);
    await widget("w2", { size: 2 });
    await eventually(() => client.getOrUndefined(CONFIGMAP, "w2-child", ns), 20_000, "w2's child");
    await idle(ctrl);
    const w1Before = ledger.count(`${ns}/w1`);
    const w2Before = ledger.count(`${ns}/w2`);
    await client.apply(
      CONFIGMAP,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "impostor",
          namespace: ns,
          ownerReferences: [
            {
              apiVersion: "other.test.dev/v1",
              kind: "Widget",
              name: "w1",
              uid: w1.metadata.uid!,
              controller: true,
            },
          ],
        },
      },
      { fieldManager: "t" },
    );
    // A later event on the same informer that does wake w2: once it is handled and the queue is
    // idle, anything the impostor had enqueued would have run too.
    await client.mergePatch(CONFIGMAP, "w2-child", ns, { metadata: { labels: { poke: "1" } } });
    await eventually(() => ledger.count(`${ns}/w2`) > w2Before, 20_000, "w2's reconcile");
    await idle(ctrl);
    assert.equal(ledger.count(`${ns}/w1`), w1Before, "w1 was not reconciled for another group's Widget");
  });

  it("a mapped object wakes exactly the keys the function names", async () => {
    await widget("w-red", { color: "red" });
    await widget("w-blue", { color: "blue" });
    await eventually(() => widgets.get(`${ns}/w-blue`), 20_000, "widgets cached");
    await idle(ctrl);
    const red = ledger.count(`${ns}/w-red`);
    const blue = ledger.count(`${ns}/w-blue`);
    await client.apply(
      CONFIGMAP,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "red", namespace: ns, labels: { "widgets.test/palette": "true" } },
        data: { hex: "#f00" },
      },
      { fieldManager: "t" },
    );
    await eventually(() => ledger.count(`${ns}/w-red`) > red, 20_000, "w-red's reconcile");
    await idle(ctrl);
    assert.equal(ledger.count(`${ns}/w-blue`), blue, "w-blue does not use the red palette");
  });

  it("starts and syncs an informer for a kind discovered after the manager started, and a late controller", async () => {
    const group = `late-${suffix}.test.dev`;
    cleanups.push(() => client.delete(CUSTOM_RESOURCE_DEFINITION, `sprockets.${group}`));
    await client.apply(
      CUSTOM_RESOURCE_DEFINITION,
      {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: `sprockets.${group}` },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural: "sprockets", singular: "sprocket", kind: "Sprocket", listKind: "SprocketList" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          ],
        },
      },
      { fieldManager: "t" },
    );
    const type = await eventually(() => client.resources.find(`${group}/v1`, "Sprocket"), 20_000, "served");
    await client.apply(
      type,
      { metadata: { name: "s1", namespace: ns }, spec: { teeth: 12 } },
      { fieldManager: "t" },
    );
    const sprockets = await mgr.informerFor(`${group}/v1`, "Sprocket");
    assert.ok(sprockets.hasSynced);
    assert.ok(sprockets.get(`${ns}/s1`), "the object that existed is in the synced cache");

    const seen: string[] = [];
    const late = new Controller({
      name: `sprockets-${suffix}`,
      log: silentLogger(),
      reconcile: async (key) => {
        seen.push(splitKey(key).name);
        return undefined;
      },
    }).watchPrimary(sprockets);
    mgr.add(late);
    await eventually(() => seen.includes("s1") || undefined, 20_000, "the late controller's first pass");
    await client.apply(
      type,
      { metadata: { name: "s2", namespace: ns }, spec: { teeth: 3 } },
      { fieldManager: "t" },
    );
    await eventually(() => seen.includes("s2") || undefined, 20_000, "a pass for an object created later");
  });

  it("a metadata-only informer holds names, labels and owners, never data", async () => {
    const meta = await mgr.syncedInformer(CONFIGMAP, { metadataOnly: true });
    const cached = meta.get(`${ns}/w1-child`);
    assert.ok(cached, "the child is cached");
    assert.equal(cached.kind, "PartialObjectMetadata", "the server answered metadata only");
    assert.equal(cached["data"], undefined);
    assert.equal(cached.metadata.ownerReferences?.[0]?.name, "w1");
    const w1 = await client.get(WIDGET, "w1", ns);
    assert.deepEqual(meta.keysOwnedBy({ group: WIDGET.group, kind: "Widget", uid: w1.metadata.uid! }), [
      `${ns}/w1-child`,
    ]);
    await client.mergePatch(CONFIGMAP, "red", ns, { metadata: { labels: { shade: "dark" } } });
    await eventually(() => meta.get(`${ns}/red`)?.metadata.labels?.["shade"] === "dark" || undefined, 20_000);
    assert.equal(meta.get(`${ns}/red`)!["data"], undefined, "watch events are metadata only too");
  });
});
