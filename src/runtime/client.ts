import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { type Credentials, loadCredentials } from "./credentials/index.js";
import { ApiError } from "./errors.js";
import { restClientRequests } from "./metrics.js";
import { apiVersionOf, type KubeList, type KubeObject, type ResourceType } from "./types.js";

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
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: KubeObject;
}

export interface Watch {
  /** Resolves when the server closes the stream; rejects on a transport error or an ERROR event. */
  done: Promise<void>;
  abort(): void;
}

export interface ApplyOptions {
  fieldManager: string;
  force?: boolean;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
}

interface RequestSpec {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** The request fails when the connection stays silent this long (default 60 s). */
  idleTimeoutMs?: number;
}

const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

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
  private readonly agent: https.Agent | http.Agent;
  private readonly discovery = new Discovery(this);

  constructor(
    readonly credentials: Credentials,
    private readonly userAgent = "platform-operator",
  ) {
    this.server = new URL(credentials.server);
    const AgentType = this.server.protocol === "https:" ? https.Agent : http.Agent;
    this.agent = new AgentType({ keepAlive: true, maxSockets: 64 });
  }

  get serverUrl(): string {
    return this.server.toString();
  }

  /** Cached by the credentials; rotated token and certificate files are picked up there. */
  private authOptions(): Promise<https.RequestOptions> {
    return this.credentials.requestAuth();
  }

  private async open(spec: RequestSpec, accept = "application/json"): Promise<http.IncomingMessage> {
    const auth = await this.authOptions();
    const url = new URL(spec.path, this.server);
    for (const [k, v] of Object.entries(spec.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers: Record<string, string | number> = {
      ...(auth.headers as Record<string, string>),
      Accept: accept,
      "User-Agent": this.userAgent,
    };
    if (body !== undefined) {
      headers["Content-Type"] = spec.contentType ?? "application/json";
      headers["Content-Length"] = Buffer.byteLength(body);
    }
    const transport = url.protocol === "https:" ? https : http;
    return await new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method: spec.method,
          headers,
          agent: this.agent,
          ca: auth.ca,
          cert: auth.cert,
          key: auth.key,
          rejectUnauthorized: auth.rejectUnauthorized,
          servername: auth.servername,
        },
        (res) => {
          restClientRequests.inc({ code: String(res.statusCode), method: spec.method, host: url.host });
          resolve(res);
        },
      );
      // A dead connection must fail, not hang: an informer would otherwise stop without a word.
      const idle = spec.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
      req.setTimeout(idle, () =>
        req.destroy(new Error(`${spec.method} ${url.pathname}: no answer for ${idle} ms`)),
      );
      req.on("error", (e) => {
        restClientRequests.inc({ code: "<error>", method: spec.method, host: url.host });
        reject(e);
      });
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  async request<T = unknown>(spec: RequestSpec): Promise<T> {
    const res = await this.open(spec);
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw toApiError(status, text, `${spec.method} ${spec.path}`);
    return (text ? JSON.parse(text) : undefined) as T;
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

  create<T extends KubeObject = KubeObject>(type: ResourceType, obj: KubeObject): Promise<T> {
    return this.request<T>({
      method: "POST",
      path: this.resourcePath(type, obj.metadata.namespace),
      body: obj,
    });
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
    return this.request<T>({
      method: "PATCH",
      path: this.resourcePath(type, obj.metadata.namespace, obj.metadata.name, subresource),
      query: { fieldManager: opts.fieldManager, force: opts.force ? true : undefined },
      body,
      contentType: "application/apply-patch+yaml",
    });
  }

  /** JSON merge patch, for the few writes that are not whole intents (e.g. dropping one finalizer). */
  mergePatch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    subresource?: string,
  ): Promise<T> {
    return this.request<T>({
      method: "PATCH",
      path: this.resourcePath(type, namespace, name, subresource),
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  /** JSON patch; used with a `test` op to make a change conditional on what was read. */
  jsonPatch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace: string | undefined,
    ops: unknown[],
  ): Promise<T> {
    return this.request<T>({
      method: "PATCH",
      path: this.resourcePath(type, namespace, name),
      body: ops,
      contentType: "application/json-patch+json",
    });
  }

  replace<T extends KubeObject = KubeObject>(
    type: ResourceType,
    obj: KubeObject,
    subresource?: string,
  ): Promise<T> {
    return this.request<T>({
      method: "PUT",
      path: this.resourcePath(type, obj.metadata.namespace, obj.metadata.name, subresource),
      body: obj,
    });
  }

  delete(type: ResourceType, name: string, namespace?: string, opts: DeleteOptions = {}): Promise<unknown> {
    const body: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
    if (opts.preconditions) body["preconditions"] = opts.preconditions;
    if (opts.propagationPolicy) body["propagationPolicy"] = opts.propagationPolicy;
    return this.request({ method: "DELETE", path: this.resourcePath(type, namespace, name), body });
  }

  /**
   * Opens a watch. Events arrive in order through `onEvent`; the stream ends when the server's
   * timeout expires (done resolves) or on any error (done rejects). 410 Gone rejects with ApiError 410.
   */
  watch(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent) => void): Watch {
    let response: http.IncomingMessage | undefined;
    let aborted = false;
    const done = (async () => {
      const { namespace, ...query } = opts;
      const res = await this.open({
        method: "GET",
        path: this.resourcePath(type, namespace),
        query: { ...query, watch: true, allowWatchBookmarks: true },
        // Bookmarks keep a healthy watch talking; silence past the server's own timeout means it died.
        idleTimeoutMs: ((opts.timeoutSeconds ?? 600) + 60) * 1000,
      });
      response = res;
      if (aborted) res.destroy();
      const status = res.statusCode ?? 0;
      if (status !== 200) throw toApiError(status, await readBody(res), `WATCH ${type.plural}`);
      res.setEncoding("utf8");
      let buffered = "";
      for await (const chunk of res as AsyncIterable<string>) {
        buffered += chunk;
        let nl = buffered.indexOf("\n");
        while (nl >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line) {
            const event = JSON.parse(line) as WatchEvent;
            if (event.type === "ERROR") {
              const s = event.object as unknown as { code?: number; reason?: string; message?: string };
              throw new ApiError(s.code ?? 500, s.reason ?? "", s.message ?? "watch error");
            }
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
      abort() {
        aborted = true;
        response?.destroy();
      },
    };
  }

  /** Served group/version/kinds, cached; see {@link Discovery}. */
  get resources(): Discovery {
    return this.discovery;
  }

  close(): void {
    this.agent.destroy();
  }
}

interface ApiResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; verbs: string[] }[];
}

/**
 * What the API server serves. Looked up once and kept; `refresh()` drops the cache, which callers
 * do when a kind they need is missing (a CRD may have been installed since).
 */
export class Discovery {
  private cache?: Promise<Map<string, ResourceType>>;

  constructor(private readonly client: KubeClient) {}

  refresh(): void {
    this.cache = undefined;
  }

  private load(): Promise<Map<string, ResourceType>> {
    this.cache ??= this.fetchAll().catch((e) => {
      this.cache = undefined;
      throw e;
    });
    return this.cache;
  }

  private async fetchAll(): Promise<Map<string, ResourceType>> {
    const byGvk = new Map<string, ResourceType>();
    const core = await this.client.request<ApiResourceList>({ method: "GET", path: "/api/v1" });
    const groups = await this.client.request<{
      groups: { name: string; versions: { groupVersion: string }[] }[];
    }>({
      method: "GET",
      path: "/apis",
    });
    const lists = [core];
    const gvs = groups.groups.flatMap((g) => g.versions.map((v) => v.groupVersion));
    const fetched = await Promise.all(
      gvs.map((gv) =>
        this.client.request<ApiResourceList>({ method: "GET", path: `/apis/${gv}` }).catch(() => undefined),
      ),
    );
    for (const l of fetched) if (l) lists.push(l);
    for (const list of lists) {
      const [group, version] = list.groupVersion.includes("/")
        ? (list.groupVersion.split("/") as [string, string])
        : ["", list.groupVersion];
      for (const r of list.resources) {
        if (r.name.includes("/")) continue;
        byGvk.set(`${list.groupVersion}/${r.kind}`, {
          group,
          version,
          kind: r.kind,
          plural: r.name,
          namespaced: r.namespaced,
        });
      }
    }
    return byGvk;
  }

  /** The resource for apiVersion+kind, or undefined when the server does not serve it. */
  async find(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
    return (await this.load()).get(`${apiVersion}/${kind}`);
  }

  async all(): Promise<ResourceType[]> {
    return [...(await this.load()).values()];
  }
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function toApiError(status: number, text: string, what: string): ApiError {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string; details?: unknown };
    return new ApiError(status, s.reason ?? "", s.message ?? `${what}: HTTP ${status}`, s.details);
  } catch {
    return new ApiError(status, "", `${what}: HTTP ${status}`);
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
