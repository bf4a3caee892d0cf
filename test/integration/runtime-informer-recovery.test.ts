import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { Informer, type InformerOptions } from "../../src/runtime/informer.js";
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

  it("relists when the watch cache is behind its resourceVersion (a silent watch), instead of resuming it", async () => {
    // The watch cache accepts a version it has not reached and then sends nothing older, not even
    // bookmarks: only long silence hints at it, and a one-item list at NotOlderThan tells it from a
    // quiet kind. A 1 s bookmark interval and a 4 s staleAfterMs keep the test short.
    const { watchesAtInflated, lists, probes } = await inflatedResourceVersion(
      sharedEnv().kubeconfigPath,
      client,
      ns,
      {
        bookmarkIntervalMs: 1_000,
        staleAfterMs: 4_000,
      },
    );
    assert.ok(watchesAtInflated >= 1, "a watch was opened at the inflated resourceVersion");
    assert.ok(probes >= 1, "the server was asked whether it reached that resourceVersion");
    assert.ok(lists >= 2, "the informer listed again");
  });

  it('relists after a "too large resource version" answer instead of retrying that version', async () => {
    // kube-apiserver sends this Status where it will not wait for a version it has not reached
    // (lists and watch-lists at a resourceVersion); plain watches stay silent, as above. The
    // answer is injected at the forwarder, everything else is the real server. The default
    // bookmark interval means silence detection (2 min) cannot be what rescues it here.
    const { watchesAtInflated, lists } = await inflatedResourceVersion(
      sharedEnv().kubeconfigPath,
      client,
      ns,
      {},
      true,
    );
    assert.ok(watchesAtInflated >= 1, "a watch was asked at the inflated resourceVersion");
    assert.ok(lists >= 2, "the informer listed again");
  });

  it("treats a watch silent for two bookmark intervals whose connection does not answer as broken and reconnects", async () => {
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

describe("informer backoff on a flapping watch", () => {
  it("keeps its failure count while a watch breaks after every event, resetting it only after a healthy period", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    const ns = await freshNamespace(client, "rt-flap");
    await client.create(CONFIGMAP, configMap(ns, "ticker"));
    const fwd = await ApiForwarder.start(sharedEnv().kubeconfigPath, { watch: "cut-after-event" });
    const viaFwd = fwd.client();
    const minMs = 100;
    const informer = new Informer(viaFwd, CONFIGMAP, {
      namespaces: [ns],
      log: silentLogger(),
      backoffMinMs: minMs,
      backoffMaxMs: 60_000,
    });
    let ticking = true;
    // A change every 50 ms: each watch gets its one event at once, then breaks.
    const ticker = (async () => {
      for (let n = 0; ticking; n++) {
        await client.mergePatch(CONFIGMAP, "ticker", ns, { data: { n: String(n) } }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      informer.start();
      await informer.waitForSync();
      await eventually(() => (fwd.watches().length >= 6 ? true : undefined), 30_000, "six watch attempts");
      const at = fwd.watches().map((w) => w.at);
      // An event is not a healthy period: the delays keep doubling. Resetting on every event
      // (the old behaviour) would keep them at the minimum, hammering the server.
      for (let n = 1; n < 6; n++) {
        const gap = at[n]! - at[n - 1]!;
        assert.ok(
          gap >= minMs * 2 ** (n - 1) - 5,
          `gap ${n} was ${gap} ms, below ${minMs * 2 ** (n - 1)} ms`,
        );
      }
      process.stdout.write(
        `# gaps between watches that break after one event: ${at
          .slice(1, 6)
          .map((t, i) => t - at[i]!)
          .join(", ")} ms\n`,
      );
    } finally {
      ticking = false;
      await ticker;
      await informer.stop();
      viaFwd.close();
      await fwd.close();
      client.close();
    }
  });
});

/**
 * Runs an informer whose first list answer claims a resourceVersion the server has not reached
 * (what a lagging replica or an etcd restored from backup makes a client hold), then checks that
 * it still sees an object created afterwards.
 */
async function inflatedResourceVersion(
  kubeconfigPath: string,
  client: KubeClient,
  ns: string,
  extra: Partial<InformerOptions>,
  tooLarge = false,
): Promise<{ watchesAtInflated: number; lists: number; probes: number }> {
  let inflated: string | undefined;
  const fwd = await ApiForwarder.start(kubeconfigPath, {
    watchStatus: (q) =>
      tooLarge && q.get("resourceVersion") === inflated ? tooLargeStatus(inflated!) : undefined,
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
    watchTimeoutSeconds: [600, 600],
    ...extra,
  });
  try {
    informer.start();
    await informer.waitForSync();
    assert.ok(informer.get(`${ns}/before`));
    const name = `after-${Date.now()}`;
    await client.create(CONFIGMAP, configMap(ns, name));
    await eventually(() => informer.get(`${ns}/${name}`), 30_000, "the informer to see a new object");
    const watchesAtInflated = fwd.watches().filter((w) => w.query.get("resourceVersion") === inflated).length;
    process.stdout.write(
      `# inflated resourceVersion: ${watchesAtInflated} watch(es) at it before relisting\n`,
    );
    // Whether the server reached a version is asked with a one-item list at NotOlderThan; the
    // informer's own lists never name a resourceVersion.
    const probes = fwd.lists().filter((r) => r.query.get("resourceVersionMatch") === "NotOlderThan").length;
    return { watchesAtInflated, lists: fwd.lists().length - probes, probes };
  } finally {
    await informer.stop();
    viaFwd.close();
    await fwd.close();
  }
}

/** The Status kube-apiserver builds for a resourceVersion it has not reached (storage.NewTooLargeResourceVersionError). */
function tooLargeStatus(rv: string): { code: number; status: Record<string, unknown> } {
  return {
    code: 504,
    status: {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `Too large resource version: ${rv}, current: 1`,
      reason: "Timeout",
      details: {
        causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
        retryAfterSeconds: 1,
      },
      code: 504,
    },
  };
}
