import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppliedMemory, intentDigest } from "../../src/targets/gitlab/apply/live.js";
import type { Capabilities } from "../../src/targets/gitlab/reconciler.js";
import { CapabilitiesCache } from "../../src/targets/gitlab/wiring.js";

const cm = (data: Record<string, string>, rv?: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "a", namespace: "gl", ...(rv ? { resourceVersion: rv } : {}) },
  data,
});

describe("gitlab quiet pass memory", () => {
  it("skips an object only while both the intent and the cached resourceVersion are unchanged", () => {
    const m = new AppliedMemory();
    const intent = cm({ x: "1" });
    const d = intentDigest(intent);
    assert.equal(m.unchanged("gl/gl|cm", d, cm({ x: "1" }, "5")), false, "nothing remembered yet");
    m.remember("gl/gl|cm", d, cm({ x: "1" }, "5"));
    assert.equal(m.unchanged("gl/gl|cm", d, cm({ x: "1" }, "5")), true);
    assert.equal(
      m.unchanged("gl/gl|cm", d, cm({ x: "edited" }, "6")),
      false,
      "edited by hand: new resourceVersion",
    );
    assert.equal(m.unchanged("gl/gl|cm", d, null), false, "deleted by hand: not in the cache");
    assert.equal(
      m.unchanged("gl/gl|cm", intentDigest(cm({ x: "2" })), cm({ x: "1" }, "5")),
      false,
      "new render",
    );
    m.forgetAll("gl/gl|");
    assert.equal(m.unchanged("gl/gl|cm", d, cm({ x: "1" }, "5")), false, "release forgotten");
  });

  it("digests an intent regardless of key order", () => {
    const a = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", labels: { p: "1", q: "2" } } };
    const b = { kind: "ConfigMap", metadata: { labels: { q: "2", p: "1" }, name: "a" }, apiVersion: "v1" };
    assert.equal(intentDigest(a), intentDigest(b));
    assert.notEqual(intentDigest(a), intentDigest({ ...a, data: { k: "v" } }));
  });
});

describe("gitlab capabilities cache", () => {
  it("asks discovery again only after its time to live, and never keeps a failure", async () => {
    let t = 0;
    let calls = 0;
    let fail = false;
    const caps: Capabilities = { kubeVersion: "v1.37.2", apiVersions: ["v1"] };
    const cache = new CapabilitiesCache(
      async () => {
        calls++;
        if (fail) throw new Error("discovery down");
        return caps;
      },
      1000,
      () => t,
    );
    await cache.get();
    t = 999;
    await cache.get();
    assert.equal(calls, 1, "within the time to live: no request");
    t = 1000;
    fail = true;
    await assert.rejects(cache.get());
    fail = false;
    assert.deepEqual(await cache.get(), caps);
    assert.equal(calls, 3, "a failure is asked again at once");
  });
});
