import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LAST_APPLIED_ANNOTATION, slimForCache } from "../../src/runtime/slim.js";
import type { KubeObject } from "../../src/runtime/types.js";

describe("slimming objects for the cache", () => {
  it("drops managedFields and kubectl's last-applied copy, keeps every other annotation", () => {
    const obj: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "a",
        managedFields: [{ manager: "kubectl" }],
        annotations: { [LAST_APPLIED_ANNOTATION]: '{"big":"copy"}', keep: "me" },
      },
      data: { k: "v" },
    };
    slimForCache(obj);
    assert.deepEqual(obj, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", annotations: { keep: "me" } },
      data: { k: "v" },
    });
  });

  it("removes an annotations map left empty, and leaves objects without either alone", () => {
    const obj: KubeObject = { metadata: { name: "b", annotations: { [LAST_APPLIED_ANNOTATION]: "{}" } } };
    assert.deepEqual(slimForCache(obj), { metadata: { name: "b" } });
    const plain: KubeObject = { metadata: { name: "c", labels: { x: "y" } } };
    assert.deepEqual(slimForCache(plain), { metadata: { name: "c", labels: { x: "y" } } });
  });

  it("a key that only looks like the annotation through the prototype is not touched", () => {
    const annotations = Object.create({ [LAST_APPLIED_ANNOTATION]: "inherited" }) as Record<string, string>;
    annotations["own"] = "1";
    const obj: KubeObject = { metadata: { name: "d", annotations } };
    slimForCache(obj);
    assert.equal(obj.metadata.annotations?.["own"], "1");
  });
});
