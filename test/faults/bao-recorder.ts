import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { Cut } from "./lifecycle.js";
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
  /** The black hole the harness commands (bao-writes-preload asks for it every 200 ms). */
  private hold: { mode: "off" | "on" } | { mode: "armed"; from: string } = { mode: "off" };
  /** The command the preload was last answered (its poll took it). */
  lastServed = "off";
  /** Wakes whoever waits for the preload to have taken the last command. */
  private waiters: { until: (mode: string) => boolean; wake: () => void }[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  /** What the preload said or was told; wakes a down() or up() waiting for it. */
  private reached(mode: string): void {
    const woken = this.waiters.filter((w) => w.until(mode));
    this.waiters = this.waiters.filter((w) => !w.until(mode));
    for (const w of woken) w.wake();
  }

  private waitFor(until: (mode: string) => boolean, ms: number, what: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the operator's process never ${what}`)), ms);
      this.waiters.push({
        until,
        wake: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /**
   * OpenBao black-holed from the operator's process (backend "bao-net"): `down()` at once, or with
   * `from` at the first request whose path matches it (resolving once that request came, up to 15
   * minutes); `up()` once the process has seen the hole closed.
   */
  cut(): Cut {
    return {
      down: async (from) => {
        if (from) {
          this.hold = { mode: "armed", from: from.source };
          await this.waitFor((m) => m === "held", 15 * 60_000, `sent a request matching ${from}`);
          this.hold = { mode: "on" };
        } else {
          this.hold = { mode: "on" };
          await this.waitFor((m) => m === "on", 30_000, "asked for the hole");
        }
      },
      up: async () => {
        this.hold = { mode: "off" };
        await this.waitFor((m) => m === "off", 30_000, "asked for the hole to close");
      },
    };
  }

  /** With `record` false the writes are not numbered (the process loaded for the black hole only). */
  static async start(log: WriteLog, host = "127.0.0.1", record = true): Promise<BaoWriteRecorder> {
    let self: BaoWriteRecorder | undefined;
    const server = http.createServer((req, res) => {
      if (req.method === "GET" && req.url === "/hold") {
        const h = self?.hold ?? { mode: "off" };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(h));
        if (self) self.lastServed = h.mode;
        self?.reached(h.mode);
        return;
      }
      if (req.method === "POST" && req.url === "/held") {
        req.resume();
        res.writeHead(204).end();
        self?.reached("held");
        return;
      }
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
        if (record && !isLogin(path) && log.record({ backend: "bao", method, path, status })) {
          // Killed: the connection is cut; the dead process reads nothing.
          res.destroy();
          return;
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, host, r));
    self = new BaoWriteRecorder(server, `http://${host}:${(server.address() as AddressInfo).port}`);
    return self;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
