import assert from "node:assert/strict";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { KubeClient, loadKubeConfig } from "../../src/runtime/client.js";
import type { Credentials } from "../../src/runtime/credentials/index.js";
import { ApiError } from "../../src/runtime/errors.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { staticCredentials } from "../support/credentials.js";
import { CONFIGMAP, clientFor, freshNamespace } from "../support/kube.js";

/**
 * A loopback HTTP proxy in front of the shared API server that the test controls: it records when
 * each request arrived and, for paths the test names, answers 429 (with or without Retry-After)
 * a given number of times before it forwards, as API priority and fairness does under load.
 */
class ThrottlingProxy {
  readonly arrivals: { path: string; at: number }[] = [];
  private readonly rules = new Map<string, { remaining: number; retryAfter?: string }>();
  private server?: http.Server;
  port = 0;

  constructor(private readonly upstream: Credentials) {}

  throttle(path: string, times: number, retryAfter?: string): void {
    this.rules.set(path, { remaining: times, retryAfter });
  }

  attempts(path: string): number[] {
    return this.arrivals.filter((a) => a.path === path).map((a) => a.at);
  }

  async start(): Promise<void> {
    const tls: https.RequestOptions = await this.upstream.requestAuth();
    const target = new URL(this.upstream.server);
    this.server = http.createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0]!;
      this.arrivals.push({ path, at: performance.now() });
      const rule = this.rules.get(path);
      if (rule && rule.remaining > 0) {
        rule.remaining--;
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        if (rule.retryAfter !== undefined) headers["Retry-After"] = rule.retryAfter;
        res.writeHead(429, headers);
        res.end(
          JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            reason: "TooManyRequests",
            message: "too many requests, please try again later",
            code: 429,
          }),
        );
        return;
      }
      const up = https.request(
        {
          ...tls,
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: target.host },
        },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on("error", () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** A client whose every request goes through this proxy. */
  client(options: ConstructorParameters<typeof KubeClient>[2]): KubeClient {
    const kc = staticCredentials({ server: `http://127.0.0.1:${this.port}` });
    return new KubeClient(kc, "platform-operator-tests", options);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}

describe("client behaviour under load (429, Retry-After, client-side rate limit)", () => {
  let admin: KubeClient;
  let proxy: ThrottlingProxy;
  let ns: string;
  const clients: KubeClient[] = [];
  const path = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(admin, "rt-ratelimit");
    for (const name of ["a", "b", "c", "d"])
      await admin.apply(
        CONFIGMAP,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns } },
        { fieldManager: "t" },
      );
    proxy = new ThrottlingProxy(loadKubeConfig(sharedEnv().kubeconfigPath));
    await proxy.start();
  });
  after(async () => {
    for (const c of clients) c.close();
    await proxy.stop();
    admin.close();
  });

  const throughProxy = (options: ConstructorParameters<typeof KubeClient>[2] = {}) => {
    const c = proxy.client(options);
    clients.push(c);
    return c;
  };

  it("waits as long as Retry-After says, then succeeds", async () => {
    proxy.throttle(path("a"), 2, "1");
    const client = throughProxy();
    const cm = await client.get(CONFIGMAP, "a", ns);
    assert.equal(cm.metadata.name, "a");
    const at = proxy.attempts(path("a"));
    assert.equal(at.length, 3, "two refusals, then the answer");
    assert.ok(at[1]! - at[0]! >= 1000, `second attempt ${Math.round(at[1]! - at[0]!)} ms after the first`);
    assert.ok(at[2]! - at[1]! >= 1000, `third attempt ${Math.round(at[2]! - at[1]!)} ms after the second`);
  });

  it("gives up after maxRetries, with the 429 as the error", async () => {
    proxy.throttle(path("b"), 1000, "0");
    const client = throughProxy({ maxRetries: 3 });
    const err = await client.get(CONFIGMAP, "b", ns).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError && err.code === 429, String(err));
    assert.match((err as Error).message, /gave up after 4 attempts/);
    assert.equal(proxy.attempts(path("b")).length, 4, "exactly 1 + maxRetries attempts, no storm");
  });

  it("does not retry a 429 without Retry-After: the caller's own backoff decides", async () => {
    proxy.throttle(path("c"), 1);
    const client = throughProxy();
    const err = await client.get(CONFIGMAP, "c", ns).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError && err.code === 429);
    assert.equal(proxy.attempts(path("c")).length, 1);
  });

  it("spaces requests by the client-side token bucket (qps 5, burst 2)", async () => {
    const client = throughProxy({ rateLimit: { qps: 5, burst: 2 } });
    const n = 10;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: n }, () => client.get(CONFIGMAP, "d", ns)));
    const at = proxy
      .attempts(path("d"))
      .map((t) => t - t0)
      .sort((a, b) => a - b);
    assert.equal(at.length, n);
    // The k-th request cannot leave before its token exists: (k - burst + 1) / qps seconds after t0.
    for (let k = 2; k < n; k++) {
      const earliest = ((k - 1) / 5) * 1000;
      assert.ok(
        at[k]! >= earliest - 5,
        `request ${k} arrived at ${Math.round(at[k]!)} ms, before ${earliest} ms`,
      );
    }
  });

  it("lets Lease requests (leader election) past a queue of rate-limited requests", async () => {
    const client = throughProxy({ rateLimit: { qps: 1, burst: 1 } });
    const lease = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/none`;
    const t0 = performance.now();
    // Five reads take the bucket's next five seconds; the Lease read is asked for after them.
    const reads = Array.from({ length: 5 }, () => client.get(CONFIGMAP, "d", ns));
    const leaseRead = client.request({ method: "GET", path: lease }).catch(() => undefined);
    await Promise.all([...reads, leaseRead]);
    const leaseAt = proxy.attempts(lease)[0]!;
    const readsAt = proxy.attempts(path("d")).filter((a) => a >= t0);
    // Queued behind them it would come sixth; at most the read that had the one token goes first.
    assert.ok(readsAt.filter((a) => a < leaseAt).length <= 1, "the Lease read did not wait for tokens");
  });

  it("refuses rate-limit settings that cannot work, naming the field", () => {
    assert.throws(() => throughProxy({ rateLimit: { qps: 0, burst: 1 } }), /client\.rateLimit\.qps/);
    assert.throws(() => throughProxy({ maxRetries: -1 }), /client\.maxRetries/);
  });
});
