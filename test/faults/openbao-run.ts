import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { SeenObjects } from "./seen.js";
import type { RecordedWrite } from "./write-proxy.js";

export type BaoStatus = NonNullable<OpenBaoCluster["status"]>;

/**
 * What the OpenBao lifecycle's phases share: the run's cluster, a way into OpenBao as its root
 * user, and the harness's own records (every write, every Job stored). Each phase lives in its own
 * file and drives the cluster through this alone.
 */
export interface BaoRun {
  client: KubeClient;
  ns: string;
  /** The OpenBaoCluster's name. */
  name: string;
  voters: number;
  /** How long one step may take on a loaded 2-core machine. */
  stepMs: number;
  say(line: string): void;
  /** The serving voter StatefulSet's name (the cluster's, or `<name>-<revision>` after blue-green). */
  serving(): string;
  /** A bao command in pod 0 with the root token (on stdin, never in argv or logs). */
  bao(command: string): Promise<string>;
  /** Waits for the status `done` accepts with the operation lock free. */
  settled(what: string, done: (s: BaoStatus) => boolean): Promise<BaoStatus>;
  /** The operator's writes so far, every backend, in order (live). */
  writes: readonly RecordedWrite[];
  /** Every Job the API server stored in the namespace since the run began, by the harness's watch. */
  jobs: SeenObjects;
}

/** The canary's value as OpenBao returns it now, or "" while it cannot be read. */
export const readCanary = async (r: BaoRun): Promise<string> =>
  (await r.bao("bao kv get -mount=canary -field=v item").catch(() => "")).trim();

/** OpenBao's own Raft configuration as pod 0 sees it: node id and voter, sorted by id. */
export async function raftPeers(r: BaoRun): Promise<{ id: string; voter: boolean }[] | undefined> {
  const out = await r.bao("bao operator raft list-peers -format=json").catch(() => "");
  if (!out) return undefined;
  try {
    const servers = JSON.parse(out).data.config.servers as { node_id: string; voter: boolean }[];
    return servers.map((s) => ({ id: s.node_id, voter: s.voter })).sort((a, b) => a.id.localeCompare(b.id));
  } catch {
    return undefined;
  }
}

/**
 * Pod names 0..n-1 of the cluster, the Raft node ids the operator gives them: of StatefulSet `set`,
 * the cluster's name until a blue-green upgrade makes `<name>-<revision>` the serving one.
 */
export const podNames = (r: BaoRun, n: number, set = r.serving()): string[] =>
  Array.from({ length: n }, (_, i) => `${set}-${i}`);
