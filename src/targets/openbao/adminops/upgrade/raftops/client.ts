import { BaoClient, BaoRequestError } from "../../../baoclient/client.js";

/**
 * The Raft membership calls a blue-green upgrade makes, beyond what the workload controller needs.
 * What OpenBao 2.6.2 and 2.7.2 really do (checked against both binaries, see
 * test/integration/openbao-raftops.test.ts):
 *
 * - Joining as a non-voter: `POST sys/storage/raft/join` accepts `non_voter: true` but Autopilot
 *   promotes the node anyway once it is stable. Only the server config's
 *   `storage "raft" { retry_join_as_non_voter = true }` keeps a node a non-voter, so green pods get
 *   it in their config (and join through `retry_join`), not through this client.
 * - `POST sys/storage/raft/promote {server_id}` makes a non-voter a voter (204); a server that is
 *   already a voter is refused with HTTP 500 "server is not a non-voter".
 * - `POST sys/storage/raft/demote {server_id}` records the server as a non-voter for Autopilot, which
 *   demotes it on its next pass (204, even for an unknown id). The active node is not demoted until it
 *   has stepped down: the state then lists it both in `voters` and `non_voters`.
 * - `POST sys/storage/raft/remove-peer {server_id}` answers 204 for an absent peer too.
 * - `GET sys/storage/raft/autopilot/state` (autopilotDetail here; BaoClient.autopilotState keeps only health) (forwarded by standbys) lists voters, non_voters, the
 *   leader, failure_tolerance, and per server: status, healthy, node_type, version, last_index.
 * - Leadership cannot be handed to a chosen node: `sys/step-down` lets Raft pick the most up-to-date
 *   voter, so the way to move it to green is to demote blue first and then step the leader down.
 *   A step-down sent to a standby is forwarded to the active node (204, leadership moved), so any
 *   unsealed member can carry it.
 */
export interface AutopilotServer {
  id: string;
  address: string;
  /** "leader" | "voter" | "non-voter" | "staging" ... as OpenBao reports it. */
  status: string;
  healthy: boolean;
  nodeType: string;
  version: string;
  lastIndex: number;
}

export interface AutopilotState {
  healthy: boolean;
  failureTolerance: number;
  leader: string;
  voters: string[];
  nonVoters: string[];
  servers: Record<string, AutopilotServer>;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];

/** Parses the `data` of autopilot/state; tolerant of absent fields (null lists when empty). Pure. */
export function parseAutopilotState(data: unknown): AutopilotState {
  const d = isMap(data) ? data : {};
  const servers: Record<string, AutopilotServer> = {};
  for (const [id, raw] of Object.entries(isMap(d["servers"]) ? d["servers"] : {})) {
    if (!isMap(raw)) continue;
    servers[id] = {
      id,
      address: String(raw["address"] ?? ""),
      status: String(raw["status"] ?? ""),
      healthy: raw["healthy"] === true,
      nodeType: String(raw["node_type"] ?? ""),
      version: String(raw["version"] ?? ""),
      lastIndex: typeof raw["last_index"] === "number" ? raw["last_index"] : 0,
    };
  }
  return {
    healthy: d["healthy"] === true,
    failureTolerance: typeof d["failure_tolerance"] === "number" ? d["failure_tolerance"] : 0,
    leader: typeof d["leader"] === "string" ? d["leader"] : "",
    voters: strings(d["voters"]),
    nonVoters: strings(d["non_voters"]),
    servers,
  };
}

export class RaftClient extends BaoClient {
  async autopilotDetail(token: string, signal?: AbortSignal): Promise<AutopilotState> {
    const r = await this.send("GET", "/v1/sys/storage/raft/autopilot/state", token, undefined, signal);
    this.expect(r, [200], "sys/storage/raft/autopilot/state");
    return parseAutopilotState(isMap(r.body) ? r.body["data"] : undefined);
  }

  /** Makes a non-voter a voter; a server that already votes counts as done. */
  async promote(token: string, serverId: string, signal?: AbortSignal): Promise<void> {
    const r = await this.send("POST", "/v1/sys/storage/raft/promote", token, { server_id: serverId }, signal);
    if (r.status === 500 && errorText(r.body).includes("not a non-voter")) return;
    this.expect(r, [200, 204], "sys/storage/raft/promote");
  }

  /** Asks Autopilot to keep this server a non-voter (idempotent; the leader waits for a step-down). */
  async demote(token: string, serverId: string, signal?: AbortSignal): Promise<void> {
    const r = await this.send("POST", "/v1/sys/storage/raft/demote", token, { server_id: serverId }, signal);
    this.expect(r, [200, 204], "sys/storage/raft/demote");
  }
}

function errorText(body: unknown): string {
  return isMap(body) && Array.isArray(body["errors"]) ? body["errors"].join("; ") : "";
}

export { BaoRequestError };
