import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterReason,
  type OpenBaoClusterReasonType,
} from "../../../../apis/openbaocluster-names.js";
import { POD, SECRET } from "../../../../runtime/builtin-types.js";
import { errorMessage } from "../../../../runtime/errors.js";
import type { KubeObject } from "../../../../runtime/types.js";
import type { Writes } from "../../apply.js";
import type { BaoClient } from "../../baoclient/client.js";
import { refOf, servingRef } from "../../cluster-ref.js";
import { clusterLabels, clusterNames, LABEL_CLUSTER, podName } from "../../identity.js";
import type { ServiceContext } from "../../services.js";
import { podTrouble } from "../pod-trouble.js";

export const ROOT_TOKEN_KEY = "token";

export type InitOutcome =
  | { done: true; selfInitialized: boolean; recovered?: boolean }
  | { done: false; reason: OpenBaoClusterReasonType; message: string; failed?: boolean };

export interface InitDeps {
  ctx: ServiceContext;
  writes: Writes;
  /** A client for pod `ordinal` of the voters, trusting the cluster's CA; throws while TLS is missing. */
  bao: (ordinal: number) => Promise<BaoClient>;
}

const waiting = (reason: OpenBaoClusterReasonType, message: string): InitOutcome => ({
  done: false,
  reason,
  message,
});

export const selfInitEnabled = (c: OpenBaoCluster): boolean => c.spec.selfInit?.enabled === true;

/** The body of sys/init: auto-unseal seals hand out recovery keys; the static seal needs none. */
export function initRequest(c: OpenBaoCluster): Record<string, unknown> {
  const type = c.spec.unseal?.type ?? "static";
  return type === "static" ? {} : { recovery_shares: 1, recovery_threshold: 1 };
}

/**
 * Initialization while status.initialized is false: wait for pod 0 and its TLS, then either observe
 * OpenBao initializing itself (self-init) or initialize it through the API and keep the root token
 * in the root-token Secret. An already initialized pod 0 is a recovery (the operator restarted
 * between init and its status write): nothing is initialized twice.
 */
export async function reconcileInit(d: InitDeps, cluster: OpenBaoCluster): Promise<InitOutcome> {
  const ns = cluster.metadata.namespace!;
  const pod0 = podName(servingRef(cluster), 0);
  // The voter pods carry the cluster's label: the reader's label-selected pod cache answers.
  const pod = await d.ctx.reader.get<KubeObject>(POD, pod0, ns, {
    labels: { [LABEL_CLUSTER]: cluster.metadata.name! },
  });
  const phase = (pod?.["status"] as { phase?: string } | undefined)?.phase;
  // A container that keeps exiting says why in the pod's status; an unanswered port does not.
  const trouble = podTrouble(pod);
  const troubled = (): InitOutcome | undefined =>
    trouble && {
      done: false,
      reason: trouble.stuck ? OpenBaoClusterReason.PodCrashLooping : OpenBaoClusterReason.PodNotReady,
      message: trouble.message,
      failed: trouble.stuck,
    };
  if (!pod || phase !== "Running")
    return troubled() ?? waiting(OpenBaoClusterReason.PodNotReady, `waiting for pod ${pod0} to run`);
  let bao: BaoClient;
  try {
    bao = await d.bao(0);
  } catch (e) {
    return waiting(OpenBaoClusterReason.TLSSecretMissing, errorMessage(e));
  }
  let health: Awaited<ReturnType<BaoClient["health"]>>;
  try {
    health = await bao.health(d.ctx.signal);
  } catch (e) {
    return (
      troubled() ??
      waiting(OpenBaoClusterReason.PodNotReady, `pod ${pod0} does not answer yet: ${errorMessage(e)}`)
    );
  }
  if (selfInitEnabled(cluster)) {
    if (health.initialized && !health.sealed) return { done: true, selfInitialized: true };
    return waiting(
      OpenBaoClusterReason.Initializing,
      `OpenBao on ${pod0} is initializing itself (initialized=${health.initialized}, sealed=${health.sealed})`,
    );
  }
  const pending = unstoredRootTokens.get(cluster.metadata.uid ?? "");
  if (health.initialized && pending !== undefined) {
    // This process initialized it and the Secret write failed: the runtime's backoff brought the
    // pass back, and the token kept in memory is stored now.
    await storeRootToken(d.ctx, cluster, pending);
    d.writes.record("initialize", pod0);
    announceInitialized(d, cluster, pod0);
    return { done: true, selfInitialized: false };
  }
  if (health.initialized) {
    // Recovery: this operator initialized it before, but the status write did not land.
    const names = clusterNames(refOf(cluster));
    const token = await d.ctx.reader.get(SECRET, names.rootTokenSecret, cluster.metadata.namespace!);
    if (!token)
      d.ctx.events.record(cluster, {
        type: "Warning",
        reason: OpenBaoClusterReason.RootTokenMissing,
        action: "Initialize",
        note: `OpenBao on ${pod0} is already initialized but Secret ${names.rootTokenSecret} does not exist: Raft peer removal and Autopilot need a token and will wait`,
      });
    return { done: true, selfInitialized: false, recovered: true };
  }
  if (d.writes.dryRun) {
    d.writes.record("initialize", pod0);
    return waiting(OpenBaoClusterReason.Initializing, `observe-only: would initialize OpenBao on ${pod0}`);
  }
  const { rootToken } = await bao.init(initRequest(cluster), d.ctx.signal);
  await storeRootToken(d.ctx, cluster, rootToken);
  d.writes.record("initialize", pod0);
  announceInitialized(d, cluster, pod0);
  return { done: true, selfInitialized: false };
}

function announceInitialized(d: InitDeps, cluster: OpenBaoCluster, pod0: string): void {
  d.ctx.log.info({ pod: pod0 }, "initialized OpenBao; root token stored in the root-token Secret");
  d.ctx.events.record(cluster, {
    type: "Normal",
    reason: OpenBaoClusterReason.Initialized,
    action: "Initialize",
    note: `initialized OpenBao on ${pod0}; the root token is in Secret ${clusterNames(refOf(cluster)).rootTokenSecret}`,
  });
}

/**
 * Root tokens OpenBao handed out whose Secret write failed, by cluster uid. OpenBao tells the token
 * once: it is kept here until a later pass stores it, instead of a retry loop holding the worker
 * (the next pass comes from the runtime's failure backoff). Lost with the process, as before.
 */
const unstoredRootTokens = new Map<string, string>();

/**
 * Keeps the root token. Like the seal key it carries no owner reference, so deletionPolicy Retain
 * leaves a usable cluster behind. One write per pass: a failure keeps the token in memory and
 * throws, so the step fails (InitializationFailed) and the runtime retries with backoff.
 */
async function storeRootToken(ctx: ServiceContext, cluster: OpenBaoCluster, token: string): Promise<void> {
  const name = clusterNames(refOf(cluster)).rootTokenSecret;
  const ns = cluster.metadata.namespace!;
  const body = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns, labels: clusterLabels(refOf(cluster)) },
    type: "Opaque",
    data: { [ROOT_TOKEN_KEY]: Buffer.from(token, "utf8").toString("base64") },
  };
  const uid = cluster.metadata.uid ?? "";
  try {
    await ctx.client.apply(SECRET, body, { fieldManager: ctx.fieldManager, force: true });
  } catch (e) {
    unstoredRootTokens.set(uid, token);
    throw new Error(
      `initialized OpenBao but could not store the root token in Secret ${ns}/${name} yet (kept in memory, retried with backoff): ${errorMessage(e)}`,
    );
  }
  unstoredRootTokens.delete(uid);
}
