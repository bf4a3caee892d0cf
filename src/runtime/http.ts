import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { registry } from "./metrics.js";

export interface ProbeSource {
  /** Ready: caches synced. A target whose backend is down stays ready; probes judge the process only. */
  ready(): boolean;
  /** Alive: the event loop answers and nothing fatal happened. */
  healthy(): boolean;
}

/** One HTTP server per process for /metrics, /healthz and /readyz. */
export async function startProbeServer(
  source: ProbeSource,
  port: number,
  host = "0.0.0.0",
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/metrics") {
      registry
        .metrics()
        .then((body) => {
          res.writeHead(200, { "Content-Type": registry.contentType });
          res.end(body);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
      return;
    }
    if (path === "/healthz" || path === "/livez") {
      const ok = source.healthy();
      res.writeHead(ok ? 200 : 500, { "Content-Type": "text/plain" });
      res.end(ok ? "ok" : "unhealthy");
      return;
    }
    if (path === "/readyz") {
      const ok = source.ready();
      res.writeHead(ok ? 200 : 503, { "Content-Type": "text/plain" });
      res.end(ok ? "ok" : "caches not synced");
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
