/**
 * What an OpenBaoCluster looks like while it forms, seen from outside the operator: its status, its
 * voter pods, and the Raft configuration OpenBao itself reports. `npm start` prints it as the
 * sample cluster forms; bench/openbao.ts times it. Raft peers are read with the root token from the
 * root-token Secret (operator initialization), straight from pod 0's address, so no exec is needed;
 * the host reaches pod addresses through the local node's routes.
 */

import {
  OpenBaoClusterKind,
  OpenBaoClusterPlural,
  OpenBaoGroup,
  OpenBaoVersion,
} from "../apis/openbaocluster.js";
import { POD, SECRET } from "../runtime/builtin-types.js";
import type { KubeClient } from "../runtime/client.js";
import type { KubeObject, ResourceType } from "../runtime/types.js";
import { BaoClient, type RaftServer } from "../targets/openbao/baoclient/client.js";
import {
  API_PORT,
  type ClusterRef,
  clusterNames,
  podAddress,
  voterSetName,
} from "../targets/openbao/identity.js";

export const OPENBAO_CLUSTER: ResourceType = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoClusterKind,
  plural: OpenBaoClusterPlural,
  namespaced: true,
};

export interface Formation {
  exists: boolean;
  phase?: string;
  initialized: boolean;
  desired: number;
  readyReplicas: number;
  activeLeader?: string;
  /** Voter pods by name: "Running, ready" and the like. */
  pods: { name: string; state: string }[];
  /** OpenBao's own Raft configuration; undefined while it cannot be read (no token or pod 0 yet). */
  peers?: RaftServer[];
}

interface PodLike extends KubeObject {
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
  };
}

/** Reads one snapshot; Raft peers only when `withPeers` and once the cluster says it is initialized. */
export async function observeFormation(
  client: KubeClient,
  ref: ClusterRef,
  opts: { withPeers: boolean; clusterDomain?: string },
): Promise<Formation> {
  const cluster = await client.getOrUndefined(OPENBAO_CLUSTER, ref.name, ref.namespace);
  if (!cluster) return { exists: false, initialized: false, desired: 0, readyReplicas: 0, pods: [] };
  const spec = (cluster["spec"] ?? {}) as { replicas?: number };
  const status = (cluster["status"] ?? {}) as {
    phase?: string;
    initialized?: boolean;
    readyReplicas?: number;
    activeLeader?: string;
    blueGreen?: { blueRevision?: string };
  };
  // After a blue-green upgrade the voters are the serving revision's `<name>-<revision>-N`.
  const revision = status.blueGreen?.blueRevision;
  const voters = voterSetName(revision ? { ...ref, revision } : ref);
  const pods = ((await client.list(POD, { namespace: ref.namespace })).items as PodLike[]).filter((p) =>
    new RegExp(`^${voters}-\\d+$`).test(p.metadata.name ?? ""),
  );
  pods.sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
  const f: Formation = {
    exists: true,
    phase: status.phase,
    initialized: status.initialized === true,
    desired: spec.replicas ?? 1,
    readyReplicas: status.readyReplicas ?? 0,
    activeLeader: status.activeLeader,
    pods: pods.map((p) => ({ name: p.metadata.name ?? "", state: podState(p) })),
  };
  const pod0 = pods.find((p) => p.metadata.name === `${voters}-0`);
  if (opts.withPeers && f.initialized && pod0?.status?.podIP)
    f.peers = await raftPeers(
      client,
      revision ? { ...ref, revision } : ref,
      pod0.status.podIP,
      opts.clusterDomain,
    ).catch(() => undefined);
  return f;
}

async function raftPeers(
  client: KubeClient,
  ref: ClusterRef,
  podIP: string,
  clusterDomain = "cluster.local",
): Promise<RaftServer[] | undefined> {
  const names = clusterNames(ref);
  const token = await secretKey(client, ref.namespace, names.rootTokenSecret, "token");
  if (!token) return undefined;
  const caPem =
    (await secretKey(client, ref.namespace, names.serverSecret, "ca.crt")) ??
    (await secretKey(client, ref.namespace, names.caSecret, "ca.crt")) ??
    (await secretKey(client, ref.namespace, names.caSecret, "tls.crt"));
  const bao = new BaoClient({
    address: `${caPem ? "https" : "http"}://${podIP}:${API_PORT}`,
    caPem,
    // The certificate names pods by DNS; the address is the pod's IP, reachable from the host.
    serverName: podAddress(ref, 0, undefined, clusterDomain),
    timeoutMs: 5000,
  });
  return bao.raftServers(token);
}

async function secretKey(
  client: KubeClient,
  namespace: string,
  name: string,
  key: string,
): Promise<string | undefined> {
  const s = await client.getOrUndefined(SECRET, name, namespace);
  const b64 = (s?.["data"] as Record<string, string> | undefined)?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, "base64").toString("utf8");
}

function podState(p: PodLike): string {
  const ready = p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
  return `${p.status?.phase ?? "Pending"}${ready ? ", ready" : ""}`;
}

/** Raft voters OpenBao lists, or undefined when it has not been asked. */
export const votersOf = (f: Formation): number | undefined => f.peers?.filter((p) => p.voter).length;

/** True once the cluster is initialized with every voter ready and listed by OpenBao as a Raft voter. */
export function formed(f: Formation): boolean {
  return f.initialized && f.readyReplicas >= f.desired && votersOf(f) === f.desired;
}

/** One line for people: what the cluster is doing now. */
export function describeFormation(ref: ClusterRef, f: Formation): string {
  const id = `openbao ${ref.namespace}/${ref.name}`;
  if (!f.exists) return `${id}: not created yet`;
  const parts = [
    f.phase ?? "no status yet",
    `initialized ${f.initialized ? "yes" : "no"}`,
    `${f.readyReplicas}/${f.desired} voter pods ready`,
  ];
  if (f.peers) {
    // In name order: OpenBao lists peers in the order they joined, which differs from run to run.
    const voters = f.peers
      .filter((p) => p.voter)
      .map((p) => p.node_id)
      .sort();
    const others = f.peers
      .filter((p) => !p.voter)
      .map((p) => p.node_id)
      .sort();
    parts.push(
      `Raft voters ${voters.length}${voters.length ? ` (${voters.join(", ")})` : ""}` +
        (others.length ? `, non-voters ${others.join(", ")}` : ""),
    );
  }
  parts.push(`active leader ${f.activeLeader || "-"}`);
  const pods = f.pods.map((p) => `${p.name} ${p.state}`).join("; ");
  return `${id}: ${parts.join(", ")}${pods ? ` | pods: ${pods}` : ""}${formed(f) ? " | formed" : ""}`;
}
