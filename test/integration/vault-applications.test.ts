// Issue 28, item 1: VaultSeeds in applications' own namespaces, behind the allow-list of the
// target's configuration, against the real API server and the real OpenBao.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { OWNER_MARKER_KEY } from "../../src/targets/vault/planner.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  applySeed,
  condition,
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

describe("VaultSeed: application namespaces behind the allow-list", () => {
  let client: KubeClient;
  let platform: string;
  let teamA: string;
  let teamB: string;
  let target: RunningTarget;
  const kv = rootKv();
  // Every path lives under secret/<platform>/, which the controller's OpenBao policy covers: a
  // refusal below is the allow-list's, never OpenBao's.
  const p = (rest: string) => `secret/${platform}/${rest}`;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
    platform = await freshNamespace(client, "vs-platform");
    teamA = await freshNamespace(client, "vs-team-a");
    teamB = await freshNamespace(client, "vs-team-b");
    await setUpVaultAuth(client, platform);
    // A platform secret, there before any object, that no application may touch or read.
    await kv.write(p("platform/keycloak"), { password: "platform-secret" }, 0);
    target = await startVaultTarget(client, platform, {
      resyncInterval: "1s",
      // Not in the watched list: the target adds its application namespaces itself.
      applications: {
        [teamA]: { write: [p(`apps/${teamA}/`), p("shared/")] },
        [teamB]: { write: [p(`apps/${teamB}`), p("shared/")], read: [p("catalog/")] },
      },
    });
  });
  after(async () => {
    await target.stop();
    client.close();
  });

  it("seeds an application object under its prefix, with the namespace in the owner marker", async () => {
    await kv.write(p("catalog/smtp"), { host: "smtp.example" }, 0);
    await applySeed(
      client,
      seed(teamB, "db", {
        path: p(`apps/${teamB}/db`),
        data: { password: "<random:16>", smtp: `<ref:${p("catalog/smtp")}#host>` },
      }),
    );
    await waitForReason(client, teamB, "db", "Reconciled");
    const s = await kv.read(p(`apps/${teamB}/db`));
    assert.equal((s.data["password"] as string).length, 16);
    assert.equal(s.data["smtp"], "smtp.example");
    assert.equal(s.customMetadata[OWNER_MARKER_KEY], `${teamB}/db`);
  });

  it("refuses a platform path, another application's prefix and a platform reference, writing nothing", async () => {
    const before = await kv.read(p("platform/keycloak"));
    const cases = [
      { name: "platform", path: p("platform/keycloak"), data: { password: "<random:8>" } },
      { name: "other-app", path: p(`apps/${teamB}/taken`), data: { a: "<random:8>" } },
      {
        name: "steal",
        path: p(`apps/${teamA}/copy`),
        data: { stolen: `<ref:${p("platform/keycloak")}#password>` },
      },
      // A read-only prefix of team-b is not team-a's.
      { name: "catalog", path: p(`apps/${teamA}/cat`), data: { h: `<ref:${p("catalog/smtp")}#host>` } },
    ];
    for (const c of cases) await applySeed(client, seed(teamA, c.name, { path: c.path, data: c.data }));
    for (const c of cases) {
      const o = await waitForReason(client, teamA, c.name, "Forbidden");
      assert.equal(condition(o, "Stalled")?.status, "True", c.name);
      const message = condition(o, "Ready")!.message;
      assert.ok(message.includes(p(`apps/${teamA}/`)), `${c.name}: ${message}`);
      assert.ok(!message.includes("platform-secret"), "no value in the message");
    }
    // Still refused and still nothing written after more passes.
    await waitForPasses(target, teamA, "steal");
    const after = await kv.read(p("platform/keycloak"));
    assert.equal(after.version, before.version);
    assert.deepEqual(after.customMetadata, before.customMetadata);
    for (const path of [p(`apps/${teamB}/taken`), p(`apps/${teamA}/copy`), p(`apps/${teamA}/cat`)])
      assert.equal((await kv.read(path)).exists, false, path);
  });

  it("a refused application object does not keep the platform's own object off its path", async () => {
    // team-a's "platform" object above is older; the platform object still adopts the path.
    await applySeed(
      client,
      seed(platform, "keycloak", { path: p("platform/keycloak"), data: { password: "<random:8>" } }),
    );
    await waitForReason(client, platform, "keycloak", "Reconciled");
    const s = await kv.read(p("platform/keycloak"));
    assert.equal(s.customMetadata[OWNER_MARKER_KEY], `${platform}/keycloak`);
    assert.equal(s.data["password"], "platform-secret");
    assert.equal(
      (await getSeed(client, teamA, "platform")).status?.conditions?.find((c) => c.type === "Ready")?.reason,
      "Forbidden",
    );
  });

  it("adversarial names cannot leave the prefix", async () => {
    const names = [
      p(`apps/${teamA}/../${teamB}/x`),
      p(`apps/${teamA}/%2e%2e/${teamB}/x`),
      p(`apps/${teamA}/x%2f..%2f..%2f${teamB}%2fx`),
      p(`apps/${teamA.replace("a", "\u0430")}/x`),
      p(`apps/${teamA}\u200b/x`),
      p(`apps/${teamA}/./x`),
    ];
    for (const [i, path] of names.entries())
      await applySeed(client, seed(teamA, `hostile-${i}`, { path, data: { a: "<random:8>" } }));
    // Dot segments are refused as an invalid path before the allow-list is asked; the others pass
    // that check and meet the allow-list. Either way the object is Stalled and writes nothing.
    for (const [i, path] of names.entries()) {
      const dots = path.includes("/../") || path.includes("/./");
      const o = await waitForReason(client, teamA, `hostile-${i}`, dots ? "InvalidSpec" : "Forbidden");
      assert.equal(condition(o, "Stalled")?.status, "True", path);
    }
    // Nothing anywhere a decoding or cleaning of those names could land.
    for (const path of [
      p(`apps/${teamB}/x`),
      p(`apps/${teamA}/x`),
      ...names.filter((n) => !n.includes("/../") && !n.includes("/./")),
    ]) {
      // OpenBao refuses some of these names outright (a zero-width space answers 400): nothing there either.
      const exists = await kv.read(path).then(
        (s) => s.exists,
        (e: Error) => (/HTTP 400/.test(e.message) ? false : Promise.reject(e)),
      );
      assert.equal(exists, false, JSON.stringify(path));
    }
    // The CRD itself refuses doubled and trailing slashes.
    for (const path of [p(`apps/${teamA}//x`), p(`apps/${teamA}/x/`)])
      await assert.rejects(
        applySeed(client, seed(teamA, "slashes", { path, data: { a: "b" } })),
        /spec\.path/,
      );
  });

  it("two namespaces racing for one path: one owns it, the other never adopts it", async () => {
    const path = p("shared/one");
    await Promise.all([
      applySeed(client, seed(teamA, "race", { path, data: { a: "<random:12>" } })),
      applySeed(client, seed(teamB, "race", { path, data: { b: "<random:12>" } })),
    ]);
    const reasons = await eventually(
      async () => {
        const [a, b] = await Promise.all([getSeed(client, teamA, "race"), getSeed(client, teamB, "race")]);
        const ra = condition(a, "Ready")?.reason;
        const rb = condition(b, "Ready")?.reason;
        const final = new Set(["Reconciled", "OwnedByAnother"]);
        return ra && rb && final.has(ra) && final.has(rb) ? { a: ra, b: rb } : undefined;
      },
      30_000,
      "both racers to settle",
    );
    assert.deepEqual(new Set([reasons.a, reasons.b]), new Set(["Reconciled", "OwnedByAnother"]));
    const winner = reasons.a === "Reconciled" ? teamA : teamB;
    const loser = winner === teamA ? teamB : teamA;
    const settled = await kv.read(path);
    assert.equal(settled.customMetadata[OWNER_MARKER_KEY], `${winner}/race`);
    // Only the winner's key: the loser wrote nothing, and keeps writing nothing.
    assert.deepEqual(Object.keys(settled.data), [winner === teamA ? "a" : "b"]);
    await waitForPasses(target, loser, "race");
    const later = await kv.read(path);
    assert.equal(later.version, settled.version);
    assert.equal(later.customMetadata[OWNER_MARKER_KEY], `${winner}/race`);
    assert.match(
      condition(await getSeed(client, loser, "race"), "Ready")!.message,
      new RegExp(`owned by ${winner}/race`),
    );
  });
});
