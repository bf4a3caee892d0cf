/**
 * The Kubernetes API client, one class on purpose: every verb (get, list, apply, patch, delete,
 * watch, metadata lists) goes through the same request path (the token bucket, Retry-After and
 * 429/5xx retries, the HTTP/2-or-HTTP/1 transport and its lanes, dry-run counting, withholding of
 * secret values from errors), and the path's state is the class's. What stands apart already
 * lives apart: credentials/, the transports, the REST mapper, rate limiting, request building.
 */
import { readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import type { RequestSpec } from "./api-request.js";
import { exponentialDelay, sleep } from "./backoff.js";
import { type Credentials, loadCredentials } from "./credentials/index.js";
import type { RequestAuth } from "./credentials/types.js";
import { ApiError, isResourceVersionTooLarge } from "./errors.js";
import { Http1Transport } from "./http1-transport.js";
import { Http2Transport } from "./http2-transport.js";
import { restClientDryRunRequests, restClientRequests, trackTransport } from "./metrics.js";
import { checkRateLimit, parseRetryAfter, TokenBucket, type TokenBucketOptions } from "./ratelimit.js";
import { RestMapper } from "./restmapper.js";
import {
  abortError,
  type Lane,
  type RawResponse,
  SilentConnectionError,
  type Transport,
  TransportError,
} from "./transport.js";
import { apiVersionOf, type KubeList, type KubeObject, type ResourceType } from "./types.js";
import { withholdDetails, withholdValues } from "./withhold.js";

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  /** Ask for PartialObjectMetadata: events carry only apiVersion, kind and metadata. */
  metadataOnly?: boolean;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: KubeObject;
}

export interface Watch {
  /** Resolves when the server closes the stream; rejects on a transport error or an ERROR event. */
  done: Promise<void>;
  /** Ends the watch; `silent`: because it went quiet, so its connection is checked before reuse. */
  abort(silent?: boolean): void;
  /**
   * Whether the connection carrying this watch answers a ping within `timeoutMs` (one that does not
   * is dropped, and the watch fails with it); undefined where that cannot be asked: the server has
   * not answered the watch yet, or the protocol has no ping (HTTP/1.1).
   */
  connectionAlive(timeoutMs: number): Promise<boolean | undefined>;
}

export interface ApplyOptions {
  fieldManager: string;
  force?: boolean;
  /** dryRun=All: the server runs admission and validation and answers the result, storing nothing. */
  dryRun?: boolean;
  /** Aborts the request (e.g. the reconcile's signal at shutdown). */
  signal?: AbortSignal;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
}

/** How hard the client may press the API server. */
/** A write this client made and the server accepted (dry runs are not writes). */
export interface WriteNotice {
  type: ResourceType;
  namespace?: string;
  name: string;
  /** What the server answered: the object as written (absent for a delete). */
  object?: KubeObject;
  deleted?: boolean;
}

export interface ClientOptions {
  /**
   * Client-side token bucket for every request, watches included. None by default, as in
   * controller-runtime since v0.21: the API server's priority and fairness limits, and its 429s are
   * honoured (see maxRetries). DEFAULT_CLIENT_RATE_LIMIT is the classic 20 qps, burst 30.
   */
  rateLimit?: TokenBucketOptions;
  /** Retries of a 429 (or 5xx) answered with Retry-After before the error is returned (default 10). */
  maxRetries?: number;
  /** A Retry-After longer than this is cut to it, so one answer cannot park a caller for long (default 60 s). */
  maxRetryAfterMs?: number;
  /**
   * HTTP/2 (default true): every watch and request multiplexed on one connection (leader election
   * on its own), HTTP/1.1 only when the server does not offer h2. False speaks HTTP/1.1 with one
   * connection pool per lane.
   */
  http2?: boolean;
}

const DEFAULT_MAX_RETRIES = 10;
const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

/** The Accept headers that make the API server answer only metadata (what client-go's metadata client sends). */
export const ACCEPT_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
export const ACCEPT_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
const DEFAULT_DEADLINE_MS = 90_000;
/** Tries of an idempotent request whose connection failed (a reset, a dead stream, a lost ping). */
const TRANSPORT_ATTEMPTS = 3;

/**
 * Credentials from a kubeconfig file, or when none is named from $KUBECONFIG, the in-cluster
 * ServiceAccount or ~/.kube/config (see {@link loadCredentials}).
 */
export function loadKubeConfig(kubeconfigPath?: string): Credentials {
  return loadCredentials(kubeconfigPath);
}

/**
 * A small REST client over our own credential loading (src/runtime/credentials). It speaks the API
 * conventions the runtime needs (server-side apply, status subresource, watch with bookmarks,
 * delete preconditions) and counts every request under `rest_client_requests_total`.
 */
export class KubeClient {
  private readonly server: URL;
  private readonly transport: Transport;
  private readonly discovery = new RestMapper(this);
  private readonly limiter?: TokenBucket;
  private readonly maxRetries: number;
  private readonly maxRetryAfterMs: number;
  private readonly writeListeners = new Set<(w: WriteNotice) => void>();

  constructor(
    readonly credentials: Credentials,
    private readonly userAgent = "platform-operator",
    options: ClientOptions = {},
  ) {
    if (options.rateLimit) {
      checkRateLimit(options.rateLimit, "client.rateLimit");
      this.limiter = new TokenBucket(options.rateLimit);
    }
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!(Number.isInteger(this.maxRetries) && this.maxRetries >= 0))
      throw new Error(`client.maxRetries: must be a whole number of at least 0, got ${this.maxRetries}`);
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.server = new URL(credentials.server);
    const secure = this.server.protocol === "https:";
    this.transport =
      secure && options.http2 !== false ? new Http2Transport(this.server) : new Http1Transport(secure);
    trackTransport(this.transport);
  }

  /** "h2" or "http/1.1" once the first connection is made ("unknown" before). */
  get protocol(): string {
    return this.transport.protocol;
  }

  /** The streams the API server allows on one HTTP/2 connection (undefined over HTTP/1.1). */
  streamLimit(): number | undefined {
    return this.transport.streamLimit();
  }

  /** Open connections to the API server by pool. */
  connections(): Record<string, number> {
    return this.transport.connections();
  }

  get serverUrl(): string {
    return this.server.toString();
  }

  /** Cached by the credentials; rotated token and certificate files are picked up there. */
  private authOptions(): Promise<RequestAuth> {
    return this.credentials.requestAuth();
  }

  private async open(spec: RequestSpec, lane: Lane, signal?: AbortSignal): Promise<RawResponse> {
    // Every request, watches included, waits for a token, as client-go's do; Lease requests do not:
    // controller-runtime gives leader election a client of its own so that a renewal never queues
    // behind a burst of applies and misses its deadline, and skipping the bucket does the same here.
    if (this.limiter && lane !== "lease") await this.limiter.take();
    const auth = await this.authOptions();
    const url = new URL(spec.path, this.server);
    for (const [k, v] of Object.entries(spec.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers: Record<string, string | number> = {
      Accept: spec.accept ?? "application/json",
      "User-Agent": this.userAgent,
    };
    if (body !== undefined) {
      headers["Content-Type"] = spec.contentType ?? "application/json";
      headers["Content-Length"] = Buffer.byteLength(body);
    }
    try {
      const res = await this.transport.roundTrip(
        {
          method: spec.method,
          url,
          headers,
          body,
          lane,
          idleTimeoutMs: spec.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
          signal,
        },
        auth,
      );
      restClientRequests.inc({ code: String(res.status), method: spec.method, host: url.host });
      if (url.searchParams.has("dryRun")) restClientDryRunRequests.inc({ method: spec.method });
      return res;
    } catch (e) {
      restClientRequests.inc({ code: "<error>", method: spec.method, host: url.host });
      throw e;
    }
  }

  /**
   * One API call. A 429 (priority and fairness, max-inflight) or a 5xx that carries Retry-After is
   * retried after the time the server asked for, plus a little jitter so callers told the same time
   * do not return together, at most `maxRetries` times; each retry waits for a rate-limit token too.
   * A connection that fails under an idempotent request (a read, a server-side apply) is replaced and
   * the request tried again with backoff; other writes fail, since they may have been applied.
   */
  async request<T = unknown>(spec: RequestSpec): Promise<T> {
    const text = await this.send(spec);
    return (text ? parseAnswer(text, `${spec.method} ${spec.path}`) : undefined) as T;
  }

  /** The body as text, for the few endpoints that do not answer JSON (e.g. /metrics). */
  requestText(spec: RequestSpec): Promise<string> {
    return this.send({ accept: "text/plain", ...spec });
  }

  private async send(spec: RequestSpec): Promise<string> {
    const lane: Lane = isLeasePath(spec.path) ? "lease" : "request";
    const deadlineMs = spec.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const bounded = withDeadline(spec.signal, deadlineMs, `${spec.method} ${spec.path}`);
    try {
      for (let attempt = 0, broken = 0; ; attempt++) {
        let res: RawResponse;
        let text: string;
        try {
          res = await this.open(spec, lane, bounded.signal);
          text = await readBody(res.body);
        } catch (e) {
          if (bounded.signal.aborted) throw abortError(bounded.signal);
          if (!(e instanceof TransportError) || !isIdempotent(spec) || ++broken >= TRANSPORT_ATTEMPTS)
            throw e;
          await sleep(exponentialDelay(broken, 200, 2_000), bounded.signal);
          continue;
        }
        const status = res.status;
        if (status >= 200 && status < 300) return text;
        const retryAfter =
          status === 429 || status >= 500 ? parseRetryAfter(res.headers["retry-after"]) : undefined;
        if (retryAfter === undefined || attempt >= (spec.maxRetries ?? this.maxRetries)) {
          const err = toApiError(status, text, `${spec.method} ${spec.path}`);
          if (retryAfter !== undefined)
            err.message = `${err.message} (gave up after ${attempt + 1} attempts answered with Retry-After)`;
          throw err;
        }
        const wait = Math.min(retryAfter, this.maxRetryAfterMs);
        await sleep(wait + Math.random() * Math.max(100, wait * 0.1), bounded.signal);
      }
    } finally {
      bounded.dispose();
    }
  }

  resourcePath(type: ResourceType, namespace?: string, name?: string, subresource?: string): string {
    const base = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
    let p = base;
    if (type.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
    p += `/${type.plural}`;
    if (name) p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
    return p;
  }

  get<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string): Promise<T> {
    return this.request<T>({ method: "GET", path: this.resourcePath(type, namespace, name) });
  }

  /** Returns undefined instead of throwing when the object does not exist. */
  async getOrUndefined<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    try {
      return await this.get<T>(type, name, namespace);
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const { namespace, ...query } = opts;
    return this.request<KubeList<T>>({
      method: "GET",
      path: this.resourcePath(type, namespace),
      query: { ...query },
    });
  }

  /** A list of PartialObjectMetadata: names, labels, owners, uids; no spec, data or status. */
  async listMetadata(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<KubeObject>> {
    const { namespace, ...query } = opts;
    const list = await this.request<KubeList<KubeObject>>({
      method: "GET",
      path: this.resourcePath(type, namespace),
      query: { ...query },
      accept: ACCEPT_METADATA_LIST,
    });
    // An empty PartialObjectMetadataList carries `items: null`.
    list.items ??= [];
    return list;
  }

  /**
   * Whether the API server has reached `resourceVersion` for this resource (namespace): a one-item
   * metadata list that must be at least that fresh. False when the server answers that the version
   * is too large (it is behind it: a lagging watch cache, or etcd restored from a backup); asked once,
   * without the Retry-After retries, since the caller decides what to do about a server behind it.
   */
  async reachedResourceVersion(
    type: ResourceType,
    namespace: string | undefined,
    resourceVersion: string,
  ): Promise<boolean> {
    try {
      await this.request({
        method: "GET",
        path: this.resourcePath(type, namespace),
        query: { limit: 1, resourceVersion, resourceVersionMatch: "NotOlderThan" },
        accept: ACCEPT_METADATA_LIST,
        maxRetries: 0,
      });
      return true;
    } catch (e) {
      if (isResourceVersionTooLarge(e)) return false;
      throw e;
    }
  }

  /**
   * Tells `listener` of every write this client makes, once the server accepted it: a cache can
   * then serve this process's own writes although its watch has not delivered them yet. Returns
   * the function that stops the notices.
   */
  onWrite(listener: (w: WriteNotice) => void): () => void {
    this.writeListeners.add(listener);
    return () => this.writeListeners.delete(listener);
  }

  private async wrote<T>(
    type: ResourceType,
    namespace: string | undefined,
    name: string | undefined,
    write: Promise<T>,
    deleted = false,
  ): Promise<T> {
    const answer = await write;
    const object = deleted ? undefined : (answer as KubeObject | undefined);
    const notice: WriteNotice = {
      type,
      name: name ?? object?.metadata?.name ?? "",
      ...(namespace !== undefined && type.namespaced ? { namespace } : {}),
      ...(object?.metadata ? { object } : {}),
      ...(deleted ? { deleted } : {}),
    };
    for (const l of this.writeListeners) {
      try {
        l(notice);
      } catch {
        // A listener's failure is its own; the write succeeded.
      }
    }
    return answer;
  }

  create<T extends KubeObject = KubeObject>(type: ResourceType, obj: KubeObject): Promise<T> {
    return this.wrote(
      type,
      obj.metadata.namespace,
      obj.metadata.name,
      this.request<T>({
        method: "POST",
        path: this.resourcePath(type, obj.metadata.namespace),
        body: obj,
      }),
    );
  }

  /**
   * Server-side apply: `obj` is the complete intent of this field manager. Sending the same intent
   * twice is a no-op on the server (no new resourceVersion).
   */
  apply<T extends KubeObject = KubeObject>(
    type: ResourceType,
    obj: KubeObject,
    opts: ApplyOptions,
  ): Promise<T> {
    return this.applyTo<T>(type, obj, opts);
  }

  /** Server-side apply of the status subresource only; the object must carry apiVersion, kind and name. */
  applyStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    obj: KubeObject,
    opts: ApplyOptions,
  ): Promise<T> {
    return this.applyTo<T>(type, obj, opts, "status");
  }

  private applyTo<T>(
    type: ResourceType,
    obj: KubeObject,
    opts: ApplyOptions,
    subresource?: string,
  ): Promise<T> {
    const body = { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(type), kind: obj.kind ?? type.kind };
    const sent = this.request<T>({
      method: "PATCH",
      path: this.resourcePath(type, obj.metadata.namespace, obj.metadata.name, subresource),
      query: {
        fieldManager: opts.fieldManager,
        force: opts.force ? true : undefined,
        dryRun: opts.dryRun ? "All" : undefined,
      },
      body,
      contentType: "application/apply-patch+yaml",
      signal: opts.signal,
    });
    return opts.dryRun ? sent : this.wrote(type, obj.metadata.namespace, obj.metadata.name, sent);
  }

  /** JSON merge patch, for the few writes that are not whole intents (e.g. dropping one finalizer). */
  mergePatch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    subresource?: string,
  ): Promise<T> {
    return this.wrote(
      type,
      namespace,
      name,
      this.request<T>({
        method: "PATCH",
        path: this.resourcePath(type, namespace, name, subresource),
        body: patch,
        contentType: "application/merge-patch+json",
      }),
    );
  }

  /** JSON patch; used with a `test` op to make a change conditional on what was read. */
  jsonPatch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace: string | undefined,
    ops: unknown[],
  ): Promise<T> {
    return this.wrote(
      type,
      namespace,
      name,
      this.request<T>({
        method: "PATCH",
        path: this.resourcePath(type, namespace, name),
        body: ops,
        contentType: "application/json-patch+json",
      }),
    );
  }

  replace<T extends KubeObject = KubeObject>(
    type: ResourceType,
    obj: KubeObject,
    subresource?: string,
  ): Promise<T> {
    return this.wrote(
      type,
      obj.metadata.namespace,
      obj.metadata.name,
      this.request<T>({
        method: "PUT",
        path: this.resourcePath(type, obj.metadata.namespace, obj.metadata.name, subresource),
        body: obj,
      }),
    );
  }

  delete(type: ResourceType, name: string, namespace?: string, opts: DeleteOptions = {}): Promise<unknown> {
    const body: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
    if (opts.preconditions) body["preconditions"] = opts.preconditions;
    if (opts.propagationPolicy) body["propagationPolicy"] = opts.propagationPolicy;
    return this.wrote(
      type,
      namespace,
      name,
      this.request({ method: "DELETE", path: this.resourcePath(type, namespace, name), body }),
      true,
    );
  }

  /**
   * Opens a watch. Events arrive in order through `onEvent`; the stream ends when the server's
   * timeout expires (done resolves) or on any error (done rejects). 410 Gone rejects with ApiError 410.
   */
  watch(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent) => void): Watch {
    let response: Readable | undefined;
    let alive: RawResponse["alive"];
    let aborted = false;
    // abort() must also end a watch whose request has not been answered yet.
    const cancel = new AbortController();
    const done = (async () => {
      const { namespace, metadataOnly, ...query } = opts;
      const res = await this.open(
        {
          method: "GET",
          path: this.resourcePath(type, namespace),
          query: { ...query, watch: true, allowWatchBookmarks: true },
          accept: metadataOnly ? ACCEPT_METADATA : undefined,
          // Bookmarks keep a healthy watch talking; silence past the server's own timeout means it died.
          idleTimeoutMs: ((opts.timeoutSeconds ?? 600) + 60) * 1000,
        },
        "watch",
        cancel.signal,
      );
      response = res.body;
      alive = res.alive;
      if (aborted) res.body.destroy();
      if (res.status !== 200) throw toApiError(res.status, await readBody(res.body), `WATCH ${type.plural}`);
      res.body.setEncoding("utf8");
      let buffered = "";
      for await (const chunk of res.body as AsyncIterable<string>) {
        buffered += chunk;
        let nl = buffered.indexOf("\n");
        while (nl >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line) {
            const event = parseAnswer(line, `WATCH ${type.plural}`) as WatchEvent;
            if (event.type === "ERROR") throw watchErrorOf(event.object, `WATCH ${type.plural}`);
            onEvent(event);
          }
          nl = buffered.indexOf("\n");
        }
      }
    })().catch((e) => {
      if (aborted) return;
      throw e;
    });
    return {
      done,
      abort(silent = false) {
        aborted = true;
        cancel.abort(
          silent ? new SilentConnectionError(`WATCH ${type.plural}: silent; given up`) : undefined,
        );
        response?.destroy();
      },
      async connectionAlive(timeoutMs: number) {
        return alive?.(timeoutMs);
      },
    };
  }

  /** Served group/version/kinds, cached per group-version; see {@link RestMapper}. */
  get resources(): RestMapper {
    return this.discovery;
  }

  close(): void {
    this.transport.close();
  }
}

const isLeasePath = (path: string): boolean => path.startsWith("/apis/coordination.k8s.io/");

async function readBody(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads and server-side applies: sending them twice leaves the same state as sending them once. */
function isIdempotent(spec: RequestSpec): boolean {
  if (spec.method === "GET" || spec.method === "HEAD") return true;
  return spec.method === "PATCH" && spec.contentType === "application/apply-patch+yaml";
}

/**
 * The caller's signal, made to abort after `ms` too. Built by hand rather than with AbortSignal.any,
 * which in some Node versions keeps every dependant of a long-lived signal alive.
 */
function withDeadline(
  outer: AbortSignal | undefined,
  ms: number,
  what: string,
): { signal: AbortSignal; dispose(): void } {
  const ctl = new AbortController();
  const onOuter = () => ctl.abort(outer!.reason);
  if (outer?.aborted) ctl.abort(outer.reason);
  else outer?.addEventListener("abort", onOuter, { once: true });
  const timer = setTimeout(
    () => ctl.abort(new TransportError(`${what}: no complete answer within ${ms} ms`)),
    Math.max(1, ms),
  );
  return {
    signal: ctl.signal,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

function toApiError(status: number, text: string, what: string): ApiError {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string; details?: unknown };
    return new ApiError(
      status,
      s.reason ?? "",
      withholdValues(s.message ?? `${what}: HTTP ${status}`),
      withholdDetails(s.details),
    );
  } catch {
    return new ApiError(status, "", `${what}: HTTP ${status}`);
  }
}

/**
 * A Status that arrives as a watch ERROR event is the same failure a request would have answered,
 * and its message quotes values the same way: withheld alike, details kept for callers that branch
 * on a cause (ResourceVersionTooLarge).
 */
function watchErrorOf(object: unknown, what: string): ApiError {
  const s = (object && typeof object === "object" ? object : {}) as {
    code?: unknown;
    reason?: unknown;
    message?: unknown;
    details?: unknown;
  };
  return new ApiError(
    typeof s.code === "number" ? s.code : 500,
    typeof s.reason === "string" ? s.reason : "",
    withholdValues(typeof s.message === "string" ? s.message : `${what}: watch error`),
    withholdDetails(s.details),
  );
}

/**
 * JSON.parse's own error quotes the text around the fault (V8: `Unexpected token 's', "s.xyz"...`),
 * and an answer cut short may be a Secret or a ConfigMap: the error names where, never what.
 */
function parseAnswer(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const at = /position (\d+)/.exec(e instanceof Error ? e.message : "")?.[1];
    throw new Error(
      `${what}: the answer is not valid JSON${at === undefined ? "" : ` (at character ${at})`} (${text.length} bytes, content withheld)`,
    );
  }
}

/** Reads the in-cluster namespace, for defaults such as where the Lease lives. */
export function inClusterNamespace(): string | undefined {
  try {
    return readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "utf8").trim();
  } catch {
    return undefined;
  }
}
