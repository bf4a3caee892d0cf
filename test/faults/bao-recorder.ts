import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { WriteLog } from "./write-proxy.js";

/** The module the operator is started with (`--import`) to report its OpenBao writes here. */
export const BAO_WRITES_PRELOAD = fileURLToPath(new URL("./bao-writes-preload.js", import.meta.url));

/** A login changes no data (the campaign counts no login as a write, as for its plain proxies). */
const isLogin = (path: string) => /^\/v1\/auth\/.+\/login$/.test(path);

/**
 * The harness's end of bao-writes-preload: each OpenBao write the operator's process reports is
 * numbered into the run's WriteLog (backend "bao"), in the same order as its API server writes.
 * When that write is the armed crash point the WriteLog's kill runs before this answers, so the
 * operator, which waits for this answer before it reads OpenBao's, never reads it.
 */
export class BaoWriteRecorder {
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(log: WriteLog, host = "127.0.0.1"): Promise<BaoWriteRecorder> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        let w: { method?: unknown; path?: unknown; status?: unknown };
        try {
          w = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          res.writeHead(400).end();
          return;
        }
        const method = String(w.method ?? "");
        const path = String(w.path ?? "");
        const status = Number(w.status ?? 0);
        if (!isLogin(path) && log.record({ backend: "bao", method, path, status })) {
          // Killed: the connection is cut; the dead process reads nothing.
          res.destroy();
          return;
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, host, r));
    return new BaoWriteRecorder(server, `http://${host}:${(server.address() as AddressInfo).port}`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
