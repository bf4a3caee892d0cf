import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, LEASE } from "../../src/runtime/builtin-types.js";
import { KubeClient, type Watch } from "../../src/runtime/client.js";
import { startControlPlane } from "../../src/testenv/controlplane.js";
import { createCa, issueCertificate } from "../../src/testenv/pki.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { redirectedCredentials } from "../support/credentials.js";
import { HoldingProxy, serverOf } from "../support/holding-proxy.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

/** Opens `n` watches of ConfigMaps in `ns`; resolves once each has seen the marker object's ADDED. */
async function openWatches(client: KubeClient, ns: string, n: number) {
  const seen = new Set<number>();
  const watches: Watch[] = [];
  for (let i = 0; i < n; i++) {
    watches.push(
      client.watch(CONFIGMAP, { namespace: ns, timeoutSeconds: 600 }, (e) => {
        if (e.type === "ADDED" && e.object.metadata.name === "marker") seen.add(i);
      }),
    );
  }
  for (const w of watches) w.done.catch(() => undefined);
  return {
    watches,
    seen,
    close: () => {
      for (const w of watches) w.abort();
    },
  };
}

const configMap = (ns: string, name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns },
});

const lease = (ns: string, name: string) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name, namespace: ns },
  spec: { holderIdentity: "transport-test", leaseDurationSeconds: 15 },
});

describe("the API client's connections", () => {
  let admin: KubeClient;
  let ns: string;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(admin, "rt-transport");
  });
  after(() => admin.close());

  it("speaks HTTP/2: hundreds of watches, requests and the Lease share a connection and none waits", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    try {
      await client.list(CONFIGMAP, { namespace: ns });
      assert.equal(client.protocol, "h2");
      const heapBefore = process.memoryUsage().heapUsed;
      const open = await openWatches(client, ns, 300);
      await admin.create(CONFIGMAP, configMap(ns, "marker"));
      await eventually(
        () => (open.seen.size === 300 ? true : undefined),
        60_000,
        "every watch to see the marker",
      );
      const perWatch = (process.memoryUsage().heapUsed - heapBefore) / 300;
      // Ordinary requests and the Lease are answered while 300 watches stay open.
      const got = await client.get(CONFIGMAP, "marker", ns);
      assert.equal(got.metadata.name, "marker");
      await client.create(LEASE, lease(ns, "h2-lease"));
      const connections = client.connections();
      const limit = client.streamLimit() ?? 0;
      process.stdout.write(
        `# 300 watches over HTTP/2: ${limit} streams per connection allowed, connections ${JSON.stringify(connections)}, about ${Math.round(perWatch / 1024)} KiB of heap per watch\n`,
      );
      // As few connections as the server's stream limit allows (one stream of each is kept free).
      assert.ok(limit >= 2, `the server announced its stream limit: ${limit}`);
      assert.equal(
        connections["main"],
        Math.ceil(300 / (limit - 1)),
        "connections filled before another opens",
      );
      assert.equal(connections["lease"], 1, "leader election has its own");
      open.close();
    } finally {
      client.close();
    }
  });

  it("over HTTP/1.1 gives watches their own sockets: 100 watches do not starve a GET or the Lease", async () => {
    const client = new KubeClient(clientFor(sharedEnv().kubeconfigPath).credentials, "transport-test", {
      http2: false,
    });
    const watchNs = await freshNamespace(admin, "rt-h1");
    try {
      const open = await openWatches(client, watchNs, 100);
      await admin.create(CONFIGMAP, configMap(watchNs, "marker"));
      await eventually(
        () => (open.seen.size === 100 ? true : undefined),
        60_000,
        "every watch to see the marker",
      );
      assert.equal(client.protocol, "http/1.1");
      const got = await client.get(CONFIGMAP, "marker", watchNs);
      assert.equal(got.metadata.name, "marker");
      await client.create(LEASE, lease(watchNs, "h1-lease"));
      const c = client.connections();
      assert.ok((c["watch"] ?? 0) >= 100, `watch sockets: ${JSON.stringify(c)}`);
      assert.ok((c["request"] ?? 0) >= 1 && (c["lease"] ?? 0) >= 1, JSON.stringify(c));
      open.close();
    } finally {
      client.close();
    }
  });

  it("falls back to HTTP/1.1 when the server does not offer h2", async () => {
    const dir = makeTempDir("h1-only");
    await createCa(dir, "/CN=h1-only-ca");
    await issueCertificate(dir, "server", "/CN=127.0.0.1", ["subjectAltName=IP:127.0.0.1"]);
    // node:https offers only http/1.1 in ALPN, like a proxy that does not speak HTTP/2.
    const server = createHttpsServer(
      { cert: readFileSync(join(dir, "server.crt")), key: readFileSync(join(dir, "server.key")) },
      (req, res) => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "x", namespace: "y" },
            path: req.url,
          }),
        );
      },
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const client = new KubeClient({
      server: `https://127.0.0.1:${port}`,
      source: "test",
      requestAuth: async () => ({ ca: readFileSync(join(dir, "ca.crt"), "utf8") }),
    });
    try {
      const [a, b] = await Promise.all([client.get(CONFIGMAP, "x", "y"), client.get(CONFIGMAP, "x", "y")]);
      assert.equal(a.metadata.name, "x");
      assert.equal(b.metadata.name, "x");
      assert.equal(client.protocol, "http/1.1");
    } finally {
      client.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it("replaces a connection that goes silent: the request is tried again on a new one", async () => {
    const proxy = await HoldingProxy.start(serverOf(sharedEnv().kubeconfigPath));
    const client = new KubeClient(
      redirectedCredentials(admin.credentials, `https://127.0.0.1:${proxy.port}`),
      "transport-test",
    );
    try {
      await admin.create(CONFIGMAP, configMap(ns, "silent"));
      await client.get(CONFIGMAP, "silent", ns);
      assert.equal(proxy.openConnections, 1);
      // The one connection goes silent; new connections still flow.
      proxy.hold("open");
      const got = await client.request<{ metadata: { name: string } }>({
        method: "GET",
        path: client.resourcePath(CONFIGMAP, ns, "silent"),
        idleTimeoutMs: 1_000,
      });
      assert.equal(got.metadata.name, "silent");
      assert.ok(proxy.openConnections >= 2, "a second connection carried the retry");
      // The silent one does not answer its ping and is dropped.
      await eventually(
        () => (client.connections()["main"] === 1 ? true : undefined),
        20_000,
        "the dead connection dropped",
      );
    } finally {
      client.close();
      await proxy.close();
    }
  });

  it("opens more connections when the API server allows few streams on each", async () => {
    const cp = await startControlPlane({ apiServerArgs: ["--http2-max-streams-per-connection=10"] });
    const client = clientFor(cp.kubeconfigPath);
    try {
      const fewNs = await freshNamespace(client, "few-streams");
      const open = await openWatches(client, fewNs, 40);
      const writer = clientFor(cp.kubeconfigPath);
      await writer.create(CONFIGMAP, configMap(fewNs, "marker"));
      writer.close();
      await eventually(
        () => (open.seen.size === 40 ? true : undefined),
        60_000,
        "every watch to see the marker",
      );
      assert.equal((await client.get(CONFIGMAP, "marker", fewNs)).metadata.name, "marker");
      const main = client.connections()["main"] ?? 0;
      process.stdout.write(`# 40 watches, 10 streams per connection allowed: ${main} connections\n`);
      assert.ok(main >= 5, `40 watches need at least 5 connections of 9 usable streams, got ${main}`);
      open.close();
    } finally {
      client.close();
      await cp.stop();
    }
  });
});
