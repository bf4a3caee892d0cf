import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyWouldBeNoop, dryRunChangesNothing } from "../../src/runtime/converge.js";
import type { KubeObject } from "../../src/runtime/types.js";

// Field sets in the form the API server writes them (FieldsV1), for a Service applied by "op".
const serviceFields = {
  "f:metadata": { "f:labels": { "f:app": {} }, "f:finalizers": { ".": {}, 'v:"x.dev/keep"': {} } },
  "f:spec": {
    "f:selector": {},
    "f:ports": {
      'k:{"port":80,"protocol":"TCP"}': { ".": {}, "f:name": {}, "f:port": {}, "f:targetPort": {} },
    },
  },
};

function live(fields: object = serviceFields, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "web",
      namespace: "ns",
      uid: "u",
      resourceVersion: "7",
      labels: { app: "web", "added-by": "someone-else" },
      finalizers: ["x.dev/keep"],
      managedFields: [
        { manager: "kubectl", operation: "Update", apiVersion: "v1", fieldsV1: { "f:metadata": {} } },
        {
          manager: "op",
          operation: "Apply",
          apiVersion: "v1",
          time: "2026-01-01T00:00:00Z",
          fieldsV1: fields,
        },
      ],
    },
    spec: {
      clusterIP: "10.0.0.9",
      selector: { app: "web" },
      ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }],
    },
    ...extra,
  };
}

const intent = (spec: object = {}, metadata: object = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "ns", labels: { app: "web" }, finalizers: ["x.dev/keep"], ...metadata },
  spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }], ...spec },
});

describe("applyWouldBeNoop", () => {
  it("is a no-op when the manager owns exactly the intent's fields and values match (defaults and others' fields aside)", () => {
    assert.deepEqual(applyWouldBeNoop(intent(), live(), "op"), { noop: true });
  });

  it("sees a changed value, naming the path", () => {
    const r = applyWouldBeNoop(
      intent({ ports: [{ name: "http", port: 80, targetPort: 9090 }] }),
      live(),
      "op",
    );
    assert.deepEqual(r, { noop: false, reason: "spec.ports[0].targetPort differs from the live object" });
  });

  it("sees a field the intent adds and one it no longer sets", () => {
    const added = applyWouldBeNoop(intent({ type: "ClusterIP" }), live(), "op");
    assert.equal(added.noop, false);
    assert.match((added as { reason: string }).reason, /spec\.type is not owned by op/);
    const dropped = applyWouldBeNoop(intent({}, { finalizers: [] }), live(), "op");
    assert.match((dropped as { reason: string }).reason, /metadata\.finalizers\["x\.dev\/keep"\] is owned/);
    const noLabels = applyWouldBeNoop(intent({}, { labels: undefined }), live(), "op");
    assert.match(
      (noLabels as { reason: string }).reason,
      /metadata\.labels is owned but no longer in the intent/,
    );
  });

  it("needs this manager's Apply entry at the intent's apiVersion", () => {
    assert.match(
      (applyWouldBeNoop(intent(), live(), "other") as { reason: string }).reason,
      /other has not applied this object yet/,
    );
    const v2 = { ...intent(), apiVersion: "v2" };
    assert.match(
      (applyWouldBeNoop(v2, live(), "op") as { reason: string }).reason,
      /last applied as v1, now v2/,
    );
    const bare = live();
    delete bare.metadata.managedFields;
    assert.equal(applyWouldBeNoop(intent(), bare, "op").noop, false);
  });

  it("treats an empty field set as an atomic value owned whole", () => {
    // spec.selector is atomic in the field set above: any keys inside are owned with it.
    assert.equal(applyWouldBeNoop(intent(), live(), "op").noop, true);
    const moreSelector = intent({ selector: { app: "web", tier: "front" } });
    const r = applyWouldBeNoop(moreSelector, live(), "op");
    assert.match((r as { reason: string }).reason, /spec\.selector\.tier differs/);
  });
});

describe("applyWouldBeNoop on hostile managedFields", () => {
  it("answers 'not a no-op' instead of throwing, whatever the field set holds", () => {
    const shapes: unknown[] = [
      null,
      "f:spec",
      42,
      [],
      { "f:spec": null },
      { "f:spec": "x" },
      { "f:spec": { "f:ports": { "k:not-json": {} } } },
      { "f:spec": { "f:ports": { 'k:["array"]': {} } } },
      { "f:metadata": { "f:finalizers": { "v:{broken": {} } } },
      { "f:spec": { "f:ports": { "i:-1": {}, "i:abc": {} } } },
      { "x:unknown": {} },
    ];
    for (const fields of shapes) {
      const l = live();
      (l.metadata.managedFields![1] as { fieldsV1: unknown }).fieldsV1 = fields;
      const r = applyWouldBeNoop(intent(), l, "op");
      assert.equal(r.noop, false, `field set ${JSON.stringify(fields)}`);
    }
    const odd = live();
    odd.metadata.managedFields = [null, 7, "x"] as unknown[];
    assert.equal(applyWouldBeNoop(intent(), odd, "op").noop, false);
  });
});

describe("dryRunChangesNothing", () => {
  it("ignores the resourceVersion and managedFields times, nothing else", () => {
    const a = live();
    const b = live();
    b.metadata.resourceVersion = "8";
    (b.metadata.managedFields![1] as { time: string }).time = "2026-02-02T00:00:00Z";
    assert.ok(dryRunChangesNothing(b, a));
    const c = live(serviceFields, { spec: { clusterIP: "10.0.0.9", selector: { app: "other" } } });
    assert.ok(!dryRunChangesNothing(c, a));
    const d = live({ ...serviceFields, "f:spec": {} });
    assert.ok(!dryRunChangesNothing(d, a), "a change of ownership alone is a write");
    const odd = live();
    odd.metadata.managedFields = [null, 7];
    assert.ok(!dryRunChangesNothing(odd, a), "odd managedFields compare without throwing");
  });
});
