import type * as Http from "node:http";
import https from "node:https";
import type { RequestAuth } from "./credentials/types.js";
import { http } from "./node-http.js";
import {
  abortError,
  type Lane,
  type RawResponse,
  type RoundTrip,
  type Transport,
  TransportError,
} from "./transport.js";

/**
 * Sockets for ordinary requests. Watches and the Lease do not count against it: each has an agent
 * of its own (HTTP/1.1 carries one exchange per socket, so a shared pool is exactly what let 64
 * watches freeze a process).
 */
const REQUEST_SOCKETS = 32;
/** Renewals run one at a time; the second socket covers a renewal that overlaps a release. */
const LEASE_SOCKETS = 2;

/**
 * HTTP/1.1, for API servers reached over plain HTTP (a local proxy, tests) or that do not offer h2.
 * One agent per lane: watches get as many sockets as they need, ordinary requests a bounded pool,
 * and leader election its own small one.
 */
export class Http1Transport implements Transport {
  readonly protocol = "http/1.1";
  private readonly agents: Record<Lane, Http.Agent>;

  constructor(secure: boolean) {
    const Agent = secure ? https.Agent : http.Agent;
    this.agents = {
      request: new Agent({ keepAlive: true, maxSockets: REQUEST_SOCKETS }),
      watch: new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }),
      lease: new Agent({ keepAlive: true, maxSockets: LEASE_SOCKETS }),
    };
  }

  roundTrip(rt: RoundTrip, auth: RequestAuth): Promise<RawResponse> {
    const transport = rt.url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      if (rt.signal?.aborted) return reject(abortError(rt.signal));
      const req = transport.request(
        rt.url,
        {
          method: rt.method,
          headers: { ...(auth.headers as Record<string, string>), ...rt.headers },
          agent: this.agents[rt.lane],
          ca: auth.ca,
          cert: auth.cert,
          key: auth.key,
          rejectUnauthorized: auth.rejectUnauthorized,
          servername: auth.servername,
          signal: rt.signal,
        },
        (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }),
      );
      // A dead connection must fail, not hang: an informer would otherwise stop without a word.
      req.setTimeout(rt.idleTimeoutMs, () =>
        req.destroy(
          new TransportError(`${rt.method} ${rt.url.pathname}: no answer for ${rt.idleTimeoutMs} ms`),
        ),
      );
      req.on("error", (e) => {
        if (rt.signal?.aborted) return reject(abortError(rt.signal));
        reject(e instanceof TransportError ? e : new TransportError(e.message, { cause: e }));
      });
      if (rt.body !== undefined) req.write(rt.body);
      req.end();
    });
  }

  connections(): Record<string, number> {
    const count = (a: Http.Agent) =>
      [...Object.values(a.sockets), ...Object.values(a.freeSockets)].reduce(
        (n, list) => n + (list?.length ?? 0),
        0,
      );
    return {
      request: count(this.agents.request),
      watch: count(this.agents.watch),
      lease: count(this.agents.lease),
    };
  }

  streamLimit(): number | undefined {
    return undefined;
  }

  close(): void {
    for (const a of Object.values(this.agents)) a.destroy();
  }
}
