import { Counter } from "prom-client";
import { JsonHttp, JsonHttpError } from "../../../runtime/jsonhttp.js";
import { registry } from "../../../runtime/metrics.js";
import { type AutopilotState, parseAutopilotState } from "./autopilot-state.js";

/**
 * A small client for the few OpenBao system endpoints the workload controller needs (health, init,
 * leader, Raft peers, Autopilot). It talks to one pod at a time by its stable DNS name and verifies
 * the pod's certificate against the cluster's CA. Errors carry the endpoint and status, never a
 * request or response body: init answers with the root token.
 */
export interface BaoEndpoint {
  /** https://host:8200 (or http:// when the cluster runs without TLS). */
  address: string;
  /** PEM CA bundle the server certificate must chain to. */
  caPem?: string;
  /** Name checked in the certificate; the address's host when unset. */
  serverName?: string;
  timeoutMs?: number;
}

export class BaoRequestError extends Error {
  constructor(
    readonly endpoint: string,
    readonly status: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = "BaoRequestError";
  }
}

export interface Health {
  initialized: boolean;
  sealed: boolean;
  standby: boolean;
  version?: string;
}

export interface RaftServer {
  node_id: string;
  address: string;
  leader: boolean;
  voter: boolean;
}

export interface AutopilotConfig {
  cleanup_dead_servers?: boolean;
  dead_server_last_contact_threshold?: string;
  last_contact_threshold?: string;
  max_trailing_logs?: number;
  min_quorum?: number;
  server_stabilization_time?: string;
}

export interface Raw {
  status: number;
  body: unknown;
}

const INIT_TIMEOUT_MS = 5 * 60_000;

/**
 * Every request this process sends to an OpenBao API, by method and endpoint (the path without its
 * query, a login's mount folded to `*` so the label set stays small): what a quiet pass costs
 * OpenBao, counted where the request is made.
 */
export const baoRequests = new Counter({
  name: "openbao_api_requests_total",
  help: "Requests sent to OpenBao's API (any pod), by method and endpoint; a request that got no answer counts too.",
  labelNames: ["method", "endpoint"] as const,
  registers: [registry],
});

/** The path without its query; a login under any auth mount is one label. */
export function endpointLabel(path: string): string {
  const bare = path.split("?")[0] ?? path;
  return bare.startsWith("/v1/auth/") ? "/v1/auth/*/login" : bare;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** OpenBao's `errors` list joined ("" when there is none). */
const errorStrings = (body: unknown): string =>
  isMap(body) && Array.isArray(body["errors"])
    ? body["errors"].filter((e): e is string => typeof e === "string").join("; ")
    : "";

export class BaoClient {
  private readonly http: JsonHttp;

  constructor(ep: BaoEndpoint) {
    // A connection per request: the client talks to one pod for a few calls and is dropped.
    this.http = new JsonHttp({
      address: ep.address,
      caPem: ep.caPem,
      serverName: ep.serverName,
      idleTimeoutMs: ep.timeoutMs ?? 10_000,
    });
  }

  get host(): string {
    return this.http.host;
  }

  /** Health with every state answered as 200, so the body is always read. */
  async health(signal?: AbortSignal): Promise<Health> {
    const r = await this.send(
      "GET",
      "/v1/sys/health?standbyok=true&perfstandbyok=true&sealedcode=200&uninitcode=200&drsecondarycode=200",
      undefined,
      undefined,
      signal,
    );
    this.expect(r, [200], "sys/health");
    const b = isMap(r.body) ? r.body : {};
    return {
      initialized: b["initialized"] === true,
      sealed: b["sealed"] !== false,
      standby: b["standby"] === true,
      version: typeof b["version"] === "string" ? b["version"] : undefined,
    };
  }

  async initialized(signal?: AbortSignal): Promise<boolean> {
    const r = await this.send("GET", "/v1/sys/init", undefined, undefined, signal);
    this.expect(r, [200], "sys/init");
    return isMap(r.body) && r.body["initialized"] === true;
  }

  /**
   * Initializes the cluster and returns the root token. With an auto-unseal seal OpenBao hands out
   * recovery keys instead of unseal keys; the static seal needs none.
   */
  async init(body: Record<string, unknown>, signal?: AbortSignal): Promise<{ rootToken: string }> {
    // Init bootstraps Raft and writes the barrier: slow on a busy node. A client-side timeout here
    // would lose the root token of an init that still completes, so the wait is long.
    const r = await this.send("PUT", "/v1/sys/init", undefined, body, signal, INIT_TIMEOUT_MS);
    this.expect(r, [200], "sys/init");
    const token = isMap(r.body) ? r.body["root_token"] : undefined;
    if (typeof token !== "string" || token === "")
      throw new BaoRequestError(this.host, r.status, `${this.host}: sys/init answered without a root token`);
    return { rootToken: token };
  }

  /** The active node's API address as OpenBao reports it (empty when there is none). */
  async leader(signal?: AbortSignal): Promise<{ leaderAddress: string; isSelf: boolean }> {
    const r = await this.send("GET", "/v1/sys/leader", undefined, undefined, signal);
    this.expect(r, [200], "sys/leader");
    const b = isMap(r.body) ? r.body : {};
    return {
      leaderAddress: typeof b["leader_address"] === "string" ? b["leader_address"] : "",
      isSelf: b["is_self"] === true,
    };
  }

  async raftServers(token: string, signal?: AbortSignal): Promise<RaftServer[]> {
    const r = await this.send("GET", "/v1/sys/storage/raft/configuration", token, undefined, signal);
    this.expect(r, [200], "sys/storage/raft/configuration");
    const data = isMap(r.body) && isMap(r.body["data"]) ? r.body["data"] : {};
    const config = isMap(data["config"]) ? data["config"] : {};
    const servers = Array.isArray(config["servers"]) ? config["servers"] : [];
    return servers.filter(isMap).map((s) => ({
      node_id: String(s["node_id"] ?? ""),
      address: String(s["address"] ?? ""),
      leader: s["leader"] === true,
      voter: s["voter"] === true,
    }));
  }

  async removePeer(token: string, serverId: string, signal?: AbortSignal): Promise<void> {
    const r = await this.send(
      "POST",
      "/v1/sys/storage/raft/remove-peer",
      token,
      { server_id: serverId },
      signal,
    );
    this.expect(r, [200, 204], "sys/storage/raft/remove-peer");
  }

  /**
   * Logs in with a Kubernetes ServiceAccount token at a JWT auth mount; returns the client token and
   * how long it lives. Neither the JWT nor the token ever appears in an error.
   */
  async jwtLogin(
    mount: string,
    role: string,
    jwt: string,
    signal?: AbortSignal,
  ): Promise<{ token: string; leaseSeconds: number }> {
    const path = mount.replace(/^\/+|\/+$/g, "");
    const r = await this.send("POST", `/v1/auth/${path}/login`, undefined, { role, jwt }, signal);
    this.expect(r, [200], `auth/${path}/login (role ${JSON.stringify(role)})`);
    const auth = isMap(r.body) && isMap(r.body["auth"]) ? r.body["auth"] : {};
    const token = auth["client_token"];
    if (typeof token !== "string" || token === "")
      throw new BaoRequestError(
        this.host,
        r.status,
        `${this.host}: auth/${path}/login answered without a token`,
      );
    const lease = auth["lease_duration"];
    return { token, leaseSeconds: typeof lease === "number" && lease > 0 ? lease : 0 };
  }

  /** Asks the active node to give up leadership (it must be sent to the active node). */
  async stepDown(token: string, signal?: AbortSignal): Promise<void> {
    const r = await this.send("PUT", "/v1/sys/step-down", token, undefined, signal);
    this.expect(r, [200, 204], "sys/step-down");
  }

  async autopilotConfig(token: string, signal?: AbortSignal): Promise<AutopilotConfig> {
    const r = await this.send(
      "GET",
      "/v1/sys/storage/raft/autopilot/configuration",
      token,
      undefined,
      signal,
    );
    this.expect(r, [200], "sys/storage/raft/autopilot/configuration");
    const data = isMap(r.body) && isMap(r.body["data"]) ? r.body["data"] : {};
    return data as AutopilotConfig;
  }

  async setAutopilotConfig(token: string, config: AutopilotConfig, signal?: AbortSignal): Promise<void> {
    const r = await this.send("POST", "/v1/sys/storage/raft/autopilot/configuration", token, config, signal);
    this.expect(r, [200, 204], "sys/storage/raft/autopilot/configuration");
  }

  /**
   * Autopilot's view of the Raft cluster: healthy once every server is alive, caught up and past its
   * stabilization time (upgrades wait for it after each replaced pod).
   */
  async autopilotState(
    token: string,
    signal?: AbortSignal,
  ): Promise<{ healthy: boolean; failureTolerance?: number }> {
    const r = await this.send("GET", "/v1/sys/storage/raft/autopilot/state", token, undefined, signal);
    this.expect(r, [200], "sys/storage/raft/autopilot/state");
    const data = isMap(r.body) && isMap(r.body["data"]) ? r.body["data"] : {};
    const ft = data["failure_tolerance"];
    return {
      healthy: data["healthy"] === true,
      ...(typeof ft === "number" ? { failureTolerance: ft } : {}),
    };
  }

  /** Autopilot's state with each server's suffrage and node type (what the promoter intends). */
  async autopilotDetail(token: string, signal?: AbortSignal): Promise<AutopilotState> {
    const r = await this.send("GET", "/v1/sys/storage/raft/autopilot/state", token, undefined, signal);
    this.expect(r, [200], "sys/storage/raft/autopilot/state");
    return parseAutopilotState(isMap(r.body) ? r.body["data"] : undefined);
  }

  /**
   * Puts a server on Autopilot's permanent non-voter list, so its promoter demotes it if it votes and
   * never promotes it. The list is kept in the replicated data, so a restored snapshot replaces it;
   * a server already on it is refused as "already a non-voter", which counts as done.
   */
  async demote(token: string, serverId: string, signal?: AbortSignal): Promise<void> {
    const r = await this.send("POST", "/v1/sys/storage/raft/demote", token, { server_id: serverId }, signal);
    if (r.status >= 400 && r.status < 600 && errorStrings(r.body).includes("already a non-voter")) return;
    this.expect(r, [200, 204], "sys/storage/raft/demote");
  }

  protected expect(r: Raw, ok: number[], what: string): void {
    if (ok.includes(r.status)) return;
    // OpenBao's own error strings name no secret values; the body of a request never appears here.
    const errors = errorStrings(r.body);
    throw new BaoRequestError(
      this.host,
      r.status,
      `${this.host}: ${what} answered HTTP ${r.status}${errors ? `: ${errors.slice(0, 500)}` : ""}`,
    );
  }

  protected async send(
    method: string,
    path: string,
    token: string | undefined,
    body: unknown,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<Raw> {
    baoRequests.inc({ method, endpoint: endpointLabel(path) });
    try {
      const r = await this.http.request({
        method,
        path,
        body,
        headers: token ? { "x-vault-token": token } : {},
        signal,
        idleTimeoutMs: timeoutMs,
      });
      return { status: r.status, body: r.body };
    } catch (e) {
      // The transport's message names the host, method and path only; an abort passes as it is.
      if (e instanceof JsonHttpError) throw new BaoRequestError(this.host, undefined, e.message);
      throw e;
    }
  }
}
