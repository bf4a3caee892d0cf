// Issue 9: what a hostile or careless user can put in a VaultSeed, and what OpenBao can answer,
// tried against the real API server and the real dev OpenBao. Reasons are written as strings so
// that the file also runs against older builds (each test failed there).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { registry } from "../../src/runtime/metrics.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import { OWNER_MARKER_KEY } from "../../src/targets/vault/planner.js";
import { baoCall, baoRequest } from "../../src/testenv/openbao.js";
import { sharedEnv } from "../../src/testenv/shared.js";
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

/** Canonical JSON with sorted keys: compares trees holding `__proto__` as an own key. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

async function notReadyGauge(reason: string): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === "ohmlab_objects_not_ready");
  const v = ((m?.values ?? []) as { labels: Record<string, string>; value: number }[]).find(
    (x) => x.labels["target"] === "vault" && x.labels["reason"] === reason,
  );
  return v?.value ?? 0;
}

async function eventsOf(client: KubeClient, ns: string, name: string) {
  const events = await client.list(
    { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", namespaced: true },
    { namespace: ns },
  );
  return events.items.filter((e) => (e["regarding"] as { name: string }).name === name) as {
    reason?: string;
    type?: string;
    note?: string;
  }[];
}

describe("VaultSeed against hostile content and refusing backends (issue 9)", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;
  let target: RunningTarget;
  const counter = readCounter();
  const bao = () => sharedEnv().bao;

  before(async () => {
    ({ client, ns, kv } = await vaultSuite("vs-hostile"));
    // Beyond secret/<ns>/*: a KV v1 mount, a transit mount and a mount that does not exist, all
    // covered by the policy so that only the mount's kind can stop the controller.
    await baoCall(bao().addr, bao().rootToken, "POST", `sys/mounts/kv1-${ns}`, {
      type: "kv",
      options: { version: "1" },
    });
    await baoCall(bao().addr, bao().rootToken, "POST", `sys/mounts/tr-${ns}`, { type: "transit" });
    await setPolicy(true);
    target = await startVaultTarget(client, ns, { hooks: counter.hooks });
  });
  after(async () => {
    await target.stop();
    client.close();
  });

  async function setPolicy(metadataUpdate: boolean) {
    const meta = metadataUpdate ? `"create", "read", "update", "delete"` : `"read"`;
    await baoCall(bao().addr, bao().rootToken, "PUT", `sys/policies/acl/seed-${ns}`, {
      policy: `path "secret/data/${ns}/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/${ns}/*" { capabilities = [${meta}] }
path "kv1-${ns}/*" { capabilities = ["create", "read", "update"] }
path "tr-${ns}/*" { capabilities = ["create", "read", "update"] }
path "nomount-${ns}/*" { capabilities = ["create", "read", "update"] }`,
    });
  }

  it("stores __proto__, constructor, prototype, toString and unicode names as plain data, quietly, without harming the process", async () => {
    const path = `secret/${ns}/hostile`;
    // JSON.parse keeps "__proto__" as an own key, the way the API server's answer arrives.
    const data = JSON.parse(`{
      "__proto__": { "polluted": "<random:8>", "admin": "yes" },
      "constructor": { "prototype": { "x": "<hex:8>" } },
      "toString": "<uuid>",
      "hasOwnProperty": "",
      "nested": { "__proto__": "top-level-looking" , "valueOf": "v" },
      "ünï😀": "<random:4>",
      " ": "a space",
      "\\u200b": "zero width"
    }`);
    await applySeed(client, seed(ns, "hostile", { path, data }));
    const o = await waitForReason(client, ns, "hostile", "Reconciled");
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined, "no prototype was touched");
    assert.equal(({} as Record<string, unknown>)["x"], undefined);
    const s = await kv.read(path);
    const stored = s.data as Record<string, Record<string, unknown>>;
    assert.ok(Object.hasOwn(stored, "__proto__"), "a top-level __proto__ key is stored");
    const proto = Object.getOwnPropertyDescriptor(stored, "__proto__")?.value as Record<string, unknown>;
    assert.match(String(proto["polluted"]), /^[A-Za-z0-9]{8}$/);
    assert.equal(proto["admin"], "yes");
    assert.match(
      String((stored["constructor"]!["prototype"] as Record<string, unknown>)["x"]),
      /^[0-9a-f]{8}$/,
    );
    assert.equal(
      canonical(stored["nested"]),
      canonical(JSON.parse(`{"__proto__":"top-level-looking","valueOf":"v"}`)),
    );
    assert.equal(stored[" "] as unknown, "a space");
    assert.equal(stored["\u200b"] as unknown, "zero width");
    assert.deepEqual(
      [...(o.status?.managedKeys ?? [])].sort(),
      [
        " ",
        "__proto__.admin",
        "__proto__.polluted",
        "constructor.prototype.x",
        "nested.__proto__",
        "nested.valueOf",
        "toString",
        "ünï😀",
        "\u200b",
      ].sort(),
    );
    // Quiet: further reconciles of this object write no new version and leave the object alone.
    const version = s.version;
    const rv = (await getSeed(client, ns, "hostile")).metadata.resourceVersion;
    await counter.waitForReads(path, 3);
    assert.equal((await kv.read(path)).version, version, "a resync writes no new KV version");
    assert.equal((await getSeed(client, ns, "hostile")).metadata.resourceVersion, rv);
    // Another object is still served by the same process.
    await applySeed(
      client,
      seed(ns, "bystander", { path: `secret/${ns}/bystander`, data: { a: "<random:8>" } }),
    );
    await waitForReason(client, ns, "bystander", "Reconciled");
  });

  it("accepts numbers and booleans as plain values and stores them as given", async () => {
    const path = `secret/${ns}/plain`;
    await applySeed(
      client,
      seed(ns, "plain", {
        path,
        data: { port: 5432, ratio: 0.25, enabled: true, off: false, db: { replicas: 3 } },
      }),
    );
    await waitForReason(client, ns, "plain", "Reconciled");
    const s = await kv.read(path);
    assert.equal(
      canonical(s.data),
      canonical({ port: 5432, ratio: 0.25, enabled: true, off: false, db: { replicas: 3 } }),
    );
    const version = s.version;
    await counter.waitForReads(path, 2);
    assert.equal((await kv.read(path)).version, version);
  });

  it("stalls on a KV v1 mount, a non-KV mount and a missing mount, writing nothing", async () => {
    const cases = [
      { name: "on-kv1", path: `kv1-${ns}/app`, reason: "UnsupportedMount", says: /KV version 1/ },
      { name: "on-transit", path: `tr-${ns}/app`, reason: "UnsupportedMount", says: /transit/ },
      { name: "on-nothing", path: `nomount-${ns}/app`, reason: "MountNotFound", says: /no mount/i },
      {
        name: "ref-to-kv1",
        path: `secret/${ns}/ref-to-kv1`,
        reason: "UnsupportedMount",
        says: /source of kv1-.*KV version 1/,
        data: { a: `<ref:kv1-${ns}/src#k>` },
      },
    ];
    for (const c of cases)
      await applySeed(client, seed(ns, c.name, { path: c.path, data: c.data ?? { a: "<random:8>" } }));
    for (const c of cases) {
      const o = await waitForReason(client, ns, c.name, c.reason);
      assert.equal(condition(o, "Ready")?.status, "False");
      assert.equal(condition(o, "Stalled")?.status, "True", `${c.name} is stalled`);
      assert.match(condition(o, "Ready")!.message, c.says);
      assert.ok(
        (await eventsOf(client, ns, c.name)).some((e) => e.type === "Warning" && e.reason === c.reason),
      );
      assert.ok((await notReadyGauge(c.reason)) >= 1);
    }
    // Nothing was written to the v1 mount (a KV v2 write there would have created "data/app").
    const v1 = await baoRequest(bao().addr, "GET", `kv1-${ns}/data/app`, { token: bao().rootToken });
    assert.equal(v1.status, 404);
    const listed = await baoRequest(bao().addr, "LIST", `kv1-${ns}`, { token: bao().rootToken });
    assert.equal(listed.status, 404, "the v1 mount holds no key at all");
    // Quiet: later passes leave every stalled object as it is.
    const before = await Promise.all(
      cases.map(async (c) => (await getSeed(client, ns, c.name)).metadata.resourceVersion),
    );
    await counter.waitForReads(`secret/${ns}/hostile`, 2);
    const after = await Promise.all(
      cases.map(async (c) => (await getSeed(client, ns, c.name)).metadata.resourceVersion),
    );
    assert.deepEqual(after, before);
  });

  it("a request OpenBao refuses ends in a condition with OpenBao's message, a Warning event and the gauge", async () => {
    const path = `secret/${ns}/too-big`;
    const data = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`k${i}`, "<random:4>"]));
    await applySeed(client, seed(ns, "too-big", { path, data }));
    const o = await waitForReason(client, ns, "too-big", "BackendRejected");
    assert.equal(condition(o, "Ready")?.status, "False");
    assert.match(condition(o, "Ready")!.message, /maximum number of strings/);
    assert.ok(
      (await eventsOf(client, ns, "too-big")).some(
        (e) => e.type === "Warning" && e.reason === "BackendRejected",
      ),
    );
    assert.ok((await notReadyGauge("BackendRejected")) >= 1);
    assert.equal((await kv.read(path)).exists, false);
  });

  it("never prunes a placeholder a person filled in", async () => {
    const path = `secret/${ns}/placeholder`;
    await applySeed(
      client,
      seed(ns, "placeholder", { path, prune: true, data: { a: "<random:8>", hook: "" } }),
    );
    await waitForReason(client, ns, "placeholder", "Reconciled");
    const s = await kv.read(path);
    await kv.write(path, { ...s.data, hook: "https://typed.by/a-person" }, s.version);
    const changed = await applySeed(
      client,
      seed(ns, "placeholder", { path, prune: true, data: { a: "<random:8>" } }),
    );
    await eventually(async () => {
      const x = await getSeed(client, ns, "placeholder");
      return x.status?.observedGeneration === changed.metadata.generation ? x : undefined;
    });
    await counter.waitForReads(path, 2);
    assert.equal((await kv.read(path)).data["hook"], "https://typed.by/a-person");
  });

  it("with prune: true a managed leaf that becomes a map is replaced; without, the stall says how to resolve it", async () => {
    for (const prune of [true, false]) {
      const name = `leaf-to-map-${prune}`;
      const path = `secret/${ns}/${name}`;
      await applySeed(client, seed(ns, name, { path, prune, data: { a: "<random:8>" } }));
      await waitForReason(client, ns, name, "Reconciled");
      await applySeed(client, seed(ns, name, { path, prune, data: { a: { b: "<random:8>" } } }));
      if (prune) {
        await waitForReason(client, ns, name, "Reconciled");
        const a = (await kv.read(path)).data["a"] as Record<string, unknown>;
        assert.match(String(a["b"]), /^[A-Za-z0-9]{8}$/);
      } else {
        const o = await waitForReason(client, ns, name, "InvalidSpec");
        assert.match(condition(o, "Ready")!.message, /prune: true|by hand/);
      }
    }
  });

  it("reports the first creation and a re-creation after a metadata delete as written, not Rotated", async () => {
    const path = `secret/${ns}/fresh`;
    await applySeed(client, seed(ns, "fresh", { path, data: { a: "<random:8>" }, rotate: { token: "t1" } }));
    await waitForReason(client, ns, "fresh", "Reconciled");
    let events = await eventsOf(client, ns, "fresh");
    assert.ok(
      events.some((e) => e.reason === "Wrote"),
      "creation is reported as Wrote",
    );
    assert.ok(!events.some((e) => e.reason === "Rotated"), "nothing was rotated");
    await baoCall(bao().addr, bao().rootToken, "DELETE", `secret/metadata/${ns}/fresh`);
    await eventually(async () => ((await kv.read(path)).exists ? true : undefined), 20_000, "re-creation");
    await counter.waitForReads(path, 1);
    events = await eventsOf(client, ns, "fresh");
    assert.ok(!events.some((e) => e.reason === "Rotated"), "a re-creation is not a rotation");
  });

  it("status.kvVersion follows the path, unrotated, when recording the rotation token is refused", async () => {
    const path = `secret/${ns}/rot`;
    await applySeed(client, seed(ns, "rot", { path, data: { a: "<random:8>" } }));
    await waitForReason(client, ns, "rot", "Reconciled");
    await setPolicy(false);
    try {
      await applySeed(client, seed(ns, "rot", { path, data: { a: "<random:8>" }, rotate: { token: "t1" } }));
      await waitForReason(client, ns, "rot", "Forbidden");
      await eventually(
        async () => {
          const [s, o] = await Promise.all([kv.read(path), getSeed(client, ns, "rot")]);
          // The rotation is announced in the metadata before its keys are written: refused, nothing rotates.
          return s.version === 1 && o.status?.kvVersion === s.version ? true : undefined;
        },
        20_000,
        "status.kvVersion to follow the unrotated path",
      );
    } finally {
      await setPolicy(true);
    }
  });

  it("reports a bcrypt whose input can exceed 72 bytes", async () => {
    await applySeed(
      client,
      seed(ns, "long-hash", { path: `secret/${ns}/long-hash`, data: { p: "<random:100>", h: "<bcrypt:p>" } }),
    );
    const o = await waitForReason(client, ns, "long-hash", "InvalidSpec");
    assert.match(condition(o, "Ready")!.message, /72/);
  });

  it("when the marker's owner no longer exists, OwnedByAnother says that removing the marker hands the path over", async () => {
    const path = `secret/${ns}/orphan`;
    await kv.write(path, { a: "x" }, 0);
    await kv.writeMetadata(path, { [OWNER_MARKER_KEY]: `${ns}/gone-long-ago` });
    await applySeed(client, seed(ns, "heir", { path, data: { a: "<random:8>" } }));
    const o = await waitForReason(client, ns, "heir", "OwnedByAnother");
    const message = condition(o, "Ready")!.message;
    assert.match(message, /no longer exists/);
    assert.match(message, new RegExp(`remov\\w+ the ${OWNER_MARKER_KEY.replace(".", "\\.")} marker`));
    assert.doesNotMatch(message, /delete one of the two/);
  });
});
