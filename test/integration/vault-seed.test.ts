import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import bcrypt from "bcryptjs";
import type { KubeClient } from "../../src/runtime/client.js";
import { agePublicOf } from "../../src/targets/vault/generate.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import { OWNER_MARKER_KEY, ROTATION_TOKEN_KEY } from "../../src/targets/vault/planner.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { eventually } from "../support/kube.js";
import {
  applySeed,
  condition,
  getSeed,
  type RunningTarget,
  readCounter,
  seed,
  startVaultTarget,
  vaultSuite,
  waitForReason,
} from "../support/vault.js";

type Tree = Record<string, Record<string, string> | string>;
// Later passes are awaited by counting the controller's own reads of a path, not by sleeping.
const counter = readCounter();

describe("VaultSeed against real OpenBao and the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;
  let target: RunningTarget;

  before(async () => {
    ({ client, ns, kv } = await vaultSuite("vs-seed"));
    target = await startVaultTarget(client, ns, { hooks: counter.hooks });
  });
  after(async () => {
    await target.stop();
    client.close();
  });

  it("seeds every template once, logging in through Kubernetes auth", async () => {
    const path = `secret/${ns}/app`;
    await applySeed(
      client,
      seed(ns, "app", {
        path,
        data: {
          admin: { username: "admin", password: "<random:24>", passwordHashed: "<bcrypt:admin.password>" },
          token: "<hex:16>",
          id: "<uuid>",
          age: { secret: "<age:secret>", public: "<age:public>" },
          webhook: "",
        },
      }),
    );
    const o = await waitForReason(client, ns, "app", "Reconciled");
    const s = await kv.read(path);
    const d = s.data as Record<string, Tree>;
    const admin = d["admin"] as Record<string, string>;
    assert.equal(admin["username"], "admin");
    assert.match(admin["password"]!, /^[A-Za-z0-9]{24}$/);
    assert.ok(bcrypt.compareSync(admin["password"]!, admin["passwordHashed"]!), "bcrypt hashes the password");
    assert.match(d["token"] as unknown as string, /^[0-9a-f]{16}$/);
    assert.match(
      d["id"] as unknown as string,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const age = d["age"] as Record<string, string>;
    assert.match(age["secret"]!, /^AGE-SECRET-KEY-1/);
    assert.equal(await agePublicOf(age["secret"]!), age["public"], "the age pair belongs together");
    assert.equal(d["webhook"] as unknown as string, "");
    assert.equal(s.customMetadata[OWNER_MARKER_KEY], `${ns}/app`);
    assert.equal(o.status?.kvVersion, s.version);
    assert.deepEqual([...(o.status?.managedKeys ?? [])].sort(), [
      "admin.password",
      "admin.passwordHashed",
      "admin.username",
      "age.public",
      "age.secret",
      "id",
      "token",
    ]);
    // webhook is a placeholder: for a person to fill in, never the controller's to prune.
    assert.equal(condition(o, "Stalled"), undefined);
  });

  it("never overwrites an existing key, keeps a filled placeholder, and leaves a changed template alone", async () => {
    const path = `secret/${ns}/app`;
    const before = await kv.read(path);
    const data = structuredClone(before.data) as Record<string, Tree>;
    (data["admin"] as Record<string, string>)["password"] = "typed-by-a-person";
    data["webhook"] = "https://hooks.example/abc" as never;
    await kv.write(path, data, before.version);
    const o = await getSeed(client, ns, "app");
    await applySeed(
      client,
      seed(ns, "app", { ...o.spec, data: { ...(o.spec.data as object), token: "<hex:64>" } }),
    );
    await eventually(async () => {
      const x = await getSeed(client, ns, "app");
      return x.status?.observedGeneration === x.metadata.generation &&
        condition(x, "Ready")?.status === "True"
        ? x
        : undefined;
    });
    await counter.waitForReads(path, 2);
    const s = await kv.read(path);
    const d = s.data as Record<string, Tree>;
    const admin = d["admin"] as Record<string, string>;
    assert.equal(admin["password"], "typed-by-a-person");
    assert.ok(
      bcrypt.compareSync("typed-by-a-person", admin["passwordHashed"]!),
      "the hash follows the edited password",
    );
    assert.equal(d["webhook"] as unknown as string, "https://hooks.example/abc");
    assert.equal(
      (d["token"] as unknown as string).length,
      16,
      "a longer template does not touch the existing value",
    );
  });

  it("brings back a declared key that was deleted by hand, with a new value", async () => {
    const path = `secret/${ns}/app`;
    const before = await kv.read(path);
    const data = structuredClone(before.data) as Record<string, Tree>;
    const oldId = data["id"];
    delete data["id"];
    await kv.write(path, data, before.version);
    const s = await eventually(
      async () => {
        const x = await kv.read(path);
        return (x.data as Record<string, unknown>)["id"] ? x : undefined;
      },
      10_000,
      "the resync to restore id",
    );
    assert.notEqual((s.data as Record<string, unknown>)["id"], oldId);
  });

  it("does nothing on a quiet resync: no KV version, no resourceVersion, no bcrypt salt change", async () => {
    // A fresh object: the resyncs right after its first write must already be quiet.
    const path = `secret/${ns}/quiet`;
    await applySeed(
      client,
      seed(ns, "quiet", {
        path,
        data: { p: "<random:12>", h: "<bcrypt:p>", a: { secret: "<age:secret>", public: "<age:public>" } },
      }),
    );
    await waitForReason(client, ns, "quiet", "Reconciled");
    const kvBefore = await kv.read(path);
    const objBefore = await getSeed(client, ns, "quiet");
    await counter.waitForReads(path, 3);
    const kvAfter = await kv.read(path);
    const objAfter = await getSeed(client, ns, "quiet");
    assert.equal(kvAfter.version, kvBefore.version);
    assert.deepEqual(kvAfter.data, kvBefore.data);
    assert.equal(objAfter.metadata.resourceVersion, objBefore.metadata.resourceVersion);
  });

  it("adopts a path that existed before the object: marker only, data untouched, no new version", async () => {
    const path = `secret/${ns}/legacy`;
    await kv.write(path, { db: { password: "from-the-old-job" }, extra: "kept" }, 0);
    const v = (await kv.read(path)).version;
    await applySeed(client, seed(ns, "legacy", { path, data: { db: { password: "<random:16>" } } }));
    const o = await waitForReason(client, ns, "legacy", "Reconciled");
    const s = await kv.read(path);
    assert.equal(s.version, v, "the marker alone creates no KV version");
    assert.deepEqual(s.data, { db: { password: "from-the-old-job" }, extra: "kept" });
    assert.equal(s.customMetadata[OWNER_MARKER_KEY], `${ns}/legacy`);
    assert.deepEqual(o.status?.managedKeys ?? [], [], "adopted keys are not ours to prune");
    const events = await client.list(
      { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", namespaced: true },
      { namespace: ns },
    );
    assert.ok(
      events.items.some(
        (e) => e["reason"] === "Adopted" && (e["regarding"] as { name: string }).name === "legacy",
      ),
    );
  });

  it("leaves a path owned by another object alone (OwnedByAnother)", async () => {
    const path = `secret/${ns}/taken`;
    await kv.write(path, { k: "v" }, 0);
    await kv.writeMetadata(path, { [OWNER_MARKER_KEY]: "elsewhere/other" });
    await applySeed(client, seed(ns, "intruder", { path, data: { k: "<random:8>", more: "<random:8>" } }));
    const o = await waitForReason(client, ns, "intruder", "OwnedByAnother");
    assert.equal(condition(o, "Ready")?.status, "False");
    assert.match(condition(o, "Ready")!.message, /elsewhere\/other/);
    const s = await kv.read(path);
    assert.deepEqual(s.data, { k: "v" });
    assert.equal(s.version, 1);
  });

  it("rotates the listed keys once per token and records the token", async () => {
    const path = `secret/${ns}/rot`;
    await applySeed(
      client,
      seed(ns, "rot", { path, data: { a: "<random:12>", b: "<random:12>", h: "<bcrypt:a>" } }),
    );
    await waitForReason(client, ns, "rot", "Reconciled");
    const s0 = await kv.read(path);
    const d0 = s0.data as Record<string, string>;
    await applySeed(
      client,
      seed(ns, "rot", {
        path,
        data: { a: "<random:12>", b: "<random:12>", h: "<bcrypt:a>" },
        rotate: { token: "2026-11-29", keys: ["a"] },
      }),
    );
    const o = await eventually(async () => {
      const x = await getSeed(client, ns, "rot");
      return x.status?.rotationToken === "2026-11-29" && condition(x, "Ready")?.status === "True"
        ? x
        : undefined;
    });
    const s1 = await kv.read(path);
    const d1 = s1.data as Record<string, string>;
    assert.notEqual(d1["a"], d0["a"], "a was regenerated");
    assert.equal(d1["b"], d0["b"], "b was not listed");
    assert.ok(bcrypt.compareSync(d1["a"]!, d1["h"]!), "the hash follows the rotated key");
    assert.equal(s1.customMetadata[ROTATION_TOKEN_KEY], "2026-11-29");
    assert.equal(o.status?.kvVersion, s1.version);
    // Same token again (a spec change elsewhere, and resyncs): nothing is regenerated.
    await applySeed(
      client,
      seed(ns, "rot", {
        path,
        data: { a: "<random:12>", b: "<random:12>", h: "<bcrypt:a>", c: "x" },
        rotate: { token: "2026-11-29", keys: ["a"] },
      }),
    );
    await eventually(
      async () => ((await kv.read(path)).data as Record<string, string>)["c"] === "x" || undefined,
    );
    await counter.waitForReads(path, 2);
    const s2 = await kv.read(path);
    assert.equal((s2.data as Record<string, string>)["a"], d1["a"], "the same token rotates once");
    assert.equal(s2.version, s1.version + 1, "only the added key made a version");
    // No keys listed: every generated key rotates (bcrypt follows, literal stays).
    await applySeed(
      client,
      seed(ns, "rot", {
        path,
        data: { a: "<random:12>", b: "<random:12>", h: "<bcrypt:a>", c: "x" },
        rotate: { token: "all-1" },
      }),
    );
    await eventually(async () =>
      (await getSeed(client, ns, "rot")).status?.rotationToken === "all-1" ? true : undefined,
    );
    const d3 = (await kv.read(path)).data as Record<string, string>;
    assert.notEqual(d3["a"], d1["a"]);
    assert.notEqual(d3["b"], d1["b"]);
    assert.equal(d3["c"], "x");
  });

  it("reports InvalidRotation and InvalidSpec as Stalled without writing", async () => {
    await applySeed(
      client,
      seed(ns, "badrot", {
        path: `secret/${ns}/badrot`,
        data: { a: "<random:8>" },
        rotate: { token: "t", keys: ["nope"] },
      }),
    );
    const o = await waitForReason(client, ns, "badrot", "InvalidRotation");
    assert.equal(condition(o, "Stalled")?.status, "True");
    assert.match(condition(o, "Stalled")!.message, /nope/);
    await applySeed(client, seed(ns, "badspec", { path: `secret/${ns}/badspec`, data: { a: "<random:0>" } }));
    const b = await waitForReason(client, ns, "badspec", "InvalidSpec");
    assert.match(condition(b, "Ready")!.message, /\ba\b/);
    assert.equal((await kv.read(`secret/${ns}/badrot`)).exists, false);
    assert.equal((await kv.read(`secret/${ns}/badspec`)).exists, false);
  });

  it("prunes only keys it wrote and no longer declares, and nothing once its status is lost", async () => {
    const path = `secret/${ns}/prune`;
    await applySeed(
      client,
      seed(ns, "prune", {
        path,
        prune: true,
        data: { keep: "<random:8>", drop: "<random:8>", gone: "<random:8>" },
      }),
    );
    await waitForReason(client, ns, "prune", "Reconciled");
    const s0 = await kv.read(path);
    await kv.write(path, { ...s0.data, byHand: "person" }, s0.version);
    await applySeed(
      client,
      seed(ns, "prune", { path, prune: true, data: { keep: "<random:8>", gone: "<random:8>" } }),
    );
    await eventually(async () =>
      ((await kv.read(path)).data as Record<string, string>)["drop"] === undefined ? true : undefined,
    );
    const s1 = await kv.read(path);
    assert.deepEqual(Object.keys(s1.data).sort(), ["byHand", "gone", "keep"]);
    // The status is written after OpenBao: seeing the path pruned does not mean the status is there yet.
    const managed = async () => [...((await getSeed(client, ns, "prune")).status?.managedKeys ?? [])].sort();
    await eventually(
      async () => ((await managed()).join() === "gone,keep" ? true : undefined),
      20_000,
      "managedKeys without the pruned key",
    ).catch(() => undefined);
    assert.deepEqual(await managed(), ["gone", "keep"]);

    // Lose the status while the controller is stopped, then stop declaring "gone": it stays.
    await target.stop();
    await client.mergePatch(VAULTSEED, "prune", ns, { status: null }, "status");
    await applySeed(client, seed(ns, "prune", { path, prune: true, data: { keep: "<random:8>" } }));
    target = await startVaultTarget(client, ns, { hooks: counter.hooks });
    await waitForReason(client, ns, "prune", "Reconciled");
    await counter.waitForReads(path, 2);
    const s2 = await kv.read(path);
    assert.deepEqual(
      Object.keys(s2.data).sort(),
      ["byHand", "gone", "keep"],
      "an object that lost its status prunes nothing",
    );
  });
});
