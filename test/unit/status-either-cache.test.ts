import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InformerHandler } from "../../src/runtime/informer.js";
import { eitherCache, type StatusCache, StatusWriter } from "../../src/runtime/status.js";
import type { KubeObject } from "../../src/runtime/types.js";

type Obj = KubeObject & { status?: { phase?: string } };

const obj = (rv: string, phase?: string): Obj => ({
  apiVersion: "example.dev/v1",
  kind: "Thing",
  metadata: { name: "x", namespace: "ns", uid: "u1", resourceVersion: rv },
  ...(phase ? { status: { phase } } : {}),
});

/** One informer's part as the writer sees it: a store, its handlers, and which writes it still waits for. */
function fakeCache() {
  const store = new Map<string, KubeObject>();
  const handlers: InformerHandler<KubeObject>[] = [];
  const pending = new Set<string>();
  const cache: StatusCache = {
    addHandler: (h) => handlers.push(h),
    get: (k) => store.get(k),
    ownWrites: { waitsFor: (k, rv) => pending.has(`${k}@${rv}`), receivedBefore: () => false },
  };
  return {
    cache,
    pending,
    put(o: Obj) {
      const old = store.get("ns/x");
      store.set("ns/x", o);
      for (const h of handlers) if (old) h.update?.(old, o);
    },
    drop() {
      const old = store.get("ns/x");
      store.delete("ns/x");
      for (const h of handlers) if (old) h.delete?.(old);
    },
  };
}

const writerOn = (cache: StatusCache) =>
  new StatusWriter<Obj["status"]>({
    client: undefined as never,
    type: { group: "example.dev", version: "v1", kind: "Thing", plural: "things", namespaced: true },
    fieldManager: "test",
    cache,
  });

describe("eitherCache: one kind watched by two informers", () => {
  // Opaque resourceVersions: only the own-write record can say the cached copy is behind.
  it("keeps a written status while either informer has not shown the write", () => {
    const a = fakeCache();
    const b = fakeCache();
    const w = writerOn(eitherCache(a.cache, b.cache));
    a.put(obj("p"));
    b.put(obj("p"));
    b.pending.add("ns/x@q");
    w.remember("ns/x", obj("q", "Ready"));
    assert.equal(w.freshest("ns/x", obj("p")).status?.phase, "Ready", "b still waits for the write");
    b.pending.delete("ns/x@q");
    b.put(obj("q", "Ready"));
    assert.equal(w.freshest("ns/x", obj("p")).status, undefined, "shown: the memory went with the update");
  });

  it("forgets a written status only once no informer holds the object", () => {
    const a = fakeCache();
    const b = fakeCache();
    const w = writerOn(eitherCache(a.cache, b.cache));
    a.put(obj("p"));
    b.put(obj("p"));
    a.pending.add("ns/x@q");
    w.remember("ns/x", obj("q", "Ready"));
    b.drop();
    assert.equal(w.freshest("ns/x", obj("p")).status?.phase, "Ready", "a still holds it");
    a.drop();
    assert.equal(w.freshest("ns/x", obj("p")).status, undefined, "gone from both");
  });
});
