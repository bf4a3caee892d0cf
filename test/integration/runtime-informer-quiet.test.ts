import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { LIMIT_RANGE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { Informer, type InformerOptions } from "../../src/runtime/informer.js";
import { createLogger } from "../../src/runtime/log.js";
import { informerRelists, restClientRequests } from "../../src/runtime/metrics.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { ApiForwarder } from "../support/api-forwarder.js";
import { HoldingProxy, kubeconfigThrough, serverOf } from "../support/holding-proxy.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";

// Quiet watches (issue 46): a watch of a kind nobody writes gets no event and, until the API
// server's watch cache of that kind moves past its resourceVersion, no bookmark either. It must
// cost no list and no warning; a dead connection must still be found. A short bookmark interval
// stands in for the server's minute, so a quiet period is seconds here, not two minutes.
const BOOKMARK_MS = 1_500;
const QUIET_MS = 2 * BOOKMARK_MS;

/** A debug logger whose lines the test reads (the operator's own, so what a user would see). */
function recordingLog(): { log: InformerOptions["log"]; lines: () => { level: string; msg: string }[] } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      raw.push(String(chunk));
      cb();
    },
  });
  return {
    log: createLogger({ level: "debug", stream: sink }),
    lines: () => raw.map((l) => JSON.parse(l) as { level: string; msg: string }),
  };
}

/** Counts what the informer asks its client for: lists, watches, and "has the server reached it" checks. */
function countCalls(client: KubeClient): { lists: number; watches: number; probes: number } {
  const n = { lists: 0, watches: 0, probes: 0 };
  const list = client.list.bind(client);
  const watch = client.watch.bind(client);
  const probe = client.reachedResourceVersion.bind(client);
  client.list = ((...a: Parameters<typeof list>) => {
    n.lists++;
    return list(...a);
  }) as typeof client.list;
  client.watch = ((...a: Parameters<typeof watch>) => {
    n.watches++;
    return watch(...a);
  }) as typeof client.watch;
  client.reachedResourceVersion = (...a) => {
    n.probes++;
    return probe(...a);
  };
  return n;
}

/** GET requests this process sent to `host` so far, as rest_client_requests_total counts them. */
async function getsTo(host: string): Promise<number> {
  const m = await restClientRequests.get();
  return m.values
    .filter((v) => v.labels["method"] === "GET" && v.labels["host"] === host)
    .reduce((sum, v) => sum + v.value, 0);
}

async function relists(): Promise<number> {
  const m = await informerRelists.get();
  return m.values.filter((v) => v.labels["resource"] === LIMIT_RANGE.plural).reduce((s, v) => s + v.value, 0);
}

const limitRange = (ns: string, name: string) => ({
  apiVersion: "v1",
  kind: "LimitRange",
  metadata: { name, namespace: ns },
  spec: { limits: [{ type: "Container", default: { cpu: "100m" } }] },
});

const warnings = (lines: { level: string; msg: string }[]) =>
  lines.filter((l) => l.level === "warn" || l.level === "error" || l.level === "fatal");

describe("quiet watches on the real API server", () => {
  let admin: KubeClient;
  let ns: string;
  let dir: string;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(admin, "rt-quiet");
    dir = mkdtempSync(join(tmpdir(), "rt-quiet-"));
  });
  after(() => {
    admin.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps a quiet watch over HTTP/2: no request after the first list and watch, no warning, alive for liveness", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    const calls = countCalls(client);
    const rec = recordingLog();
    const host = new URL(client.serverUrl).host;
    const informer = new Informer(client, LIMIT_RANGE, {
      namespaces: [ns],
      log: rec.log,
      bookmarkIntervalMs: BOOKMARK_MS,
      watchTimeoutSeconds: [600, 600],
    });
    const getsBefore = await getsTo(host);
    const relistsBefore = await relists();
    try {
      informer.start();
      await informer.waitForSync();
      // A request is counted once answered: the list, then the watch's 200.
      await eventually(
        async () => ((await getsTo(host)) - getsBefore === 2 ? true : undefined),
        10_000,
        "the watch",
      );
      // Quiet periods judged (before issue 46 each ended in a warning, a LIST and a WATCH): wait for
      // the connection checks that prove them, not for a length of time.
      const checks = () => rec.lines().filter((l) => l.msg === "watch quiet").length;
      await eventually(() => (checks() >= 3 ? true : undefined), 30 * QUIET_MS, "three quiet periods judged");
      const quiet = checks();
      const sent = (await getsTo(host)) - getsBefore - 2;
      process.stdout.write(
        `# HTTP/2, idle through ${quiet} quiet periods of ${QUIET_MS} ms: ${sent} GETs, ${calls.lists} list(s) and ${calls.watches} watch(es) in all, ${quiet} connection checks\n`,
      );
      assert.equal(client.protocol, "h2");
      assert.equal(sent, 0, "no request at all while idle: the watch is kept open");
      assert.equal(calls.lists, 1, "only the first list");
      assert.equal(calls.watches, 1, "the one watch stays open");
      assert.equal(calls.probes, 0, "no freshness check before staleAfterMs");
      assert.equal((await relists()) - relistsBefore, 0);
      // A bookmark may come (etcd's progress notification); most quiet periods must have been judged.
      assert.ok(quiet >= 2, `the quiet watch's connection was checked (${quiet} times)`);
      assert.deepEqual(warnings(rec.lines()), [], "nothing above debug");
      // Liveness sees the answered pings as progress: before, the last sign of life was the watch's start.
      assert.deepEqual(informer.stalledScopes(2.5 * QUIET_MS), []);
      // And the kept watch is live: a new object arrives through it.
      await admin.create(LIMIT_RANGE, limitRange(ns, "arrives"));
      await eventually(() => informer.get(`${ns}/arrives`), 10_000, "the object through the kept watch");
      assert.equal(calls.lists, 1);
      assert.equal(calls.watches, 1);
      await admin.delete(LIMIT_RANGE, "arrives", ns);
      await eventually(() => (informer.get(`${ns}/arrives`) ? undefined : true), 10_000, "the deletion");
    } finally {
      await informer.stop();
      client.close();
    }
  });

  it("over HTTP/1.1 (no ping) opens a quiet watch again from its resourceVersion: WATCH requests only", async () => {
    const fwd = await ApiForwarder.start(sharedEnv().kubeconfigPath, {});
    const client = fwd.client();
    const rec = recordingLog();
    const informer = new Informer(client, LIMIT_RANGE, {
      namespaces: [ns],
      log: rec.log,
      bookmarkIntervalMs: BOOKMARK_MS,
      watchTimeoutSeconds: [600, 600],
      // A freshness check (one-item list) once in the window, to show it lists nothing more.
      staleAfterMs: 3 * QUIET_MS,
    });
    try {
      informer.start();
      await informer.waitForSync();
      const listedAt = fwd.requests.length;
      // Wait for what proves the quiet periods passed: three re-opened watches and the freshness check.
      const since = () => fwd.requests.slice(listedAt);
      await eventually(
        () => {
          const r = since();
          const reopened = r.filter((q) => q.query.get("watch") === "true").length;
          const checked = r.some((q) => q.query.get("resourceVersionMatch") === "NotOlderThan");
          return reopened >= 3 && checked ? true : undefined;
        },
        30 * QUIET_MS,
        "quiet watches re-opened and a freshness check",
      );
      const after = since();
      const watches = after.filter((r) => r.query.get("watch") === "true");
      const probes = after.filter((r) => r.query.get("resourceVersionMatch") === "NotOlderThan");
      const lists = after.filter((r) => !watches.includes(r) && !probes.includes(r));
      process.stdout.write(
        `# HTTP/1.1, idle: ${watches.length} watches, ${probes.length} freshness checks, ${lists.length} lists\n`,
      );
      assert.equal(client.protocol, "http/1.1");
      assert.deepEqual(
        lists.map((r) => `${r.method} ${r.path}?${r.query}`),
        [],
        "no list after the first",
      );
      assert.ok(watches.length >= 3, `a quiet watch is opened again (${watches.length} watches)`);
      for (const w of watches)
        assert.ok(w.query.get("resourceVersion"), "every watch resumes from a resourceVersion");
      assert.ok(
        probes.length >= 1 && probes.length <= 2,
        `freshness checked once per staleAfterMs (${probes.length})`,
      );
      for (const p of probes) assert.equal(p.query.get("limit"), "1");
      assert.deepEqual(warnings(rec.lines()), [], "nothing above debug");
    } finally {
      await informer.stop();
      client.close();
      await fwd.close();
    }
  });

  it("still finds a dead connection within two bookmark intervals and resumes the watch without listing", async () => {
    const proxy = await HoldingProxy.start(serverOf(sharedEnv().kubeconfigPath));
    const client = clientFor(kubeconfigThrough(sharedEnv().kubeconfigPath, proxy.port, join(dir, "kc.json")));
    const calls = countCalls(client);
    const rec = recordingLog();
    const informer = new Informer(client, CONFIGMAP, {
      namespaces: [ns],
      log: rec.log,
      bookmarkIntervalMs: BOOKMARK_MS,
      backoffMinMs: 100,
      backoffMaxMs: 1_000,
      watchTimeoutSeconds: [600, 600],
    });
    try {
      informer.start();
      await informer.waitForSync();
      // The watch answered (a request is counted once its head arrives), so it is its open stream
      // that dies, not a request still waiting for its answer.
      const proxied = new URL(client.serverUrl).host;
      await eventually(async () => ((await getsTo(proxied)) >= 2 ? true : undefined), 10_000, "the watch");
      // The path dies under the open connection; new connections still flow. The HTTP/2 pinger's
      // own 30 s + 15 s cannot be what finds it within the bound asserted below.
      proxy.hold("open");
      const cutAt = performance.now();
      await admin.create(CONFIGMAP, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "after-cut", namespace: ns },
      });
      await eventually(() => informer.get(`${ns}/after-cut`), 30_000, "the informer to see a new object");
      const tookMs = Math.round(performance.now() - cutAt);
      process.stdout.write(
        `# dead connection found and the watch resumed in ${tookMs} ms (quiet period ${QUIET_MS} ms)\n`,
      );
      // The transport's own pinger (every 30 s, 15 s to answer) cannot drop it sooner than 15 s.
      assert.ok(tookMs < 15_000, `found by the quiet watch's check, not the pinger (${tookMs} ms)`);
      assert.equal(calls.lists, 1, "resumed from its resourceVersion, not listed again");
      assert.ok(calls.watches >= 2, "the watch was opened again");
      assert.ok(
        warnings(rec.lines()).some((l) => l.msg === "list/watch failed; retrying"),
        "a dead connection is a real failure and says so",
      );
    } finally {
      await informer.stop();
      client.close();
      await proxy.close();
    }
  });
});
