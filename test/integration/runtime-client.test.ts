import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { type ApiError, isConflict, isNotFound } from "../../src/runtime/errors.js";
import { EVENTS_V1, EventRecorder } from "../../src/runtime/events.js";
import { addFinalizer, removeFinalizer } from "../../src/runtime/finalizers.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";
import { testReason } from "../support/reasons.js";
import { installWidgetCrd, WIDGET } from "../support/widgets.js";

describe("runtime client against a real kube-apiserver", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-client");
    await installWidgetCrd(client);
  });
  after(() => client.close());

  it("a second identical server-side apply changes no resourceVersion", async () => {
    const intent = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "same", namespace: ns },
      data: { a: "1" },
    };
    const first = await client.apply(CONFIGMAP, intent, { fieldManager: "mgr-a" });
    const second = await client.apply(CONFIGMAP, intent, { fieldManager: "mgr-a" });
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
    const changed = await client.apply(CONFIGMAP, { ...intent, data: { a: "2" } }, { fieldManager: "mgr-a" });
    assert.notEqual(changed.metadata.resourceVersion, first.metadata.resourceVersion);
  });

  it("reports a field-ownership conflict, and force takes the field over", async () => {
    const meta = { name: "owned", namespace: ns };
    await client.apply(
      CONFIGMAP,
      { apiVersion: "v1", kind: "ConfigMap", metadata: meta, data: { k: "a" } },
      { fieldManager: "mgr-a" },
    );
    const err = await client
      .apply(
        CONFIGMAP,
        { apiVersion: "v1", kind: "ConfigMap", metadata: meta, data: { k: "b" } },
        { fieldManager: "mgr-b" },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(isConflict(err), `expected 409, got ${String(err)}`);
    assert.match((err as ApiError).message, /conflict/i);
    const forced = await client.apply(
      CONFIGMAP,
      { apiVersion: "v1", kind: "ConfigMap", metadata: meta, data: { k: "b" } },
      { fieldManager: "mgr-b", force: true },
    );
    assert.equal((forced as KubeObject & { data: Record<string, string> }).data.k, "b");
  });

  it("writes status only through the status subresource", async () => {
    const meta = { name: "w1", namespace: ns };
    const created = await client.apply(
      WIDGET,
      { metadata: meta, spec: { size: 1 }, status: { phase: "ignored" } },
      { fieldManager: "mgr" },
    );
    assert.equal(created["status"], undefined, "status in the main resource is dropped by the server");
    const withStatus = await client.applyStatus(
      WIDGET,
      { metadata: meta, status: { phase: "Ready", seen: 1 } },
      { fieldManager: "mgr" },
    );
    assert.deepEqual(withStatus["status"], { phase: "Ready", seen: 1 });
    const gen = withStatus.metadata.generation;
    const specViaStatus = await client.applyStatus(
      WIDGET,
      { metadata: meta, spec: { size: 99 }, status: { phase: "Ready", seen: 2 } },
      { fieldManager: "mgr" },
    );
    assert.deepEqual(specViaStatus["spec"], { size: 1 }, "spec cannot change through /status");
    assert.equal(specViaStatus.metadata.generation, gen, "a status write does not bump the generation");
  });

  it("adds and removes finalizers; deletion waits for them", async () => {
    const meta = { name: "fin", namespace: ns };
    let w = await client.apply(WIDGET, { metadata: meta, spec: { size: 1 } }, { fieldManager: "mgr" });
    w = await addFinalizer(client, WIDGET, w, "test.platform-operator.dev/a");
    w = await addFinalizer(client, WIDGET, w, "test.platform-operator.dev/b");
    assert.deepEqual(w.metadata.finalizers, ["test.platform-operator.dev/a", "test.platform-operator.dev/b"]);
    await client.delete(WIDGET, "fin", ns);
    w = await client.get(WIDGET, "fin", ns);
    assert.ok(w.metadata.deletionTimestamp, "object is terminating but kept");
    w = await removeFinalizer(client, WIDGET, w, "test.platform-operator.dev/a");
    assert.deepEqual(w.metadata.finalizers, ["test.platform-operator.dev/b"]);
    await removeFinalizer(client, WIDGET, w, "test.platform-operator.dev/b");
    await eventually(
      async () => isNotFound(await client.get(WIDGET, "fin", ns).catch((e) => e)) || undefined,
      5000,
      "deletion",
    );
  });

  it("a finalizer change based on a stale read is refused instead of dropping another writer's entry", async () => {
    const meta = { name: "stale", namespace: ns };
    const w = await client.apply(WIDGET, { metadata: meta, spec: { size: 1 } }, { fieldManager: "mgr" });
    await addFinalizer(client, WIDGET, w, "x.dev/one");
    const err = await addFinalizer(client, WIDGET, w, "x.dev/two").then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isConflict(err));
  });

  it("deletes with a uid precondition", async () => {
    const cm = await client.apply(
      CONFIGMAP,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "pre", namespace: ns } },
      { fieldManager: "mgr" },
    );
    const err = await client
      .delete(CONFIGMAP, "pre", ns, { preconditions: { uid: "00000000-0000-0000-0000-000000000000" } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(isConflict(err), "a wrong uid is refused");
    await client.delete(CONFIGMAP, "pre", ns, { preconditions: { uid: cm.metadata.uid } });
  });

  it("discovers served kinds, including a CRD", async () => {
    assert.equal((await client.resources.find("v1", "ConfigMap"))?.plural, "configmaps");
    assert.equal((await client.resources.find("apps/v1", "StatefulSet"))?.namespaced, true);
    assert.equal((await client.resources.find(`${WIDGET.group}/v1`, "Widget"))?.plural, "widgets");
    assert.equal(await client.resources.find("nope.dev/v1", "Nothing"), undefined);
  });

  it("records events.k8s.io/v1 Events and counts repeats in one series", async () => {
    const w = await client.apply(
      WIDGET,
      { metadata: { name: "ev", namespace: ns }, spec: { size: 1 } },
      { fieldManager: "mgr" },
    );
    const rec = new EventRecorder(client, "platform-operator/test", "test-1", silentLogger());
    const e = { type: "Normal" as const, reason: testReason("Wrote"), action: "Write", note: "wrote 2 keys" };
    rec.record(w, e);
    await rec.flush();
    rec.record(w, e);
    await rec.flush();
    rec.record(w, { ...e, reason: testReason("Other") });
    await rec.flush();
    const list = await client.list(EVENTS_V1, { namespace: ns });
    const mine = list.items.filter((i) => (i["regarding"] as { uid: string }).uid === w.metadata.uid);
    assert.equal(mine.length, 2, "the repeat joins the first event's series");
    const wrote = mine.find((i) => i["reason"] === "Wrote")!;
    assert.equal((wrote["series"] as { count: number }).count, 2);
    assert.equal(wrote["reportingController"], "platform-operator/test");
  });
});
