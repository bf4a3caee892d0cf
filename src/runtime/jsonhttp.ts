import { createHash } from "node:crypto";
import type * as Http from "node:http";
import https from "node:https";
import tls from "node:tls";
import { http } from "./node-http.js";
import { abortError } from "./transport.js";

/**
 * JSON over HTTP(S) to one server, for the clients of services that are not the API server (the
 * API server has its own transport, with lanes and credentials). It knows no service: callers add
 * their own headers and give the status codes their meaning.
 *
 * Its errors name the host, the method and the path without its query, and the network's own code;
 * never a header, the request body or the response body, which may hold tokens and secret values.
 */
export interface JsonHttpOptions {
  /** http(s)://host:port; only the scheme, host and port are used, request paths are absolute. */
  address: string;
  /** PEM bundle the server certificate must chain to; the system store when absent. */
  caPem?: string;
  /** A client certificate and its key (PEM) for a server that asks for one. */
  clientCert?: { certPem: string; keyPem: string };
  /** The name the server certificate must carry (and the TLS SNI); the address's host when absent. */
  serverName?: string;
  /** An exchange fails once its connection stays silent this long (default 15 s). */
  idleTimeoutMs?: number;
  /**
   * A fresh connection fails once it is not set up (name looked up, TCP and TLS done) within this
   * long (default 10 s, or the idle timeout when shorter). Nothing of the request has left then, so
   * an exchange allowed minutes for its answer (OpenBao's sys/init) still fails fast, and safely,
   * when the server cannot be reached at all: a network that drops packets says nothing else.
   */
  connectTimeoutMs?: number;
  /** An exchange fails once it has taken this long in all, however busy; no limit when absent. */
  deadlineMs?: number;
  /** Keeps connections open and shares at most this many; a fresh connection per exchange when absent. */
  maxSockets?: number;
  /** The largest answer read (default 32 MiB): a bigger one fails rather than fill the memory. */
  maxBodyBytes?: number;
}

export interface JsonRequest {
  method: string;
  /** An absolute path, with a query string if any. */
  path: string;
  headers?: Record<string, string>;
  /** Sent as JSON unless undefined. */
  body?: unknown;
  signal?: AbortSignal;
  /** This exchange's own idle timeout and total limit, in place of the client's. */
  idleTimeoutMs?: number;
  deadlineMs?: number;
}

export interface JsonResponse {
  status: number;
  /** The parsed answer; undefined when it is empty or not JSON (the caller judges by the status). */
  body: unknown;
  headers: Http.IncomingHttpHeaders;
}

/** Why an exchange got no answer: the connection failed, a timeout ended it, or the answer was too big. */
export type JsonHttpFailure = "connection" | "timeout" | "too-large";

export class JsonHttpError extends Error {
  constructor(
    readonly failure: JsonHttpFailure,
    /** The network's error code (ECONNREFUSED, a TLS verification code, ...), when it gave one. */
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = "JsonHttpError";
  }
}

const DEFAULT_IDLE_MS = 15_000;
const DEFAULT_CONNECT_MS = 10_000;
const DEFAULT_MAX_BODY = 32 * 1024 * 1024;

export class JsonHttp {
  private readonly base: URL;
  private readonly secure: boolean;
  private readonly tls: { ca?: string; cert?: string; key?: string; servername?: string };
  private readonly agent: Http.Agent | false;

  constructor(private readonly opts: JsonHttpOptions) {
    this.base = new URL(opts.address);
    this.secure = this.base.protocol === "https:";
    this.tls = this.secure
      ? {
          ...(opts.caPem ? { ca: opts.caPem } : {}),
          ...(opts.clientCert ? { cert: opts.clientCert.certPem, key: opts.clientCert.keyPem } : {}),
          ...(opts.serverName ? { servername: opts.serverName } : {}),
        }
      : {};
    if (opts.maxSockets === undefined) this.agent = false;
    else
      this.agent = this.secure
        ? new https.Agent({ keepAlive: true, maxSockets: opts.maxSockets, ...this.tls })
        : new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets });
  }

  /** host:port, as errors name it. */
  get host(): string {
    return this.base.host;
  }

  /**
   * One exchange. Resolves with any status the server answers; rejects with a JsonHttpError when
   * there is no answer, or with the abort reason when `signal` ends it.
   */
  request(r: JsonRequest): Promise<JsonResponse> {
    // Resolved the way a browser would (dot segments removed, unsafe characters escaped); the host
    // stays the client's own even for a path that names another ("//host:port/…").
    const url = new URL(r.path, this.base);
    const what = `${this.host}: ${r.method} ${url.pathname}`;
    const payload = r.body === undefined ? undefined : Buffer.from(JSON.stringify(r.body));
    const headers: Record<string, string> = { accept: "application/json", ...r.headers };
    if (payload) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(payload.length);
    }
    const idleMs = r.idleTimeoutMs ?? this.opts.idleTimeoutMs ?? DEFAULT_IDLE_MS;
    const deadlineMs = r.deadlineMs ?? this.opts.deadlineMs;
    const maxBody = this.opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
    // secureContext is tls.connect's, which https.request hands its options to.
    const options: https.RequestOptions & { secureContext?: tls.SecureContext } = {
      method: r.method,
      host: this.base.hostname,
      port: this.base.port || (this.secure ? 443 : 80),
      path: url.pathname + url.search,
      headers,
      agent: this.agent,
      // Given here as well, the idle limit covers the connect of a fresh connection too.
      timeout: idleMs,
      signal: r.signal,
      ...(this.tls.servername ? { servername: this.tls.servername } : {}),
    };
    return new Promise<JsonResponse>((resolve, reject) => {
      // Inside the promise: bad PEM text rejects the exchange, as node's own context building did.
      if (this.secure) options.secureContext = sharedSecureContext(this.tls);
      let settled = false;
      let deadline: NodeJS.Timeout | undefined;
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        finish();
      };
      const fail = (e: Error) =>
        settle(() => {
          if (r.signal?.aborted) reject(abortError(r.signal));
          else {
            const code = (e as NodeJS.ErrnoException).code;
            reject(new JsonHttpError("connection", code, `${what}: ${code ?? e.message}`));
          }
        });
      // Settles first: once destroyed, node reports only a bare reset, or even the answer's end.
      const end = (failure: JsonHttpFailure, detail: string) => {
        const e = new JsonHttpError(failure, undefined, `${what}: ${detail}`);
        settle(() => reject(e));
        req.destroy(e);
      };

      const req = (this.secure ? https : http).request(options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > maxBody) end("too-large", `answered more than ${maxBody} bytes`);
          else chunks.push(c);
        });
        res.on("error", fail);
        res.on("close", () => {
          if (!res.complete) fail(Object.assign(new Error("the answer was cut off"), { code: "ECONNRESET" }));
        });
        res.on("end", () =>
          settle(() =>
            resolve({
              status: res.statusCode ?? 0,
              body: parseJson(Buffer.concat(chunks)),
              headers: res.headers,
            }),
          ),
        );
      });
      req.setTimeout(idleMs);
      req.on("timeout", () => end("timeout", `timed out (silent for ${idleMs} ms)`));
      const connectMs = Math.min(idleMs, this.opts.connectTimeoutMs ?? DEFAULT_CONNECT_MS);
      req.once("socket", (socket) => {
        // A kept connection is set up already; a fresh one is still connecting when handed over.
        if (!socket.connecting) return;
        const timer = setTimeout(() => {
          const e = new JsonHttpError(
            "connection",
            "ETIMEDOUT",
            `${what}: could not connect within ${connectMs} ms (nothing was sent)`,
          );
          settle(() => reject(e));
          req.destroy(e);
        }, connectMs);
        const clear = () => clearTimeout(timer);
        socket.once(this.secure ? "secureConnect" : "connect", clear);
        socket.once("close", clear);
      });
      if (deadlineMs !== undefined)
        deadline = setTimeout(
          () => end("timeout", `timed out (no answer within ${deadlineMs} ms)`),
          deadlineMs,
        );
      req.on("error", fail);
      req.end(payload);
    });
  }

  /** Closes the kept connections (a client without maxSockets keeps none). */
  close(): void {
    if (this.agent) this.agent.destroy();
  }
}

/** How many distinct TLS contexts are kept; the oldest goes first (a CA or client certificate rotated). */
const CONTEXTS_KEPT = 32;
const contexts = new Map<string, tls.SecureContext>();

/**
 * One TLS context per distinct CA bundle and client certificate, shared by every client and every
 * exchange that use them. Node would otherwise build one for each connection, parsing the PEM text
 * again each time (a client without maxSockets opens a connection per exchange, and most clients
 * live for one pass), and the native memory of each stays until a collection frees it: during the
 * formation of several clusters that was CPU and resident memory for nothing. Keyed by a digest, so
 * the map holds no key material of its own.
 */
export function sharedSecureContext(material: {
  ca?: string;
  cert?: string;
  key?: string;
}): tls.SecureContext {
  const digest = createHash("sha256");
  for (const part of [material.ca, material.cert, material.key])
    digest.update(`${part?.length ?? -1}:${part ?? ""}`);
  const key = digest.digest("base64");
  const kept = contexts.get(key);
  if (kept) {
    // Most recently used last, so the oldest is the one dropped.
    contexts.delete(key);
    contexts.set(key, kept);
    return kept;
  }
  const made = tls.createSecureContext({
    ...(material.ca ? { ca: material.ca } : {}),
    ...(material.cert ? { cert: material.cert } : {}),
    ...(material.key ? { key: material.key } : {}),
  });
  contexts.set(key, made);
  if (contexts.size > CONTEXTS_KEPT) contexts.delete(contexts.keys().next().value!);
  return made;
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    return undefined;
  }
}
