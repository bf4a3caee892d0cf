import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { ApiForwarder } from "../support/api-forwarder.js";
import { HoldingProxy, kubeconfigThrough, serverOf } from "../support/holding-proxy.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";

const configMap = (ns: string, name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns },
});

describe("informer recovery on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-infrec");
    dir = mkdtempSync(join(tmpdir(), "rt-infrec-"));
    await client.create(CONFIGMAP, configMap(ns, "before"));
  });
  after(() => {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('relists after "too large resource version" instead of retrying that version forever', async () => {
    let inflated: string | undefined;
    // The first list answer claims a resourceVersion the server has not reached, as a lagging
    // replica or a restored etcd would make a client hold.
    const fwd = await ApiForwarder.start(sharedEnv().kubeconfigPath, {
      list(body) {
        if (inflated !== undefined) return;
        inflated = String(BigInt(body.metadata.resourceVersion ?? "0") + 1_000_000_000n);
        body.metadata.resourceVersion = inflated;
      },
    });
    const viaFwd = fwd.client();
    const informer = new Informer(viaFwd, CONFIGMAP, {
      namespaces: [ns],
      log: silentLogger(),
      backoffMinMs: 100,
    });
    try {
      informer.start();
      await informer.waitForSync();
      assert.ok(informer.get(`${ns}/before`));
      await client.create(CONFIGMAP, configMap(ns, "after-too-large"));
      await eventually(
        () => informer.get(`${ns}/after-too-large`),
        30_000,
        "the informer to see a new object",
      );
      assert.ok(
        fwd.watches().some((w) => w.query.get("resourceVersion") === inflated),
        "a watch was opened at the inflated resourceVersion",
      );
      assert.ok(fwd.lists().length >= 2, "the informer listed again");
      process.stdout.write(
        `# too-large resourceVersion: ${fwd.watches().filter((w) => w.query.get("resourceVersion") === inflated).length} watch(es) at it before relisting\n`,
      );
    } finally {
      await informer.stop();
      viaFwd.close();
      await fwd.close();
    }
  });

  it("treats a watch silent for two bookmark intervals as broken and reconnects", async () => {
    const proxy = await HoldingProxy.start(serverOf(sharedEnv().kubeconfigPath));
    const viaProxy = clientFor(
      kubeconfigThrough(sharedEnv().kubeconfigPath, proxy.port, join(dir, "kc.json")),
    );
    // A 1 s bookmark interval stands in for the API server's minute, so the test is short; the
    // server's own watch timeout stays long, so only silence detection can end the held watch.
    const informer = new Informer(viaProxy, CONFIGMAP, {
      namespaces: [ns],
      log: silentLogger(),
      bookmarkIntervalMs: 1_000,
      backoffMinMs: 100,
      backoffMaxMs: 1_000,
      watchTimeoutSeconds: [600, 600],
    });
    try {
      informer.start();
      await informer.waitForSync();
      // Let the watch be open, then make its connection go silent; new connections still flow.
      await eventually(() => (proxy.openConnections > 0 ? true : undefined), 10_000, "the watch connection");
      proxy.hold("open");
      await client.create(CONFIGMAP, configMap(ns, "after-silence"));
      await eventually(() => informer.get(`${ns}/after-silence`), 30_000, "the informer to see a new object");
    } finally {
      await informer.stop();
      viaProxy.close();
      await proxy.close();
    }
  });

  it("backs off after watches that close at once with no event, instead of looping hot", async () => {
    const fwd = await ApiForwarder.start(sharedEnv().kubeconfigPath, { watch: "close" });
    const viaFwd = fwd.client();
    const minMs = 100;
    const informer = new Informer(viaFwd, CONFIGMAP, {
      namespaces: [ns],
      log: silentLogger(),
      backoffMinMs: minMs,
      backoffMaxMs: 60_000,
    });
    try {
      informer.start();
      await informer.waitForSync();
      await eventually(() => (fwd.watches().length >= 6 ? true : undefined), 30_000, "six watch attempts");
      const at = fwd.watches().map((w) => w.at);
      // The delay before watch n+1 is at least min·2^(n-1): lower bounds, so a slow machine can
      // only make the gaps longer, never fail the test. A hot loop makes them a few ms.
      for (let n = 1; n < 6; n++) {
        const gap = at[n]! - at[n - 1]!;
        assert.ok(
          gap >= minMs * 2 ** (n - 1) - 5,
          `gap ${n} was ${gap} ms, below ${minMs * 2 ** (n - 1)} ms`,
        );
      }
      process.stdout.write(
        `# gaps between quick-closing watches: ${at
          .slice(1)
          .map((t, i) => t - at[i]!)
          .join(", ")} ms\n`,
      );
    } finally {
      await informer.stop();
      viaFwd.close();
      await fwd.close();
    }
  });
});
