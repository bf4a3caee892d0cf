/**
 * What an upgrade pass looks at, read fresh each time: the voter StatefulSet's revisions, every voter
 * pod (revision, Ready), OpenBao's health on each pod, the Raft leader and Autopilot's verdict. A
 * piece that cannot be read is left undefined: the plans treat "unknown" as "wait", never as healthy.
 */

import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { POD, STATEFULSET } from "../../../../../runtime/builtin-types.js";
import { type CachedReader, liveReader } from "../../../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { secretValue } from "../../../../../runtime/secrets.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { BaoClient, type BaoEndpoint } from "../../../baoclient/client.js";
import { refOf, servingRef } from "../../../cluster-ref.js";
import {
  API_PORT,
  Component,
  clusterNames,
  podAddress,
  podHost,
  podName,
  podSelector,
  voterOrdinal,
  voterSetName,
} from "../../../identity.js";
import { podTrouble } from "../../../workload/pod-trouble.js";
import { tlsEnabled, tlsSecretName, tlsSecretsMounted } from "../../../workload/statefulsets/build.js";

/** The label the StatefulSet controller puts on each pod: the revision it was created from. */
export const REVISION_LABEL = "controller-revision-hash";

/**
 * After a step-down, the next look for the new leader. OpenBao's leader election has no watch and
 * the old leader's pod does not change, so nothing else wakes the pass: it is polled.
 */
export const STEP_DOWN_POLL_MS = 2_000;

export interface VoterObservation {
  ordinal: number;
  name: string;
  exists: boolean;
  ready: boolean;
  /** Being deleted (the StatefulSet is replacing it). */
  terminating: boolean;
  revision?: string;
  /** Its container waits in a state waiting will not cure (workload/pod-trouble.ts's STUCK_STATES). */
  stuck?: boolean;
  /** From OpenBao's sys/health on this pod; undefined when unreachable. */
  sealed?: boolean;
  version?: string;
}

export interface ClusterObservation {
  /** spec.replicas of the live voter StatefulSet (the cluster's spec when it has none yet). */
  replicas: number;
  currentRevision?: string;
  updateRevision?: string;
  /** The partition the live StatefulSet holds now. */
  livePartition?: number;
  voters: VoterObservation[];
  /** Ordinal of the Raft leader; undefined when unknown. */
  leaderOrdinal?: number;
  /** Autopilot's healthy verdict; undefined when it could not be read. */
  raftHealthy?: boolean;
}

export interface BaoAccess {
  clusterDomain: string;
  /** Where Secrets are read (the manager's cached reader); live reads when unset. */
  reader?: Pick<CachedReader, "get">;
  /** Replaces the client (tests); the real one by default. */
  baoClient?: (ep: BaoEndpoint) => BaoClient;
  /**
   * Where a pod's endpoint is really reached (tests: a Raft OpenBao on loopback stands in for the
   * pods of an API server without a node); the pod's own address by default.
   */
  endpoint?: (ep: BaoEndpoint) => BaoEndpoint;
  timeoutMs?: number;
  /**
   * The audience of the upgrade ServiceAccount's token for spec.upgrade.jwtAuthRole's login: the
   * target's openBaoAudience (DEFAULT_OPENBAO_AUDIENCE when unset).
   */
  jwtAudience?: string;
}

/** A client for voter pod `ordinal`, trusting the cluster's CA. */
export async function voterClient(
  client: KubeClient,
  access: BaoAccess,
  cluster: OpenBaoCluster,
  ordinal: number,
): Promise<BaoClient> {
  const ref = servingRef(cluster);
  const host = podHost(ref, ordinal, Component.Server, access.clusterDomain);
  let caPem: string | undefined;
  if (tlsSecretsMounted(cluster)) {
    const names = clusterNames(ref);
    const server = tlsSecretName(cluster) ?? names.serverSecret;
    caPem =
      (await secretValue(access.reader ?? liveReader(client), ref.namespace, server, "ca.crt")) ??
      (await secretValue(
        access.reader ?? liveReader(client),
        ref.namespace,
        cluster.spec.tls?.caSecretName ?? names.caSecret,
        "ca.crt",
      ));
    if (!caPem) throw new Error(`no CA certificate yet: Secret ${server} has no ca.crt`);
  }
  const ep: BaoEndpoint = {
    address: `${tlsEnabled(cluster) ? "https" : "http"}://${host}:${API_PORT}`,
    // The certificate carries the address the pod advertises, which may be the shorter `.svc` form.
    serverName: tlsEnabled(cluster)
      ? podAddress(ref, ordinal, Component.Server, access.clusterDomain)
      : undefined,
    caPem,
    timeoutMs: access.timeoutMs ?? 5_000,
  };
  // A baoClient (podClient's) is given the pod's endpoint and reroutes it itself.
  return access.baoClient ? access.baoClient(ep) : new BaoClient(access.endpoint?.(ep) ?? ep);
}

/**
 * A client for any voter pod by name, blue-green's green ones included: the serving voter endpoint
 * (CA, scheme, port) with the host switched to `podName` under the same headless Service. Every
 * voter pod serves the one server certificate, so the answer is verified against the name the
 * endpoint was made for.
 */
export async function podClient<T extends BaoClient>(
  client: KubeClient,
  access: BaoAccess,
  cluster: OpenBaoCluster,
  podName: string,
  make: (ep: BaoEndpoint) => T,
): Promise<T> {
  let made: T | undefined;
  const renamed: BaoAccess = {
    ...access,
    baoClient: (ep: BaoEndpoint) => {
      const url = new URL(ep.address);
      const original = url.hostname;
      url.hostname = original.replace(/^[^.]+/, podName);
      const pod = { ...ep, address: url.origin, serverName: ep.serverName ?? original };
      made = make(access.endpoint?.(pod) ?? pod);
      return made;
    },
  };
  // Ordinal 0's endpoint is only a template: its host is replaced by podName's.
  await voterClient(client, renamed, cluster, 0);
  return made!;
}

const isReady = (p: KubeObject): boolean =>
  ((p["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some(
    (c) => c.type === "Ready" && c.status === "True",
  );

export async function observeCluster(
  client: KubeClient,
  access: BaoAccess,
  cluster: OpenBaoCluster,
  token: string | undefined,
  signal?: AbortSignal,
): Promise<ClusterObservation> {
  const ref = refOf(cluster);
  const serving = servingRef(cluster);
  const sts = await client.getOrUndefined<KubeObject>(STATEFULSET, voterSetName(serving), ref.namespace);
  const spec = (sts?.["spec"] ?? {}) as {
    replicas?: number;
    updateStrategy?: { rollingUpdate?: { partition?: number } };
  };
  const st = (sts?.["status"] ?? {}) as { currentRevision?: string; updateRevision?: string };
  const replicas = spec.replicas ?? cluster.spec.replicas ?? 3;
  const selector = Object.entries(podSelector(ref))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = (await client.list<KubeObject>(POD, { namespace: ref.namespace, labelSelector: selector }))
    .items;
  const byName = new Map(pods.map((p) => [p.metadata.name, p]));
  const voters: VoterObservation[] = await Promise.all(
    Array.from({ length: replicas }, async (_, ordinal) => {
      const name = podName(serving, ordinal);
      const p = byName.get(name);
      const v: VoterObservation = {
        ordinal,
        name,
        exists: !!p,
        ready: p ? isReady(p) : false,
        terminating: !!p?.metadata.deletionTimestamp,
        revision: p?.metadata.labels?.[REVISION_LABEL],
      };
      if (!p) return v;
      if (podTrouble(p)?.stuck) v.stuck = true;
      try {
        const h = await (await voterClient(client, access, cluster, ordinal)).health(signal);
        v.sealed = h.sealed;
        v.version = h.version;
      } catch {
        // Unreachable while it restarts: unknown, which every plan reads as "wait".
      }
      return v;
    }),
  );
  const obs: ClusterObservation = {
    replicas,
    currentRevision: st.currentRevision,
    updateRevision: st.updateRevision,
    livePartition: spec.updateStrategy?.rollingUpdate?.partition,
    voters,
  };
  if (!token) return obs;
  // Raft's view through any pod that answers (a standby forwards to the active node).
  for (const v of voters.filter((x) => x.ready && x.sealed === false)) {
    try {
      const bao = await voterClient(client, access, cluster, v.ordinal);
      const servers = await bao.raftServers(token, signal);
      const leader = servers.find((s) => s.leader)?.node_id;
      const n = leader === undefined ? undefined : voterOrdinal(serving, leader);
      if (n !== undefined) obs.leaderOrdinal = n;
      obs.raftHealthy = (await bao.autopilotState(token, signal)).healthy;
      break;
    } catch {
      signal?.throwIfAborted();
    }
  }
  return obs;
}
