import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { LEASE, LeaderElector } from "../../src/runtime/leaderelection.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { HoldingProxy, kubeconfigThrough, serverOf } from "../support/holding-proxy.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

type Lease = KubeObject & { spec?: { holderIdentity?: string | null } };

describe("releasing the Lease while a renewal is in flight", () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-release");
    dir = mkdtempSync(join(tmpdir(), "rt-release-"));
  });
  after(() => {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("aborts and awaits the renewal first, so nothing it sent can re-take the Lease afterwards", async () => {
    const proxy = await HoldingProxy.start(serverOf(sharedEnv().kubeconfigPath));
    const viaProxy = clientFor(
      kubeconfigThrough(sharedEnv().kubeconfigPath, proxy.port, join(dir, "kc.json")),
    );
    const elector = new LeaderElector(viaProxy, {
      namespace: ns,
      name: "race",
      identity: "me",
      leaseDurationMs: 8_000,
      renewDeadlineMs: 6_000,
      retryPeriodMs: 300,
      log: silentLogger(),
    });
    const stop = new AbortController();
    try {
      assert.equal(await elector.acquire(stop.signal, () => assert.fail("not lost here")), true);
      // The connection renewals use now keeps what it carries; the next renewal is sent and
      // stays unanswered, in flight.
      proxy.hold("open", "buffer");
      await eventually(() => (proxy.bufferedBytes > 0 ? true : undefined), 10_000, "a renewal in flight");
      await elector.release();
      const released = await client.get<Lease>(LEASE, "race", ns);
      assert.equal(released.spec?.holderIdentity ?? null, null, "released");
      // The renewal was aborted, its connection closed: nothing is left that could land later.
      await eventually(
        () => (proxy.heldConnections === 0 ? true : undefined),
        5_000,
        "the held renewal to be aborted",
      );
      // Deliver whatever was held anyway: a renewal still pending would now read the released
      // Lease and take it again.
      proxy.flush();
      const after = await client.get<Lease>(LEASE, "race", ns);
      assert.equal(after.spec?.holderIdentity ?? null, null, "still released");
      assert.equal(
        after.metadata.resourceVersion,
        released.metadata.resourceVersion,
        "no write after the release",
      );
    } finally {
      stop.abort();
      viaProxy.close();
      await proxy.close();
    }
  });
});
