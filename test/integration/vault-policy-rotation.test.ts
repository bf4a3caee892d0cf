// Issue 28, items 2 and 3 against the real API server and the real OpenBao: <policy:NAME> from a
// password policy the test creates, and rotate.every measured by an injected clock.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { registry } from "../../src/runtime/metrics.js";
import { ROTATION_PERIOD_KEY } from "../../src/targets/vault/planner.js";
import { baoCall } from "../../src/testenv/openbao.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { eventually } from "../support/kube.js";
import {
  applySeed,
  condition,
  type RunningTarget,
  readCounter,
  seed,
  startVaultTarget,
  type VaultSuite,
  vaultSuite,
  waitForPasses,
  waitForReason,
} from "../support/vault.js";

const HOUR = 3_600_000;

async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const values = (m?.values ?? []) as { labels: Record<string, string>; value: number }[];
  const hit = values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
  return hit.length === 0 ? undefined : hit.reduce((a, v) => a + v.value, 0);
}

const policyCalls = () =>
  metricValue("ohmlab_backend_requests_total", { target: "vault", operation: "policy" }).then((v) => v ?? 0);

describe("VaultSeed: <policy:NAME> and rotate.every on real OpenBao", () => {
  let suite: VaultSuite;
  let client: KubeClient;
  let ns: string;
  let target: RunningTarget | undefined;
  let clock = Date.now();
  const counter = readCounter();
  const bao = sharedEnv().bao;
  const start = (observeOnly = false) =>
    startVaultTarget(client, ns, {
      resyncInterval: "1s",
      observeOnly,
      hooks: { ...counter.hooks, now: () => new Date(clock) },
    });

  before(async () => {
    suite = await vaultSuite("vs-policy");
    ({ client, ns } = suite);
    target = await start();
  });
  after(async () => {
    await target?.stop();
    client.close();
  });

  it("seeds a value from a password policy once, with the policy's length and characters", async () => {
    const name = `${ns}-strong`;
    // 24 characters from a-z, 0-9 and two symbols; at least 4 digits and 1 symbol.
    const rules = `length = 24
rule "charset" {
  charset = "abcdefghijklmnopqrstuvwxyz"
  min-chars = 2
}
rule "charset" {
  charset = "0123456789"
  min-chars = 4
}
rule "charset" {
  charset = "!@"
  min-chars = 1
}`;
    await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/password/${name}`, { policy: rules });
    const path = `secret/${ns}/policy`;
    await applySeed(client, seed(ns, "policy", { path, data: { db: { password: `<policy:${name}>` } } }));
    const o = await waitForReason(client, ns, "policy", "Reconciled");
    const state = await suite.kv.read(path);
    const value = (state.data["db"] as Record<string, string>)["password"]!;
    assert.equal(value.length, 24);
    assert.match(value, /^[a-z0-9!@]+$/);
    assert.ok((value.match(/[0-9]/g) ?? []).length >= 4, "four digits");
    assert.ok((value.match(/[!@]/g) ?? []).length >= 1, "a symbol");
    assert.ok(!JSON.stringify(o.status).includes(value), "the value is nowhere in the status");
    // Seeded once: later passes ask the policy nothing and write nothing.
    const calls = await policyCalls();
    await waitForPasses(target!, ns, "policy");
    assert.equal(await policyCalls(), calls);
    assert.equal((await suite.kv.read(path)).version, state.version);
  });

  it("stalls on a missing policy with OpenBao's reason and writes nothing, then seeds once it exists", async () => {
    const name = `${ns}-later`;
    const path = `secret/${ns}/missing-policy`;
    await applySeed(client, seed(ns, "missing", { path, data: { p: `<policy:${name}>`, q: "<random:8>" } }));
    const o = await waitForReason(client, ns, "missing", "BackendRejected");
    assert.equal(condition(o, "Stalled")?.status, "True");
    assert.match(
      condition(o, "Ready")!.message,
      new RegExp(`password policy ${name}: OpenBao: .*policy does not exist`),
    );
    assert.equal((await suite.kv.read(path)).exists, false, "nothing written, not even the other key");
    await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/password/${name}`, {
      policy: `length = 12\nrule "charset" {\n  charset = "XYZ"\n}`,
    });
    await waitForReason(client, ns, "missing", "Reconciled");
    assert.match((await suite.kv.read(path)).data["p"] as string, /^[XYZ]{12}$/);
  });

  it("rotates once per period by the injected clock, never twice across resyncs or a restart", async () => {
    // The API server refuses a period it cannot read, and a rotate with neither token nor period.
    await assert.rejects(
      applySeed(
        client,
        seed(ns, "bad-every", {
          path: `secret/${ns}/bad`,
          data: { a: "<random:8>" },
          rotate: { every: "90d" },
        }),
      ),
      /spec\.rotate\.every/,
    );
    await assert.rejects(
      applySeed(
        client,
        seed(ns, "bad-every", {
          path: `secret/${ns}/bad`,
          data: { a: "<random:8>" },
          rotate: { keys: ["a"] },
        }),
      ),
      /rotate needs a token, a period \(every\), or both/,
    );
    const path = `secret/${ns}/periodic`;
    const labels = { target: "vault", namespace: ns, name: "periodic" };
    await applySeed(
      client,
      seed(ns, "periodic", {
        path,
        data: { a: "<random:16>", b: "<random:16>" },
        rotate: { every: "24h", keys: ["a"] },
      }),
    );
    await waitForReason(client, ns, "periodic", "Reconciled");
    const first = await suite.kv.read(path);
    const started = Date.parse(first.customMetadata[ROTATION_PERIOD_KEY]!);
    assert.ok(Math.abs(started - clock) < 5_000, "the period starts at the first pass");
    assert.equal(first.version, 1, "starting the period wrote no second version");
    assert.equal(
      await metricValue("ohmlab_rotation_next_timestamp_seconds", labels),
      (started + 24 * HOUR) / 1000,
    );

    // Resyncs and a restart within the period: nothing.
    clock += 23 * HOUR;
    await waitForPasses(target!, ns, "periodic");
    await target!.stop();
    target = await start();
    await waitForPasses(target, ns, "periodic");
    assert.equal((await suite.kv.read(path)).version, 1);

    // Past the period: a once, b untouched, the new start recorded.
    clock += 2 * HOUR;
    const rotated = await eventually(
      async () => {
        const s = await suite.kv.read(path);
        // Data first, then the new start: wait for both.
        return s.version > 1 &&
          s.customMetadata[ROTATION_PERIOD_KEY] !== first.customMetadata[ROTATION_PERIOD_KEY]
          ? s
          : undefined;
      },
      30_000,
      "the periodic rotation",
    );
    assert.equal(rotated.version, 2);
    assert.notEqual(rotated.data["a"], first.data["a"]);
    assert.equal(rotated.data["b"], first.data["b"]);
    const restarted = Date.parse(rotated.customMetadata[ROTATION_PERIOD_KEY]!);
    assert.ok(restarted > started + 24 * HOUR);
    await eventually(
      async () =>
        (await metricValue("ohmlab_rotation_next_timestamp_seconds", labels)) ===
          (restarted + 24 * HOUR) / 1000 || undefined,
      10_000,
      "the gauge to move to the next period",
    );
    await waitForPasses(target, ns, "periodic");
    await target.stop();
    target = await start();
    await waitForPasses(target, ns, "periodic");
    assert.equal((await suite.kv.read(path)).version, 2, "no second rotation in the period");

    // Observe-only past the next period: reports the rotation, writes nothing.
    await target.stop();
    clock += 30 * HOUR;
    target = await start(true);
    const observed = await waitForReason(client, ns, "periodic", "ObserveOnly");
    assert.equal(condition(observed, "Drifted")?.message, "1 rotate-field (a), 1 record-rotation");
    const still = await suite.kv.read(path);
    assert.equal(still.version, 2);
    assert.equal(still.customMetadata[ROTATION_PERIOD_KEY], rotated.customMetadata[ROTATION_PERIOD_KEY]);
    // Overdue: the gauge lies behind the clock, which is what the alert reads.
    const next = await metricValue("ohmlab_rotation_next_timestamp_seconds", labels);
    assert.ok(next !== undefined && next * 1000 < clock, "overdue");
  });
});
