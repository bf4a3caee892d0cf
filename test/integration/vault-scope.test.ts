import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { registry } from "../../src/runtime/metrics.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  applySeed,
  getSeed,
  installVaultSeedCrd,
  type RunningTarget,
  rootKv,
  seed,
  setUpVaultAuth,
  startVaultTarget,
  waitForPasses,
  waitForReason,
} from "../support/vault.js";

async function logins(): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === "ohmlab_backend_requests_total");
  return ((m?.values ?? []) as { labels: Record<string, string>; value: number }[])
    .filter(
      (v) =>
        v.labels["target"] === "vault" && v.labels["operation"] === "login" && v.labels["outcome"] === "ok",
    )
    .reduce((a, v) => a + v.value, 0);
}

describe("VaultSeed target scope and credentials", () => {
  let client: KubeClient;
  let ns: string;
  let elsewhere: string;
  let target: RunningTarget;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
    ns = await freshNamespace(client, "vs-scope");
    elsewhere = await freshNamespace(client, "vs-elsewhere");
    // A 4-second token: the controller must replace it before it expires, without failing a reconcile.
    await setUpVaultAuth(client, ns, undefined, undefined, "4s");
    target = await startVaultTarget(client, ns, { resyncInterval: "1s" });
  });
  after(async () => {
    await target.stop();
    client.close();
  });

  it("ignores objects outside its namespaces", async () => {
    await applySeed(
      client,
      seed(elsewhere, "outside", { path: `secret/${elsewhere}/outside`, data: { a: "<random:8>" } }),
    );
    await applySeed(client, seed(ns, "inside", { path: `secret/${ns}/inside`, data: { a: "<random:8>" } }));
    await waitForReason(client, ns, "inside", "Reconciled");
    // Passes over its own namespace went on meanwhile; none of them was for the other one.
    await waitForPasses(target, ns, "inside");
    assert.ok(
      !target.logs.some((l) => l.includes(`"object":"${elsewhere}/`)),
      "reconciled an object outside",
    );
    assert.equal((await getSeed(client, elsewhere, "outside")).status, undefined);
    assert.equal((await rootKv().read(`secret/${elsewhere}/outside`)).exists, false);
  });

  it("replaces its OpenBao token before it expires", async () => {
    const before = await logins();
    const path = `secret/${ns}/inside`;
    // Edit by hand, round after round, until three new logins show the token was replaced three
    // times: each edit is repaired, so every pass across the token changes worked.
    const failedBefore = target.logs.filter((l) => l.includes("reconcile failed")).length;
    for (let round = 0; (await logins()) - before < 3; round++) {
      assert.ok(
        round < 40,
        `only ${(await logins()) - before} new logins after ${round} rounds with a 4 s token`,
      );
      const s = await rootKv().read(path);
      await rootKv().write(path, {}, s.version);
      await eventually(
        async () => (((await rootKv().read(path)).data as Record<string, string>)["a"] ? true : undefined),
        15_000,
        `the repair at round ${round}`,
      );
    }
    const o = await getSeed(client, ns, "inside");
    assert.equal(o.status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
    assert.equal(
      target.logs.filter((l) => l.includes("reconcile failed")).length,
      failedBefore,
      "no reconcile failed on an expired token",
    );
  });
});
