import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { registry } from "../../src/runtime/metrics.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import { OWNER_MARKER_KEY } from "../../src/targets/vault/planner.js";
import {
  applySeed,
  condition,
  type RunningTarget,
  seed,
  startVaultTarget,
  vaultSuite,
  waitForPasses,
  waitForReason,
} from "../support/vault.js";

async function planned(ns: string, name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === "ohmlab_planned_changes");
  const out: Record<string, number> = {};
  for (const v of (metric?.values ?? []) as { labels: Record<string, string>; value: number }[]) {
    if (v.labels["namespace"] === ns && v.labels["name"] === name && v.value > 0)
      out[v.labels["action"]!] = v.value;
  }
  return out;
}

describe("VaultSeed observe-only mode", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;
  let target: RunningTarget;

  before(async () => {
    ({ client, ns, kv } = await vaultSuite("vs-observe"));
    target = await startVaultTarget(client, ns, { observeOnly: true });
  });
  after(async () => {
    await target.stop();
    client.close();
  });

  it("sums what a real run would do in Drifted, counts it in ohmlab_planned_changes, and writes nothing", async () => {
    const src = `secret/${ns}/clients`;
    const path = `secret/${ns}/keycloak`;
    await kv.write(src, { grafana: "new-client-secret" }, 0);
    await kv.write(path, { keycloak: { clientSecret: "stale", admin: "kept" } }, 0);
    await applySeed(
      client,
      seed(ns, "keycloak", {
        path,
        data: { keycloak: { clientSecret: `<ref:${src}#grafana>`, admin: "<random:16>" } },
      }),
    );
    const o = await waitForReason(client, ns, "keycloak", "ObserveOnly");
    const drifted = condition(o, "Drifted")!;
    assert.equal(drifted.status, "True");
    assert.equal(drifted.message, "1 adopt, 1 update-field (keycloak.clientSecret)");
    assert.equal(condition(o, "Ready")?.status, "False");
    assert.deepEqual(await planned(ns, "keycloak"), { adopt: 1, "update-field": 1 });
    await waitForPasses(target, ns, "keycloak");
    const s = await kv.read(path);
    assert.equal(s.version, 1, "nothing written");
    assert.equal(s.customMetadata[OWNER_MARKER_KEY], undefined, "not even the marker");
    assert.deepEqual(s.data, { keycloak: { clientSecret: "stale", admin: "kept" } });
  });

  it("reports a new path as create-path and add-field, and no drift when nothing would change", async () => {
    await applySeed(
      client,
      seed(ns, "fresh", { path: `secret/${ns}/fresh`, data: { a: "<random:8>", b: "literal" } }),
    );
    const o = await waitForReason(client, ns, "fresh", "ObserveOnly");
    assert.equal(condition(o, "Drifted")!.message, "1 create-path, 2 add-field (a, b)");
    await waitForPasses(target, ns, "fresh");
    assert.equal((await kv.read(`secret/${ns}/fresh`)).exists, false);

    const path = `secret/${ns}/settled`;
    await kv.write(path, { a: "x" }, 0);
    await kv.writeMetadata(path, { [OWNER_MARKER_KEY]: `${ns}/settled` });
    await applySeed(client, seed(ns, "settled", { path, data: { a: "<random:8>" } }));
    const settled = await waitForReason(client, ns, "settled", "Reconciled");
    assert.equal(condition(settled, "Drifted")?.status, "False");
    assert.equal(condition(settled, "Ready")?.status, "True");
    assert.deepEqual(await planned(ns, "settled"), {});
  });
});
