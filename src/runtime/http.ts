import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { withDate } from "./date-header.js";
import { registry } from "./metrics.js";
import { http } from "./node-http.js";
import type { MetricsAuthorizer } from "./secure-metrics.js";

export interface ProbeSource {
  /**
   * Why the process is not ready (caches not synced yet), one line each; empty when ready. A target
   * whose backend is down stays ready: probes judge the process only.
   */
  readinessProblems(): string[];
  /** Why the process should be restarted (stuck informers or queues, see health.ts); empty while alive. */
  livenessProblems(): string[];
}

export interface RunningServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(body);
}

function serveMetrics(res: ServerResponse): void {
  registry
    .metrics()
    .then((body) => {
      res.writeHead(200, { "Content-Type": registry.contentType });
      res.end(body);
    })
    .catch(() => text(res, 500, "metrics unavailable"));
}

async function listen(server: Server, port: number, host: string): Promise<RunningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const pathOf = (req: IncomingMessage) => (req.url ?? "/").split("?")[0];

/**
 * /healthz (alias /livez) and /readyz; /metrics too unless `serveMetrics` is false because a
 * separate metrics server (see startMetricsServer) serves it.
 */
export async function startProbeServer(
  source: ProbeSource,
  port: number,
  host = "0.0.0.0",
  opts: { serveMetrics?: boolean } = {},
): Promise<RunningServer> {
  const handler: Handler = (req, res) => {
    const path = pathOf(req);
    if (path === "/metrics" && opts.serveMetrics !== false) return serveMetrics(res);
    if (path === "/healthz" || path === "/livez") {
      const problems = source.livenessProblems();
      return text(res, problems.length === 0 ? 200 : 500, problems.length === 0 ? "ok" : problems.join("\n"));
    }
    if (path === "/readyz") {
      const problems = source.readinessProblems();
      return text(res, problems.length === 0 ? 200 : 503, problems.length === 0 ? "ok" : problems.join("\n"));
    }
    text(res, 404, "not found");
  };
  return listen(http.createServer(withDate(handler)), port, host);
}

export interface MetricsServerOptions {
  port: number;
  host: string;
  /** When set, every request needs a bearer token allowed to `get` /metrics (TokenReview + SAR). */
  authorizer?: MetricsAuthorizer;
  /** PEM certificate and key: serve HTTPS, so bearer tokens never cross the network in clear. */
  tls?: { cert: string; key: string };
}

/** /metrics on its own address, optionally behind authentication, authorization and TLS. */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<RunningServer> {
  const handler: Handler = (req, res) => {
    if (pathOf(req) !== "/metrics") return text(res, 404, "not found");
    if (req.method !== "GET" && req.method !== "HEAD") return text(res, 405, "method not allowed");
    if (!opts.authorizer) return serveMetrics(res);
    void opts.authorizer.check(req.headers.authorization).then((d) => {
      if (d.status === 200) return serveMetrics(res);
      if (d.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
      text(res, d.status, d.reason);
    });
  };
  const server = opts.tls
    ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, withDate(handler))
    : http.createServer(withDate(handler));
  return listen(server as Server, opts.port, opts.host);
}
