import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import { eventually } from "../support/kube.js";
import {
  applySeed,
  condition,
  type RunningTarget,
  seed,
  startVaultTarget,
  vaultSuite,
  waitForReason,
} from "../support/vault.js";

describe("VaultSeed references", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;
  let target: RunningTarget;

  before(async () => {
    ({ client, ns, kv } = await vaultSuite("vs-refs"));
    target = await startVaultTarget(client, ns);
  });
  after(async () => {
    await target.stop();
    client.close();
  });

  it("waits (RefPending) and writes nothing while a source is missing, then follows a chain across three paths", async () => {
    const a = `secret/${ns}/a`;
    const b = `secret/${ns}/b`;
    const c = `secret/${ns}/c`;
    // c copies from b, b copies from a; a does not exist yet.
    await applySeed(
      client,
      seed(ns, "c", { path: c, data: { fromB: `<ref:${b}#token>`, own: "<random:8>" } }),
    );
    await applySeed(
      client,
      seed(ns, "b", { path: b, data: { token: `<ref:${a}#root.token>`, own: "<random:8>" } }),
    );
    const pb = await waitForReason(client, ns, "b", "RefPending");
    assert.equal(condition(pb, "Reconciling")?.status, "True");
    assert.match(condition(pb, "Ready")!.message, /root\.token/);
    const pc = await waitForReason(client, ns, "c", "RefPending");
    assert.equal(condition(pc, "Ready")?.status, "False");
    assert.equal(
      (await kv.read(b)).exists,
      false,
      "nothing is written while a missing key cannot be computed",
    );
    assert.equal((await kv.read(c)).exists, false);

    await applySeed(client, seed(ns, "a", { path: a, data: { root: { token: "<random:20>" } } }));
    await waitForReason(client, ns, "a", "Reconciled");
    // Dependents are requeued when their source is written, not only at the next backoff.
    await waitForReason(client, ns, "b", "Reconciled", 15_000);
    await waitForReason(client, ns, "c", "Reconciled", 15_000);
    const token = ((await kv.read(a)).data as { root: { token: string } }).root.token;
    assert.equal(((await kv.read(b)).data as Record<string, string>)["token"], token);
    assert.equal(((await kv.read(c)).data as Record<string, string>)["fromB"], token);
  });

  it("keeps a copy equal to its source when the source is edited by hand", async () => {
    const a = `secret/${ns}/a`;
    const s = await kv.read(a);
    await kv.write(a, { root: { token: "rotated-by-a-person" } }, s.version);
    await eventually(
      async () =>
        ((await kv.read(`secret/${ns}/c`)).data as Record<string, string>)["fromB"] === "rotated-by-a-person"
          ? true
          : undefined,
      15_000,
      "the copy of a copy to follow",
    );
    assert.equal(
      ((await kv.read(`secret/${ns}/b`)).data as Record<string, string>)["token"],
      "rotated-by-a-person",
    );
  });

  it("reports RefPending for an empty source", async () => {
    const src = `secret/${ns}/empty-src`;
    await kv.write(src, { v: "" }, 0);
    await applySeed(
      client,
      seed(ns, "wants-empty", { path: `secret/${ns}/wants-empty`, data: { v: `<ref:${src}#v>` } }),
    );
    await waitForReason(client, ns, "wants-empty", "RefPending");
  });

  it("stalls on a reference cycle and names the paths", async () => {
    const x = `secret/${ns}/x`;
    const y = `secret/${ns}/y`;
    await applySeed(client, seed(ns, "x", { path: x, data: { v: `<ref:${y}#v>` } }));
    await applySeed(client, seed(ns, "y", { path: y, data: { v: `<ref:${x}#v>` } }));
    const ox = await waitForReason(client, ns, "x", "RefCycle");
    assert.equal(condition(ox, "Stalled")?.status, "True");
    assert.equal(condition(ox, "Reconciling"), undefined, "a stall is not retried with backoff");
    assert.match(condition(ox, "Stalled")!.message, new RegExp(`${x}.*${y}|${y}.*${x}`));
    await waitForReason(client, ns, "y", "RefCycle");
    assert.equal((await kv.read(x)).exists, false);
  });
});

describe("VaultSeed references in a first seed", () => {
  it("a copy reconciled while its source's pass is under way defers until it ends: one status write, no RefPending", async () => {
    const { client, ns } = await vaultSuite("vs-refrace");
    // Pairs that sort next to each other, so the queue hands a source and its copy to two workers
    // at once: the copy reaches its reference while the source's pass is reading or writing it.
    const pairs = 12;
    for (let i = 0; i < pairs; i++) {
      const n = String(i).padStart(2, "0");
      const src = `secret/${ns}/p${n}-a`;
      await applySeed(client, seed(ns, `p${n}-a`, { path: src, data: { v: "<random:16>" } }));
      await applySeed(
        client,
        seed(ns, `p${n}-b`, { path: `secret/${ns}/p${n}-b`, data: { copy: `<ref:${src}#v>` } }),
      );
    }
    const target = await startVaultTarget(client, ns);
    try {
      for (let i = 0; i < pairs; i++) {
        const n = String(i).padStart(2, "0");
        await waitForReason(client, ns, `p${n}-a`, "Reconciled", 60_000);
        await waitForReason(client, ns, `p${n}-b`, "Reconciled", 60_000);
      }
      assert.deepEqual(
        await refPendingOf(client, ns),
        [],
        "copies that reported RefPending (a status write and an Event each)",
      );
    } finally {
      await target.stop();
      client.close();
    }
  });

  it("a chain of copies (each link copying the one before) seeds without RefPending: a deferred link keeps its path busy for the next", async () => {
    const { client, ns, kv } = await vaultSuite("vs-refchain");
    const links = 30;
    const path = (i: number) => `secret/${ns}/l${String(i).padStart(2, "0")}`;
    await applySeed(client, seed(ns, "l00", { path: path(0), data: { v: "<random:16>" } }));
    for (let i = 1; i < links; i++)
      await applySeed(
        client,
        seed(ns, `l${String(i).padStart(2, "0")}`, { path: path(i), data: { v: `<ref:${path(i - 1)}#v>` } }),
      );
    const target = await startVaultTarget(client, ns);
    try {
      for (let i = 0; i < links; i++)
        await waitForReason(client, ns, `l${String(i).padStart(2, "0")}`, "Reconciled", 60_000);
      const head = ((await kv.read(path(0))).data as { v: string }).v;
      for (let i = 1; i < links; i++)
        assert.equal(
          ((await kv.read(path(i))).data as { v: string }).v,
          head,
          `${path(i)} holds the head's value`,
        );
      assert.deepEqual(await refPendingOf(client, ns), [], "links that reported RefPending");
    } finally {
      await target.stop();
      client.close();
    }
  });
});

/** The objects of `ns` that reported RefPending (an Event each time). */
async function refPendingOf(client: KubeClient, ns: string): Promise<string[]> {
  const events = await client.list(
    { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", namespaced: true },
    { namespace: ns },
  );
  return events.items
    .filter((e) => e["reason"] === "RefPending")
    .map((e) => (e["regarding"] as { name: string }).name);
}
