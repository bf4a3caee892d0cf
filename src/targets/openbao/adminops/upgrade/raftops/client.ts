import { BaoClient, BaoRequestError } from "../../../baoclient/client.js";

export {
  type AutopilotServer,
  type AutopilotState,
  parseAutopilotState,
} from "../../../baoclient/autopilot-state.js";

/**
 * The Raft membership call a blue-green upgrade makes beyond what the workload controller needs
 * (promote; autopilotDetail and demote live in BaoClient, the read replicas need them too).
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
 * - `GET sys/storage/raft/autopilot/state` (BaoClient.autopilotDetail; BaoClient.autopilotState keeps only health),
 *   forwarded by standbys, lists voters, non_voters, the leader, failure_tolerance, and per server: status, healthy, node_type, version, last_index.
 * - Leadership cannot be handed to a chosen node: `sys/step-down` lets Raft pick the most up-to-date
 *   voter, so the way to move it to green is to demote blue first and then step the leader down.
 *   A step-down sent to a standby is forwarded to the active node (204, leadership moved), so any
 *   unsealed member can carry it.
 */
export class RaftClient extends BaoClient {
  /** Makes a non-voter a voter; a server that already votes counts as done. */
  async promote(token: string, serverId: string, signal?: AbortSignal): Promise<void> {
    const r = await this.send("POST", "/v1/sys/storage/raft/promote", token, { server_id: serverId }, signal);
    if (r.status === 500 && errorText(r.body).includes("not a non-voter")) return;
    this.expect(r, [200, 204], "sys/storage/raft/promote");
  }
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function errorText(body: unknown): string {
  return isMap(body) && Array.isArray(body["errors"]) ? body["errors"].join("; ") : "";
}

export { BaoRequestError };
