// Autopilot's detailed state (GET sys/storage/raft/autopilot/state), as the blue-green upgrade and
// the read replicas' suffrage check read it.

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
