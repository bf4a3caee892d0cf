import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EVENTS_V1, EventRecorder } from "../../src/runtime/events.js";
import { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { eventsDropped } from "../../src/runtime/metrics.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { clientWithToken, grantInNamespace, serviceAccountToken } from "../support/rbac.js";
import { testReason } from "../support/reasons.js";

type Event = KubeObject & {
  reason?: string;
  note?: string;
  series?: { count: number };
  regarding?: { apiVersion?: string; kind?: string; uid?: string };
};

async function dropped(cause: string): Promise<number> {
  const m = await eventsDropped.get();
  return m.values.find((v) => v.labels["cause"] === cause)?.value ?? 0;
}

const ev = (reason: string, note = "n") => ({
  type: "Warning" as const,
  reason: testReason(reason),
  action: "Reconcile",
  note,
});

describe("event recorder against the shared API server", () => {
  let admin: KubeClient;
  let ns: string;
  const clients: KubeClient[] = [];

  async function eventsOf(uid: string | undefined): Promise<Event[]> {
    const list = await admin.list<Event>(EVENTS_V1, { namespace: ns });
    return list.items.filter((i) => i.regarding?.uid === uid);
  }

  async function configMap(name: string): Promise<KubeObject> {
    await admin.apply(
      CONFIGMAP,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns } },
      { fieldManager: "t" },
    );
    // As an informer's list gives it: no apiVersion, no kind.
    return (await admin.list(CONFIGMAP, { namespace: ns, fieldSelector: `metadata.name=${name}` })).items[0]!;
  }

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(admin, "rt-events");
  });
  after(() => {
    for (const c of clients) c.close();
    admin.close();
  });

  it("fills regarding.apiVersion and kind from the type for listed objects, and drops an event without them", async () => {
    const cm = await configMap("listed");
    assert.equal(cm.apiVersion, undefined, "list items carry no apiVersion");
    const rec = new EventRecorder(admin, "platform-operator/test", "t", silentLogger());
    const before = await dropped("no_api_version");
    rec.record(cm, ev("NoType"));
    rec.record(cm, ev("WithType"), CONFIGMAP);
    await rec.flush();
    const mine = await eventsOf(cm.metadata.uid);
    assert.deepEqual(
      mine.map((e) => e.reason),
      ["WithType"],
    );
    assert.equal(mine[0]!.regarding!.apiVersion, "v1");
    assert.equal(mine[0]!.regarding!.kind, "ConfigMap");
    assert.equal(await dropped("no_api_version"), before + 1);
  });

  it("an object from an informer's cache is complete: its event needs no type", async () => {
    await configMap("cached");
    const inf = new Informer(admin, CONFIGMAP, { namespaces: [ns], log: silentLogger() });
    inf.start();
    try {
      await inf.waitForSync();
      const cm = inf.get(`${ns}/cached`)!;
      assert.equal(cm.apiVersion, "v1");
      const rec = new EventRecorder(admin, "platform-operator/test", "t", silentLogger());
      rec.record(cm, ev("FromCache"));
      await rec.flush();
      const [e] = await eventsOf(cm.metadata.uid);
      assert.equal(e?.regarding?.apiVersion, "v1");
      assert.equal(e?.regarding?.kind, "ConfigMap");
    } finally {
      await inf.stop();
    }
  });

  it("records events about objects with the longest names Kubernetes allows", async () => {
    const cm = await configMap(`${"a".repeat(240)}.${"b".repeat(12)}`);
    assert.equal(cm.metadata.name!.length, 253);
    const rec = new EventRecorder(admin, "platform-operator/test", "t", silentLogger());
    rec.record(cm, ev("LongName"), CONFIGMAP);
    await rec.flush();
    const [e] = await eventsOf(cm.metadata.uid);
    assert.ok(e, "the Event was created");
    assert.ok(e.metadata.name!.length <= 253);
  });

  it("folds a burst of one event into one Event whose series.count is the number recorded", async () => {
    const cm = await configMap("burst");
    const rec = new EventRecorder(admin, "platform-operator/test", "t", silentLogger());
    for (let i = 0; i < 10; i++) rec.record(cm, ev("Repeated"), CONFIGMAP);
    await rec.flush();
    const mine = await eventsOf(cm.metadata.uid);
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.series?.count, 10);
  });

  it("rate-limits one object's reason (spam filter), lets others through, and refills with time", async () => {
    const cm = await configMap("spam");
    let now = Date.parse("2026-01-01T00:00:00Z");
    const rec = new EventRecorder(admin, "platform-operator/test", "t", silentLogger(), {
      spamBurst: 3,
      spamRefillMs: 60_000,
      now: () => new Date(now),
    });
    const before = await dropped("spam");
    for (let i = 0; i < 8; i++) rec.record(cm, ev("Flood", `attempt ${i}`), CONFIGMAP);
    rec.record(cm, ev("Other"), CONFIGMAP);
    await rec.flush();
    let notes = (await eventsOf(cm.metadata.uid)).map((e) => e.note).sort();
    assert.deepEqual(notes, ["attempt 0", "attempt 1", "attempt 2", "n"]);
    assert.equal(await dropped("spam"), before + 5);
    now += 60_000;
    rec.record(cm, ev("Flood", "after a minute"), CONFIGMAP);
    rec.record(cm, ev("Flood", "still too soon"), CONFIGMAP);
    await rec.flush();
    notes = (await eventsOf(cm.metadata.uid)).map((e) => e.note).sort();
    assert.ok(notes.includes("after a minute"));
    assert.ok(!notes.includes("still too soon"));
  });

  it("keeps writes in flight bounded and drops what does not fit in the queue", async () => {
    const objs = await Promise.all(Array.from({ length: 30 }, (_, i) => configMap(`bound-${i}`)));
    let inFlight = 0;
    let peak = 0;
    // The real client, watched: every create goes to the API server; we only count overlap.
    const counting = new Proxy(admin, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== "create" || typeof v !== "function") return v;
        return async (...args: unknown[]) => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          try {
            return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            inFlight--;
          }
        };
      },
    });
    const rec = new EventRecorder(counting, "platform-operator/test", "t", silentLogger(), {
      maxInFlight: 3,
      maxPending: 10,
    });
    const before = await dropped("queue_full");
    for (const o of objs) rec.record(o, ev("Bounded"), CONFIGMAP);
    await rec.flush();
    assert.equal(peak, 3, "never more than three writes at once, and the bound is used");
    const list = await admin.list<Event>(EVENTS_V1, { namespace: ns });
    const written = list.items.filter((e) => e.reason === "Bounded").length;
    assert.equal(written, 13, "three in flight and ten queued");
    assert.equal(await dropped("queue_full"), before + 17);
  });

  it("bumps series.count only after the write succeeded (a refused patch is not counted)", async () => {
    const cm = await configMap("refused");
    // A ServiceAccount that may create Events but not patch them: the API server refuses the bump.
    const token = await serviceAccountToken(admin, ns, "events-writer");
    await grantInNamespace(admin, ns, "events-writer", "events-create", [
      { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] },
    ]);
    const limited = clientWithToken(admin, token);
    clients.push(limited);
    const rec = new EventRecorder(limited, "platform-operator/test", "t", silentLogger());
    const failedBefore = await dropped("write_failed");
    rec.record(cm, ev("Counted"), CONFIGMAP);
    await rec.flush();
    rec.record(cm, ev("Counted"), CONFIGMAP);
    await rec.flush();
    assert.equal(await dropped("write_failed"), failedBefore + 1, "the patch was refused");
    const mine = await eventsOf(cm.metadata.uid);
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.series, undefined, "no count was written");

    await grantInNamespace(admin, ns, "events-writer", "events-create", [
      { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
    ]);
    rec.record(cm, ev("Counted"), CONFIGMAP);
    await rec.flush();
    const [bumped] = await eventsOf(cm.metadata.uid);
    assert.equal(bumped!.series?.count, 2, "the refused occurrence was not counted: 1 created + 1 bumped");
  });

  it("starts a new Event when the series' Event is gone from the server", async () => {
    const cm = await configMap("expired");
    const rec = new EventRecorder(admin, "platform-operator/test", "t", silentLogger());
    rec.record(cm, ev("Expires"), CONFIGMAP);
    await rec.flush();
    const [first] = await eventsOf(cm.metadata.uid);
    await admin.delete(EVENTS_V1, first!.metadata.name!, ns);
    rec.record(cm, ev("Expires"), CONFIGMAP);
    await rec.flush();
    const mine = await eventsOf(cm.metadata.uid);
    assert.equal(mine.length, 1);
    assert.notEqual(mine[0]!.metadata.name, first!.metadata.name);
  });
});
