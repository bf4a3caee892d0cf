import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { loadKubeConfig } from "../../src/runtime/client.js";

/** One mutating request the operator made, numbered across every proxy sharing a WriteLog. */
export interface RecordedWrite {
  seq: number;
  /** Which backend: "kube" (the API server) or "bao" (OpenBao). */
  backend: string;
  method: string;
  path: string;
  status: number;
}

/**
 * The operator's mutating requests in the order their answers came back, over every backend it
 * talks to. `crashAt` arms a kill: when the answer to write number `crashAt` arrives, `onCrash` runs
 * before the operator sees that answer, so the write is stored but the operator never learns it.
 */
export class WriteLog {
  readonly writes: RecordedWrite[] = [];
  private crashAt?: number | ((w: RecordedWrite) => boolean);
  private onCrash?: (w: RecordedWrite) => void;

  /** Kills at write number `crashAt`, or at the first write `crashAt` matches (a named point). */
  arm(crashAt: number | ((w: RecordedWrite) => boolean), onCrash: (w: RecordedWrite) => void): void {
    this.crashAt = crashAt;
    this.onCrash = onCrash;
  }

  disarm(): void {
    this.crashAt = undefined;
    this.onCrash = undefined;
  }

  get count(): number {
    return this.writes.length;
  }

  /** Records a write; true when the operator was just killed for it (its answer is then dropped). */
  record(w: Omit<RecordedWrite, "seq">): boolean {
    const seq = this.writes.length + 1;
    const written = { seq, ...w };
    this.writes.push(written);
    const at = this.crashAt;
    if (at === undefined || !this.onCrash) return false;
    if (typeof at === "number" ? at !== seq : !at(written)) return false;
    const crash = this.onCrash;
    this.disarm();
    crash(written);
    return true;
  }
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export interface WriteProxyOptions {
  backend: string;
  log: WriteLog;
  /**
   * The address it listens on: loopback by default; the host's end of the node's veth for an
   * operator running inside the node's network namespace, where the host's loopback is not.
   */
  host?: string;
  /** Writes that are not counted (an OpenBao login changes no data). */
  ignore?: (method: string, path: string) => boolean;
}

/**
 * A plain-HTTP front (on loopback unless told) for one backend of the operator, recording its writes into a
 * shared WriteLog and cutting the operator off at the armed write. For the API server it signs the
 * requests with the test environment's own credentials, so the operator acts as that user.
 */
export class WriteProxy {
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly agent: http.Agent,
    private readonly host: string,
  ) {}

  static async kube(kubeconfigPath: string, opts: WriteProxyOptions): Promise<WriteProxy> {
    const kc = loadKubeConfig(kubeconfigPath);
    const upstream = new URL(kc.server);
    const agent = new https.Agent({ keepAlive: true });
    return WriteProxy.start(upstream, opts, agent, async () => {
      const auth = await kc.requestAuth();
      return {
        headers: auth.headers as Record<string, string>,
        tls: { ca: auth.ca, cert: auth.cert, key: auth.key },
      };
    });
  }

  static async plain(address: string, opts: WriteProxyOptions): Promise<WriteProxy> {
    const agent = new http.Agent({ keepAlive: true });
    return WriteProxy.start(new URL(address), opts, agent, async () => ({ headers: {}, tls: {} }));
  }

  private static async start(
    upstream: URL,
    opts: WriteProxyOptions,
    agent: http.Agent,
    auth: () => Promise<{ headers: Record<string, string>; tls: https.RequestOptions }>,
  ): Promise<WriteProxy> {
    const send = upstream.protocol === "https:" ? https.request : http.request;
    const server = http.createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", upstream);
      const method = req.method ?? "GET";
      // A dry run (the apply path's "would this change anything?") stores nothing: not a write.
      const counted =
        MUTATING.has(method) &&
        url.searchParams.get("dryRun") !== "All" &&
        !opts.ignore?.(method, url.pathname);
      let a: Awaited<ReturnType<typeof auth>>;
      try {
        a = await auth();
      } catch {
        res.destroy();
        return;
      }
      // The proxy's own identity replaces whatever the operator sent.
      const { authorization: _dropped, ...headers } = req.headers;
      const out = send(
        url,
        { method, headers: { ...headers, ...a.headers, host: upstream.host }, agent, ...a.tls },
        (up) => {
          const status = up.statusCode ?? 502;
          if (counted && opts.log.record({ backend: opts.backend, method, path: url.pathname, status })) {
            // The operator is gone; its socket is cut rather than answered.
            up.resume();
            res.destroy();
            return;
          }
          res.writeHead(status, up.headers);
          up.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      res.on("close", () => out.destroy());
      req.pipe(out);
    });
    const host = opts.host ?? "127.0.0.1";
    await new Promise<void>((r) => server.listen(0, host, r));
    return new WriteProxy(server, `http://${host}:${(server.address() as AddressInfo).port}`, agent, host);
  }

  /**
   * The backend gone as far as the operator can tell: the listener closes and every open connection
   * is cut, so a request is refused (ECONNREFUSED) until `up`, which listens on the same port again.
   */
  async down(): Promise<void> {
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    this.server.closeAllConnections();
    await closed;
  }

  async up(): Promise<void> {
    const port = Number(new URL(this.url).port);
    await new Promise<void>((r, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, this.host, () => {
        this.server.off("error", reject);
        r();
      });
    });
  }

  async close(): Promise<void> {
    if (this.server.listening) {
      this.server.closeAllConnections();
      await new Promise<void>((r) => this.server.close(() => r()));
    }
    this.agent.destroy();
  }
}
