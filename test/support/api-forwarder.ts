import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { KubeClient, loadKubeConfig } from "../../src/runtime/client.js";
import { staticCredentials } from "./credentials.js";

export interface ForwardedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  at: number;
}

export interface ForwarderOptions {
  /** Rewrites the JSON body of a list answer (a GET of a collection, not a watch). */
  list?: (body: { metadata: { resourceVersion?: string } }) => void;
  /**
   * "close": every watch is answered 200 with an empty stream at once, as a misbehaving proxy would.
   * "cut-after-event": a watch is passed through until its first event, then its connection dropped.
   */
  watch?: "pass" | "close" | "cut-after-event";
  /** Answers a watch itself when this returns a Status (fault injection); otherwise it is forwarded. */
  watchStatus?: (query: URLSearchParams) => { code: number; status: Record<string, unknown> } | undefined;
}

/**
 * A plain-HTTP front for the real API server, on loopback, so a test can see and bend what a
 * client sends and receives: it logs every request, and can rewrite list answers or close
 * watches. Everything else is passed through unchanged, with the test environment's own
 * credentials on the TLS side.
 */
export class ApiForwarder {
  readonly requests: ForwardedRequest[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(kubeconfigPath: string, opts: ForwarderOptions): Promise<ApiForwarder> {
    const kc = loadKubeConfig(kubeconfigPath);
    const tls: https.RequestOptions = await kc.requestAuth();
    const upstream = new URL(kc.server);
    const agent = new https.Agent({ keepAlive: true });
    let self: ApiForwarder | undefined;
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", upstream);
      self!.requests.push({
        method: req.method ?? "",
        path: url.pathname,
        query: url.searchParams,
        at: Date.now(),
      });
      const isWatch = url.searchParams.get("watch") === "true";
      if (isWatch && opts.watch === "close") {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end();
        return;
      }
      const injected = isWatch ? opts.watchStatus?.(url.searchParams) : undefined;
      if (injected) {
        res.writeHead(injected.code, { "Content-Type": "application/json" });
        res.end(JSON.stringify(injected.status));
        return;
      }
      const out = https.request(
        url,
        {
          method: req.method,
          headers: { ...req.headers, ...(tls.headers as Record<string, string>), host: upstream.host },
          agent,
          ca: tls.ca,
          cert: tls.cert,
          key: tls.key,
        },
        (up) => {
          const rewrite = opts.list && req.method === "GET" && !isWatch && up.statusCode === 200;
          if (isWatch && opts.watch === "cut-after-event") {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.on("data", (c: Buffer) => {
              res.write(c);
              if (c.includes(10)) res.destroy();
            });
            return;
          }
          if (!rewrite) {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
            return;
          }
          const chunks: Buffer[] = [];
          up.on("data", (c: Buffer) => chunks.push(c));
          up.on("end", () => {
            const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            if (body && typeof body === "object" && "items" in body) opts.list!(body);
            const text = JSON.stringify(body);
            res.writeHead(200, {
              "Content-Type": "application/json",
              "Content-Length": Buffer.byteLength(text),
            });
            res.end(text);
          });
        },
      );
      out.on("error", () => res.destroy());
      res.on("close", () => out.destroy());
      req.pipe(out);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    self = new ApiForwarder(server, (server.address() as AddressInfo).port);
    server.on("close", () => agent.destroy());
    return self;
  }

  /** A client that talks to the API server through this forwarder. */
  client(): KubeClient {
    const kc = staticCredentials({ server: `http://127.0.0.1:${this.port}` });
    return new KubeClient(kc, "forwarded-test-client");
  }

  watches(): ForwardedRequest[] {
    return this.requests.filter((r) => r.query.get("watch") === "true");
  }

  lists(): ForwardedRequest[] {
    return this.requests.filter((r) => r.method === "GET" && r.query.get("watch") !== "true");
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
