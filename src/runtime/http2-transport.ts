/**
 * Over 400 lines and still one thing: the HTTP/2 connections to one API server (see the class's
 * comment). Opening them, spreading streams up to the server's limit, the pings that drop a dead
 * or suspected connection, the Lease's own pool and the fall back to HTTP/1.1 all act on the same
 * list of sessions; split, each part would need that list and its bookkeeping.
 */
import { createHash } from "node:crypto";
import http2 from "node:http2";
import tls from "node:tls";
import type { RequestAuth } from "./credentials/types.js";
import { Http1Transport } from "./http1-transport.js";
import {
  abortError,
  type Lane,
  type RawResponse,
  type RoundTrip,
  SilentConnectionError,
  type Transport,
  TransportError,
} from "./transport.js";

/** How long a TLS handshake may take before the connection attempt fails. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * Health of an idle or busy connection, as client-go checks its HTTP/2 connections (ReadIdleTimeout
 * 30 s, PingTimeout 15 s): a ping every interval, and a connection whose ping is not answered in time
 * is dropped, so every stream on it fails at once and is opened again elsewhere.
 */
const PING_INTERVAL_MS = 30_000;
const PING_TIMEOUT_MS = 15_000;
/**
 * A connection under suspicion (a stream on it went silent and was given up) takes no new streams
 * until it answers a ping within this; a live connection answers in a round trip.
 */
const SUSPECT_PING_TIMEOUT_MS = 3_000;
/** Streams the server allows before its SETTINGS frame says otherwise (HTTP/2's customary 100). */
const DEFAULT_MAX_STREAMS = 100;
/** Memory nghttp2 may hold for one connection, in MB: hundreds of watches buffer a little each. */
const MAX_SESSION_MEMORY_MB = 64;
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/**
 * Leader election has connections of its own: a renewal must never wait behind a stream limit, and
 * a connection busy with a thousand watches is not the one whose silence should cost the Lease.
 */
type Pool = "main" | "lease";
const poolOf = (lane: Lane): Pool => (lane === "lease" ? "lease" : "main");

interface Session {
  readonly h2: http2.ClientHttp2Session;
  readonly pool: Pool;
  readonly tlsKey: string;
  /** Streams open or promised on this connection. */
  active: number;
  /** False once the server sent GOAWAY, the connection failed, or newer credentials replaced it. */
  open: boolean;
  readonly pinger: NodeJS.Timeout;
  /** A liveness check in flight, shared by every stream that asks at once (see check()). */
  checking?: Promise<boolean>;
}

/**
 * HTTP/2 to the API server, the way client-go talks to it: many streams (watches, requests) on one
 * TLS connection, another opened only when the server's stream limit is reached. The protocol is
 * chosen by ALPN on the first connection; a server that does not offer h2 (or plain HTTP) is spoken
 * to over HTTP/1.1 with one pool per lane instead.
 */
export class Http2Transport implements Transport {
  private readonly sessions: Session[] = [];
  private readonly connecting = new Map<string, Promise<Session | "http/1.1">>();
  private readonly tlsKeys = new WeakMap<RequestAuth, string>();
  private fallback?: Http1Transport;
  private closed = false;
  private negotiated: "unknown" | "h2" | "http/1.1" = "unknown";

  constructor(private readonly server: URL) {}

  get protocol(): string {
    return this.negotiated;
  }

  async roundTrip(rt: RoundTrip, auth: RequestAuth): Promise<RawResponse> {
    if (this.closed) throw new TransportError("the client is closed");
    if (this.fallback) return this.fallback.roundTrip(rt, auth);
    const session = await this.reserve(poolOf(rt.lane), auth, rt.signal);
    if (session === "http/1.1") return this.http1().roundTrip(rt, auth);
    return this.exchange(session, rt, auth);
  }

  connections(): Record<string, number> {
    if (this.fallback) return this.fallback.connections();
    const count = (pool: Pool) => this.sessions.filter((s) => s.pool === pool && !s.h2.destroyed).length;
    return { main: count("main"), lease: count("lease") };
  }

  streamLimit(): number | undefined {
    if (this.fallback) return undefined;
    const s = this.sessions.find((x) => !x.h2.destroyed);
    return s?.h2.remoteSettings?.maxConcurrentStreams;
  }

  close(): void {
    this.closed = true;
    for (const s of this.sessions.splice(0)) this.drop(s, undefined);
    this.fallback?.close();
  }

  private http1(): Http1Transport {
    this.negotiated = "http/1.1";
    this.fallback ??= new Http1Transport(true);
    return this.fallback;
  }

  /** A connection of `pool` with a free stream for these credentials, connecting one if none has. */
  private async reserve(pool: Pool, auth: RequestAuth, signal?: AbortSignal): Promise<Session | "http/1.1"> {
    const tlsKey = this.tlsKeyOf(auth);
    for (;;) {
      if (signal?.aborted) throw abortError(signal);
      const free = this.sessions.find(
        (s) => s.open && s.pool === pool && s.tlsKey === tlsKey && s.active < maxStreams(s.h2),
      );
      if (free) {
        this.retireOlder(pool, tlsKey);
        this.take(free);
        return free;
      }
      const key = `${pool}|${tlsKey}`;
      let pending = this.connecting.get(key);
      if (!pending) {
        pending = this.connect(pool, tlsKey, auth).finally(() => this.connecting.delete(key));
        this.connecting.set(key, pending);
      }
      const made = await pending;
      if (made === "http/1.1") return made;
      // Loop: the new connection may already be full of the streams others were waiting to open.
    }
  }

  /** Connections made with credentials that have since rotated take no new streams and close once idle. */
  private retireOlder(pool: Pool, tlsKey: string): void {
    for (const s of this.sessions) {
      if (s.pool !== pool || s.tlsKey === tlsKey || !s.open) continue;
      s.open = false;
      s.h2.close();
    }
  }

  private take(s: Session): void {
    if (s.active++ === 0) s.h2.ref();
  }

  private release(s: Session): void {
    if (--s.active > 0) return;
    s.h2.unref();
    // An idle connection beside another that can take its streams is closed: a burst or a
    // suspicion that opened a second one must not leave connections behind.
    const spare = this.sessions.some((o) => o !== s && o.open && o.pool === s.pool && o.tlsKey === s.tlsKey);
    if (spare) {
      s.open = false;
      s.h2.close();
    }
  }

  /**
   * A stream on `s` went silent and was given up: no new stream goes to this connection until it
   * answers a ping, and it is dropped if it does not, so what comes next is sent on a live one.
   */
  private distrust(s: Session): void {
    if (!s.open || s.h2.destroyed) return;
    s.open = false;
    this.ping(s, SUSPECT_PING_TIMEOUT_MS, () => {
      if (!s.h2.destroyed && !s.h2.closed) s.open = true;
    });
  }

  /**
   * Whether `s` answers a ping within `timeoutMs`; a connection that does not is dropped. Checks
   * asked while one is in flight share it, so a hundred quiet watches on one connection send one ping.
   */
  private check(s: Session, timeoutMs: number): Promise<boolean> {
    if (s.h2.destroyed || s.h2.closed) return Promise.resolve(false);
    if (s.checking) return s.checking;
    const checking = new Promise<boolean>((resolve) => {
      let settled = false;
      const settle = (answered: boolean, failure?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (failure) this.drop(s, new TransportError(failure));
        resolve(answered);
      };
      const timer = setTimeout(
        () => settle(false, `no answer to an HTTP/2 ping within ${timeoutMs} ms`),
        timeoutMs,
      ).unref();
      const sent = s.h2.ping((err) =>
        err ? settle(false, `HTTP/2 ping failed: ${err.message}`) : settle(true),
      );
      if (!sent) {
        // Too many pings outstanding: each has a deadline that drops the connection, so whether it
        // still stands once this check's time is up is the answer.
        clearTimeout(timer);
        setTimeout(() => settle(!s.h2.destroyed), timeoutMs).unref();
      }
    }).finally(() => {
      if (s.checking === checking) s.checking = undefined;
    });
    s.checking = checking;
    return checking;
  }

  private async connect(pool: Pool, tlsKey: string, auth: RequestAuth): Promise<Session | "http/1.1"> {
    const socket = await this.handshake(auth);
    if (socket.alpnProtocol !== "h2") {
      socket.destroy();
      return "http/1.1";
    }
    this.negotiated = "h2";
    const h2 = http2.connect(this.server.origin, {
      createConnection: () => socket,
      maxSessionMemory: MAX_SESSION_MEMORY_MB,
      peerMaxConcurrentStreams: DEFAULT_MAX_STREAMS,
    });
    const session: Session = {
      h2,
      pool,
      tlsKey,
      active: 0,
      open: true,
      pinger: setInterval(() => this.ping(session, PING_TIMEOUT_MS), PING_INTERVAL_MS).unref(),
    };
    h2.unref();
    h2.on("goaway", () => {
      session.open = false;
    });
    h2.on("error", () => this.drop(session, undefined));
    h2.on("close", () => this.drop(session, undefined));
    // Wait for the server's SETTINGS so the stream limit is the server's, not a guess.
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, CONNECT_TIMEOUT_MS).unref();
      h2.once("remoteSettings", done);
      h2.once("close", done);
    });
    if (h2.destroyed || h2.closed)
      throw new TransportError(`${this.server.host}: the HTTP/2 connection closed at once`);
    if (this.closed) {
      this.drop(session, undefined);
      throw new TransportError("the client is closed");
    }
    this.sessions.push(session);
    return session;
  }

  private handshake(auth: RequestAuth): Promise<tls.TLSSocket> {
    const host = this.server.hostname.replace(/^\[|\]$/g, "");
    const port = Number(this.server.port || 443);
    return new Promise((resolve, reject) => {
      const socket = tls.connect({
        host,
        port,
        ca: auth.ca,
        cert: auth.cert,
        key: auth.key,
        rejectUnauthorized: auth.rejectUnauthorized,
        servername: auth.servername ?? (isIp(host) ? undefined : host),
        ALPNProtocols: ["h2", "http/1.1"],
      });
      const fail = (e: Error) => {
        socket.destroy();
        reject(new TransportError(`${this.server.host}: ${e.message}`, { cause: e }));
      };
      socket.setTimeout(CONNECT_TIMEOUT_MS, () =>
        fail(new Error(`no TLS handshake within ${CONNECT_TIMEOUT_MS} ms`)),
      );
      socket.once("error", fail);
      socket.once("secureConnect", () => {
        socket.setTimeout(0);
        socket.removeListener("error", fail);
        resolve(socket);
      });
    });
  }

  private ping(s: Session, timeoutMs: number, answered?: () => void): void {
    if (s.h2.destroyed) return;
    const timer = setTimeout(
      () => this.drop(s, new TransportError(`no answer to an HTTP/2 ping within ${timeoutMs} ms`)),
      timeoutMs,
    ).unref();
    const sent = s.h2.ping((err) => {
      clearTimeout(timer);
      if (err) this.drop(s, new TransportError(`HTTP/2 ping failed: ${err.message}`));
      else answered?.();
    });
    if (!sent) {
      // Too many pings outstanding already: one of them will decide.
      clearTimeout(timer);
    }
  }

  /** Forgets a connection and destroys it; its open streams fail with `reason`. */
  private drop(s: Session, reason: Error | undefined): void {
    s.open = false;
    clearInterval(s.pinger);
    const i = this.sessions.indexOf(s);
    if (i >= 0) this.sessions.splice(i, 1);
    if (!s.h2.destroyed) s.h2.destroy(reason);
  }

  private exchange(s: Session, rt: RoundTrip, auth: RequestAuth): Promise<RawResponse> {
    const headers: http2.OutgoingHttpHeaders = {
      ":method": rt.method,
      ":path": rt.url.pathname + rt.url.search,
    };
    for (const [name, value] of Object.entries({ ...(auth.headers ?? {}), ...rt.headers })) {
      const lower = name.toLowerCase();
      if (value !== undefined && !HOP_BY_HOP.has(lower)) headers[lower] = value as string | number;
    }
    return new Promise<RawResponse>((resolve, reject) => {
      let answered = false;
      let stream: http2.ClientHttp2Stream;
      try {
        stream = s.h2.request(headers, { endStream: rt.body === undefined });
      } catch (e) {
        this.release(s);
        s.open = false;
        reject(new TransportError(`${rt.method} ${rt.url.pathname}: ${(e as Error).message}`, { cause: e }));
        return;
      }
      // Leader election gives a request up only when it took too long: its connection is not
      // trusted again (the next attempt, or the release, must not queue behind a dead path).
      const onAbort = () => {
        if (s.pool === "lease") return this.drop(s, abortError(rt.signal!));
        if (rt.signal!.reason instanceof SilentConnectionError) this.distrust(s);
        stream.destroy(abortError(rt.signal!));
      };
      rt.signal?.addEventListener("abort", onAbort, { once: true });
      stream.setTimeout(rt.idleTimeoutMs, () => {
        stream.destroy(
          new TransportError(`${rt.method} ${rt.url.pathname}: no answer for ${rt.idleTimeoutMs} ms`),
        );
        this.distrust(s);
      });
      stream.once("response", (head) => {
        answered = true;
        resolve({
          status: Number(head[":status"] ?? 0),
          headers: head,
          body: stream,
          alive: (timeoutMs) => this.check(s, timeoutMs),
        });
      });
      stream.on("error", (e: Error) => {
        if (answered) return; // the body's reader sees it
        if (rt.signal?.aborted) return reject(abortError(rt.signal));
        reject(
          e instanceof TransportError
            ? e
            : new TransportError(`${rt.method} ${rt.url.pathname}: ${e.message}`, { cause: e }),
        );
      });
      stream.once("close", () => {
        rt.signal?.removeEventListener("abort", onAbort);
        this.release(s);
        if (!answered) {
          if (rt.signal?.aborted) return reject(abortError(rt.signal));
          reject(
            new TransportError(
              `${rt.method} ${rt.url.pathname}: stream closed before an answer (code ${stream.rstCode})`,
            ),
          );
        }
      });
      if (rt.signal?.aborted) onAbort();
      if (rt.body !== undefined) stream.end(rt.body);
    });
  }

  private tlsKeyOf(auth: RequestAuth): string {
    let key = this.tlsKeys.get(auth);
    if (key === undefined) {
      const h = createHash("sha256");
      for (const part of [auth.ca, auth.cert, auth.key, auth.servername, String(auth.rejectUnauthorized)])
        h.update(String(part ?? "")).update("\0");
      key = h.digest("hex").slice(0, 16);
      this.tlsKeys.set(auth, key);
    }
    return key;
  }
}

/** The server's stream limit, less one kept free so a burst cannot be refused between count and send. */
function maxStreams(h2: http2.ClientHttp2Session): number {
  const announced = h2.remoteSettings?.maxConcurrentStreams ?? DEFAULT_MAX_STREAMS;
  return Math.max(1, Math.min(announced, 10_000) - 1);
}

const isIp = (host: string): boolean => /^[\d.]+$/.test(host) || host.includes(":");
