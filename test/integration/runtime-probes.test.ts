import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, LEASE } from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";
import { Controller } from "../../src/runtime/controller.js";
import { type RunningServer, startMetricsServer, startProbeServer } from "../../src/runtime/http.js";
import { createLogger, silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { MetricsAuthorizer } from "../../src/runtime/secure-metrics.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { redirectedCredentials } from "../support/credentials.js";
import { HoldingProxy, serverOf } from "../support/holding-proxy.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { clientWithToken, grantClusterWide, serviceAccountToken } from "../support/rbac.js";

/**
 * A TCP proxy on loopback in front of the API server that the test can cut: while cut, open
 * connections are destroyed and new ones refused, as when the API server is unreachable.
 */
class CuttableProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private cut = false;
  port = 0;

  constructor(upstream: URL) {
    this.server = createServer((down) => {
      if (this.cut) return down.destroy();
      const up = connect(Number(upstream.port), upstream.hostname);
      for (const s of [down, up]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      down.pipe(up).pipe(down);
      down.on("close", () => up.destroy());
      up.on("close", () => down.destroy());
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as { port: number }).port;
  }

  sever(): void {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  async stop(): Promise<void> {
    this.sever();
    await new Promise((r) => this.server.close(r));
  }
}

/** The admin's credentials, pointed at another server URL (the proxy). */
function clientVia(admin: KubeClient, server: string): KubeClient {
  return new KubeClient(redirectedCredentials(admin.credentials, server), "platform-operator-tests");
}

async function get(
  url: string,
  token?: string,
): Promise<{ status: number; body: string; auth: string | null }> {
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: await res.text(), auth: res.headers.get("www-authenticate") };
}

describe("liveness against the shared API server", () => {
  let admin: KubeClient;
  let ns: string;
  let proxy: CuttableProxy;
  let client: KubeClient;
  let manager: Manager;
  let probes: RunningServer;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => {
    release = r;
  });

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(admin, "rt-live");
    proxy = new CuttableProxy(new URL(admin.serverUrl));
    await proxy.start();
    client = clientVia(admin, `https://127.0.0.1:${proxy.port}`);
    manager = new Manager({ target: "live", client, log: silentLogger(), namespaces: [ns] });
    // Short watches and retries keep a healthy loop well inside the threshold on a busy machine.
    const informer = manager.informer(CONFIGMAP, { watchTimeoutSeconds: [1, 2], backoffMaxMs: 500 });
    const controller = new Controller({
      name: "live-configmaps",
      log: silentLogger(),
      concurrency: 1,
      reconcile: async (key) => {
        if (key.endsWith("/hang")) await gate;
        return undefined;
      },
    });
    controller.watchPrimary(informer);
    manager.add(controller);
    await manager.start();
    probes = await startProbeServer(
      {
        readinessProblems: () => manager.readinessProblems(),
        livenessProblems: () => manager.livenessProblems(4_000),
      },
      0,
      "127.0.0.1",
    );
  });
  after(async () => {
    release();
    await manager.stop();
    await probes.close();
    await proxy.stop();
    client.close();
    admin.close();
  });

  const healthz = () => get(`http://127.0.0.1:${probes.port}/healthz`);

  it("goes false while every worker is stuck and keys wait, and true again once they move", async () => {
    await eventually(async () => (await healthz()).status === 200, 60_000, "alive at first");
    const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns } });
    await admin.apply(CONFIGMAP, cm("hang"), { fieldManager: "t" });
    await admin.apply(CONFIGMAP, cm("waiting"), { fieldManager: "t" });
    const stuck = await eventually(
      async () => {
        const r = await healthz();
        return r.status === 500 ? r : undefined;
      },
      60_000,
      "a failing liveness probe",
    );
    assert.match(stuck.body, /live: controller live-configmaps: 1 keys waiting, no worker progress/);
    assert.doesNotMatch(stuck.body, /informer/, "the informer itself is fine");
    release();
    await eventually(async () => (await healthz()).status === 200, 60_000, "alive again");
  });

  it("goes false while the informer cannot reach the API server, and true again once it can", async () => {
    await eventually(async () => (await healthz()).status === 200, 60_000, "alive at first");
    proxy.sever();
    const stuck = await eventually(
      async () => {
        const r = await healthz();
        return r.status === 500 ? r : undefined;
      },
      60_000,
      "a failing liveness probe",
    );
    assert.match(
      stuck.body,
      new RegExp(`live: informer configmaps \\(namespace ${ns}\\): no list or watch progress`),
    );
    // Readiness is about the cache having synced once; the cut does not make the process unready.
    assert.equal((await get(`http://127.0.0.1:${probes.port}/readyz`)).status, 200);
    proxy.restore();
    await eventually(async () => (await healthz()).status === 200, 60_000, "alive again");
  });
});

describe("liveness of leader election", () => {
  it("goes false, naming the Lease, while a standby's attempts get no answer, and true again once they do", async () => {
    const admin = clientFor(sharedEnv().kubeconfigPath);
    const ns = await freshNamespace(admin, "rt-le-live");
    // Another process holds the Lease and keeps it: this manager stays a standby that polls it.
    const lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "stuck-live", namespace: ns },
      spec: {
        holderIdentity: "someone-else",
        leaseDurationSeconds: 3600,
        renewTime: new Date().toISOString().replace("Z", "000Z"),
      },
    };
    await admin.create(LEASE, lease);
    const proxy = await HoldingProxy.start(serverOf(sharedEnv().kubeconfigPath));
    const client = clientVia(admin, `https://127.0.0.1:${proxy.port}`);
    const manager = new Manager({
      target: "live",
      client,
      log: silentLogger(),
      namespaces: [ns],
      leaderElection: {
        namespace: ns,
        leaseName: "stuck",
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 500,
      },
    });
    const probes = await startProbeServer(
      {
        readinessProblems: () => manager.readinessProblems(),
        livenessProblems: () => manager.livenessProblems(60_000),
      },
      0,
      "127.0.0.1",
    );
    const healthz = () => get(`http://127.0.0.1:${probes.port}/healthz`);
    const starting = manager.start();
    try {
      await eventually(
        async () => ((await healthz()).status === 200 ? true : undefined),
        30_000,
        "alive as a standby",
      );
      // Nothing the standby sends reaches the API server any more, on open connections or new ones.
      proxy.hold("all");
      const stuck = await eventually(
        async () => {
          const r = await healthz();
          return r.status === 500 ? r : undefined;
        },
        30_000,
        "a failing liveness probe",
      );
      assert.match(
        stuck.body,
        /live: leader election stuck-live: no acquire or renew attempt answered for \d+s \(deadline 3s\)/,
      );
      proxy.release();
      await eventually(
        async () => ((await healthz()).status === 200 ? true : undefined),
        30_000,
        "alive again",
      );
    } finally {
      await manager.stop();
      await starting;
      await probes.close();
      client.close();
      await proxy.close();
      admin.close();
    }
  });
});

describe("secure metrics against the shared API server (TokenReview + SubjectAccessReview)", () => {
  let admin: KubeClient;
  let ns: string;
  let operatorClient: KubeClient;
  let server: RunningServer;
  const tokens: Record<string, string> = {};
  const logs: string[] = [];
  const sink = new Writable({
    write(c, _e, cb) {
      logs.push(String(c));
      cb();
    },
  });
  let url: string;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(admin, "rt-metrics");
    // The operator's identity may only ask the API server to review tokens and access.
    tokens["operator"] = await serviceAccountToken(admin, ns, "operator");
    await grantClusterWide(admin, ns, "operator", `${ns}-metrics-auth`, [
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
      { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
    ]);
    tokens["scraper"] = await serviceAccountToken(admin, ns, "scraper");
    await grantClusterWide(admin, ns, "scraper", `${ns}-metrics-reader`, [
      { nonResourceURLs: ["/metrics"], verbs: ["get"] },
    ]);
    tokens["other-url"] = await serviceAccountToken(admin, ns, "other-url");
    await grantClusterWide(admin, ns, "other-url", `${ns}-healthz-reader`, [
      { nonResourceURLs: ["/healthz"], verbs: ["get"] },
    ]);
    tokens["nobody"] = await serviceAccountToken(admin, ns, "nobody");
    operatorClient = clientWithToken(admin, tokens["operator"]!);
    const log = createLogger({ level: "debug", stream: sink });
    server = await startMetricsServer({
      port: 0,
      host: "127.0.0.1",
      authorizer: new MetricsAuthorizer(operatorClient, { log }),
    });
    url = `http://127.0.0.1:${server.port}/metrics`;
  });
  after(async () => {
    await server.close();
    operatorClient.close();
    admin.close();
  });

  it("serves a caller whose ServiceAccount may get /metrics", async () => {
    const r = await get(url, tokens["scraper"]);
    assert.equal(r.status, 200, r.body);
    assert.match(r.body, /# HELP rest_client_requests_total/);
    // A second scrape within the cache lifetime is answered the same way.
    assert.equal((await get(url, tokens["scraper"])).status, 200);
  });

  it("refuses a missing or invalid token with 401, and a valid but unauthorized one with 403", async () => {
    const none = await get(url);
    assert.equal(none.status, 401);
    assert.match(none.auth ?? "", /^Bearer/);
    assert.equal((await get(url, "not-a-token")).status, 401);
    const forged = `${tokens["scraper"]!.slice(0, -4)}AAAA`;
    assert.equal((await get(url, forged)).status, 401, "a token with a broken signature");
    const nobody = await get(url, tokens["nobody"]);
    assert.equal(nobody.status, 403);
    assert.match(nobody.body, new RegExp(`system:serviceaccount:${ns}:nobody may not get /metrics`));
    assert.equal((await get(url, tokens["other-url"])).status, 403, "allowed /healthz is not /metrics");
    assert.equal((await fetch(url.replace("/metrics", "/healthz"))).status, 404, "only /metrics here");
  });

  it("serves over TLS when given a certificate, still asking for a token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "metrics-tls-"));
    try {
      const [cert, key] = [join(dir, "tls.crt"), join(dir, "tls.key")];
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          key,
          "-out",
          cert,
          "-days",
          "1",
          "-subj",
          "/CN=metrics",
          "-addext",
          "subjectAltName=IP:127.0.0.1",
        ],
        { stdio: "ignore" },
      );
      const pem = { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
      const s = await startMetricsServer({
        port: 0,
        host: "127.0.0.1",
        authorizer: new MetricsAuthorizer(operatorClient),
        tls: pem,
      });
      const call = (token?: string) =>
        new Promise<number>((resolve, reject) => {
          const req = httpsRequest(
            {
              host: "127.0.0.1",
              port: s.port,
              path: "/metrics",
              ca: pem.cert,
              headers: token ? { Authorization: `Bearer ${token}` } : {},
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on("error", reject);
          req.end();
        });
      try {
        assert.equal(await call(), 401);
        assert.equal(await call(tokens["scraper"]), 200);
        await assert.rejects(fetch(`http://127.0.0.1:${s.port}/metrics`), "no plain HTTP on the TLS port");
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers 503 without the operator's own permission to review, and logs no token", async () => {
    const noRights = clientWithToken(admin, tokens["nobody"]!);
    const s = await startMetricsServer({
      port: 0,
      host: "127.0.0.1",
      authorizer: new MetricsAuthorizer(noRights, {
        log: createLogger({ stream: sink }),
      }),
    });
    try {
      const r = await get(`http://127.0.0.1:${s.port}/metrics`, tokens["scraper"]);
      assert.equal(r.status, 503);
    } finally {
      await s.close();
      noRights.close();
    }
    assert.ok(logs.length > 0, "the failure was logged");
    const all = logs.join("");
    for (const t of Object.values(tokens)) assert.ok(!all.includes(t), "a token reached the log");
  });
});
