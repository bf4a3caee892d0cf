import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { secretValue } from "../../../runtime/secrets.js";
import { BaoClient, type BaoEndpoint } from "../baoclient/client.js";
import { refOf, servingRef } from "../cluster-ref.js";
import { API_PORT, Component, clusterNames, podAddress, podHost, voterOrdinal } from "../identity.js";
import type { ServiceContext } from "../services.js";
import { tlsEnabled, tlsSecretName, tlsSecretsMounted } from "../workload/statefulsets/build.js";
import type { StepDeps } from "./context.js";
import { noteRootTokenFailure, usableRootToken } from "./root-token.js";

// How the steps reach OpenBao itself: one pod's API, trusting the cluster's CA.

/** A client for voter pod `ordinal` of the serving revision, trusting the cluster's CA (read from the mounted server Secret). */
export async function baoForOrdinal(
  deps: Pick<StepDeps, "config" | "baoClient">,
  cluster: OpenBaoCluster,
  ctx: ServiceContext,
  ordinal: number,
): Promise<BaoClient> {
  const ref = servingRef(cluster);
  const host = podHost(ref, ordinal, Component.Server, deps.config.clusterDomain);
  const tls = tlsEnabled(cluster);
  let caPem: string | undefined;
  if (tlsSecretsMounted(cluster)) {
    const names = clusterNames(refOf(cluster));
    const ns = cluster.metadata.namespace!;
    const server = tlsSecretName(cluster) ?? names.serverSecret;
    caPem =
      (await secretValue(ctx.reader, ns, server, "ca.crt")) ??
      (await secretValue(ctx.reader, ns, cluster.spec.tls?.caSecretName ?? names.caSecret, "ca.crt")) ??
      (await secretValue(ctx.reader, ns, cluster.spec.tls?.caSecretName ?? names.caSecret, "tls.crt"));
    if (!caPem) throw new Error(`no CA certificate yet: Secret ${server} has no ca.crt`);
  }
  const ep: BaoEndpoint = {
    address: `${tls ? "https" : "http"}://${host}:${API_PORT}`,
    caPem,
    // The certificate carries the address the pod advertises, which may be the shorter `.svc` form.
    serverName: tls ? podAddress(ref, ordinal, Component.Server, deps.config.clusterDomain) : undefined,
    timeoutMs: 10_000,
  };
  return deps.baoClient ? deps.baoClient(ep) : new BaoClient(ep);
}

/** A client for a voter pod named by its node id (the pod name). */
export async function baoForPod(
  deps: Pick<StepDeps, "config" | "baoClient">,
  cluster: OpenBaoCluster,
  ctx: ServiceContext,
  pod: string,
): Promise<BaoClient> {
  const ordinal = voterOrdinal(servingRef(cluster), pod);
  if (ordinal === undefined) throw new Error(`Raft node ${pod} is not a voter pod of this cluster`);
  return baoForOrdinal(deps, cluster, ctx, ordinal);
}

export interface RaftView {
  ids: string[];
  leader?: string;
  token: string;
}

/** Raft peers as the cluster lists them, through pod 0 (forwarded to the leader), with the root token. */
export async function raftPeers(
  deps: Pick<StepDeps, "config" | "baoClient" | "rootTokenRefusals">,
  cluster: OpenBaoCluster,
  ctx: ServiceContext,
): Promise<RaftView | undefined> {
  const token = await usableRootToken(deps, cluster, ctx);
  if (!token) return undefined;
  // Ask a pod that stays: the departing ones may be gone already.
  const bao = await baoForOrdinal(deps, cluster, ctx, 0);
  const servers = await bao.raftServers(token, ctx.signal).catch((e: unknown) => {
    noteRootTokenFailure(deps, cluster, ctx, token, e);
    throw e;
  });
  return { ids: servers.map((s) => s.node_id), leader: servers.find((s) => s.leader)?.node_id, token };
}
