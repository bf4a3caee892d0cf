/**
 * From one pass's result to OpenBaoCluster's status: every condition the workload plane owns, its
 * phase and the events its transitions say. One file because the conditions are decided together
 * (a blocked step, the lock's operation and the readiness families each bear on the others).
 */
import type { OpenBaoCluster, OpenBaoClusterPhase, OpenBaoClusterStatus } from "../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  OpenBaoClusterReason,
  type OpenBaoClusterReasonType,
} from "../../apis/openbaocluster-names.js";
import {
  type Condition,
  type ConditionInput,
  removeCondition,
  setCondition,
} from "../../runtime/conditions.js";
import { sameStatus } from "../../runtime/status.js";
import type { RegisteredPeers } from "./metrics.js";
import { restoreHolder } from "./opslifecycle/lock.js";
import { workloadPlaneOf } from "./opslifecycle/planes.js";
import {
  type AdmissionReadiness,
  etcdEncryptionWarning,
  nodeCapability,
  postureOf,
  productionReadiness,
} from "./profile/posture.js";
import type { IngressReadiness } from "./services.js";

/** Where a pass stopped, if it did: a step that is not ready blocks every later one. */
export interface Blocked {
  step:
    | "tenancy"
    | "validate"
    | "certificates"
    | "images"
    | "infrastructure"
    | "storage"
    | "initialization"
    | "autopilot";
  reason: OpenBaoClusterReasonType;
  /** Names objects, fields and endpoints; never values. */
  message: string;
  /** True for a failure (Degraded); false while waiting for something that will come. */
  failed: boolean;
}

/** What one pass observed and did, from which the status is derived. */
export interface PassResult {
  blocked?: Blocked;
  tls?: { ready: boolean; reason: OpenBaoClusterReasonType; message: string };
  initialized: boolean;
  selfInitialized?: boolean;
  desiredReplicas: number;
  readyReplicas: number;
  readReplicas?: { desiredReplicas: number; readyReplicas: number };
  /** Seal state of the pods that answered; undefined when none did. */
  sealed?: boolean;
  activeLeader?: string;
  /** Server pods by their registration labels (the Raft peers gauge); undefined before initialization. */
  raftPeers?: RegisteredPeers;
  currentVersion?: string;
  paused?: boolean;
  /** Fields accepted by the schema that this operator does not act on. */
  unsupported?: string[];
  /** Paths upstream removed in 0.5 that the spec still uses, each with its replacement: the Deprecated condition. */
  deprecated?: string[];
  /** Secret references that name nothing, each `spec.….name is empty: what waits`: SecretReferencesNamed. */
  emptySecretReferences?: string[];
  /** Spec fields holding credentials given inline (seal, plugin env; names only): the SecurityRisk condition. */
  inlineCredentials?: string[];
  /**
   * Volume growth as the storage step saw it: null when no growth is asked for (the condition
   * goes), undefined when the step did not run (the condition stays as it was).
   */
  storage?: { expanded: boolean; reason: OpenBaoClusterReasonType; message: string } | null;
  /**
   * The Gateway API routes of spec.gateway: null without them (the condition goes), undefined when
   * networking did not run (the condition stays as it was).
   */
  gateway?: { ready: boolean; reason: OpenBaoClusterReasonType; message: string } | null;
  /** The managed Ingress: null without spec.ingress (the condition goes), undefined when networking did not run. */
  ingress?: IngressReadiness | null;
  /**
   * Upstream's configuration-readiness conditions as readiness/ decided them: those to set and those
   * whose feature is off; undefined leaves them as they were (a pass that decided nothing).
   */
  readiness?: {
    set: { type: string; status: Condition["status"]; reason: OpenBaoClusterReasonType; message: string }[];
    remove: string[];
  };
  /** Set when OpenBao refuses the operator's root token (HTTP 403): what to do, naming the Secret. */
  rootTokenRefused?: string;
  /** Set when OpenBao refuses the operator role the read replicas' demotion: what to add, naming the policy. */
  readReplicaSuffrage?: string;
  /** Whether the admission policies are in place, for ProductionReady; undefined: not known. */
  admission?: AdmissionReadiness;
  /** The voter StatefulSet's ReplicaFailure message, when it has one (pods it could not create). */
  replicaFailure?: string;
  /** Epoch ms of what falls due by the clock alone (certificate rotation): the next pass comes by then. */
  dueAt?: number[];
  /** Observed through OpenBao's API because the pod labels did not tell: looked at again within a minute. */
  observedThroughApi?: boolean;
}

/** A pass's result before any step ran: what the stored status and the spec already say. */
export function startingPassResult(cluster: OpenBaoCluster): PassResult {
  const status = cluster.status ?? {};
  return {
    initialized: status.initialized === true,
    selfInitialized: status.selfInitialized,
    desiredReplicas: cluster.spec.replicas ?? 3,
    readyReplicas: 0,
  };
}

/**
 * The summary phase. Once initialized, the operation holding the lock (written by the AdminOps plane,
 * read here from the status the pass started from) says whether the cluster is being upgraded or
 * backed up. A restore has no phase of its own upstream and reads Running, except while its read
 * replicas restart after its voters did (status.restore.restartCompletedAt written by the restore
 * that still holds the lock): RestoringReadReplicas.
 */
export function phaseOf(r: PassResult, prev?: OpenBaoClusterStatus, namespace = ""): OpenBaoClusterPhase {
  if (r.blocked?.failed && r.blocked.step === "validate") return "Failed";
  if (!r.initialized) return "Initializing";
  const lock = prev?.operationLock;
  const operation = lock?.holder ? lock.operation : undefined;
  if (operation === "Upgrade") return "Upgrading";
  if (operation === "Backup") return "BackingUp";
  const record = prev?.restore;
  if (
    operation === "Restore" &&
    record?.name &&
    record.restartCompletedAt &&
    lock?.holder === restoreHolder(namespace, record.name) &&
    (r.readReplicas?.desiredReplicas ?? 0) > 0
  )
    return "RestoringReadReplicas";
  return "Running";
}

/**
 * The workload plane of the status a pass leads to. Fields and conditions of the AdminOps plane and
 * the operation lock are left out, not copied: this is applied under the workload's field manager
 * with force, and a copy would co-own them, put back stale values over the other writers' newer
 * ones, and keep them from ever being removed (see opslifecycle/planes.ts).
 */
export function nextStatus(cluster: OpenBaoCluster, r: PassResult, now: Date): OpenBaoClusterStatus {
  const prev = workloadPlaneOf(cluster.status);
  const g = cluster.metadata.generation;
  let list: Condition[] = [...(prev.conditions ?? [])];
  const put = (c: Omit<ConditionInput<OpenBaoClusterReasonType>, "observedGeneration">) => {
    list = setCondition(list, { ...c, observedGeneration: g }, now);
  };
  if (r.tls) {
    put({
      type: C.TLSReady,
      status: r.tls.ready ? "True" : "False",
      reason: r.tls.reason,
      message: r.tls.message,
    });
  }
  put(
    r.initialized
      ? {
          type: C.OpenBaoInitialized,
          status: "True",
          reason: r.selfInitialized ? OpenBaoClusterReason.SelfInitialized : OpenBaoClusterReason.Initialized,
          message: r.selfInitialized
            ? "OpenBao initialized itself from spec.selfInit.requests"
            : // Not "the token is in the Secret": OpenBao found initialized without one (an init
              // whose answer was lost) is recorded too, with a RootTokenMissing event.
              "initialized by the operator, which keeps the root token in the root-token Secret (a RootTokenMissing event says when OpenBao was found initialized without it)",
        }
      : {
          type: C.OpenBaoInitialized,
          status: "False",
          reason: r.blocked?.step === "initialization" ? r.blocked.reason : OpenBaoClusterReason.Initializing,
          message:
            r.blocked?.step === "initialization"
              ? r.blocked.message
              : "waiting for the first pod to initialize",
        },
  );
  if (r.sealed !== undefined)
    put({
      type: C.OpenBaoSealed,
      status: r.sealed ? "True" : "False",
      reason: r.sealed ? OpenBaoClusterReason.Sealed : OpenBaoClusterReason.Unsealed,
      message: r.sealed ? "OpenBao answers as sealed" : "OpenBao is unsealed",
    });
  if (r.initialized)
    put(
      r.activeLeader
        ? {
            type: C.OpenBaoLeader,
            status: "True",
            reason: OpenBaoClusterReason.LeaderFound,
            message: `${r.activeLeader} is active`,
          }
        : {
            type: C.OpenBaoLeader,
            status: "False",
            reason: OpenBaoClusterReason.LeaderUnknown,
            message: "no active node reported",
          },
    );
  const allReady = r.initialized && r.readyReplicas >= r.desiredReplicas && r.desiredReplicas > 0;
  put(
    r.paused
      ? {
          type: C.Available,
          status: allReady ? "True" : "False",
          reason: OpenBaoClusterReason.Paused,
          message: "spec.paused: only deletion is reconciled",
        }
      : allReady && !r.blocked
        ? {
            type: C.Available,
            status: "True",
            reason: OpenBaoClusterReason.AllReplicasReady,
            message: `${r.readyReplicas}/${r.desiredReplicas} voters ready`,
          }
        : {
            type: C.Available,
            status: "False",
            reason:
              r.blocked && !r.blocked.failed
                ? r.blocked.reason
                : r.readyReplicas === 0
                  ? OpenBaoClusterReason.NoReplicasReady
                  : OpenBaoClusterReason.NotReady,
            message:
              r.blocked && !r.blocked.failed
                ? `${r.blocked.step}: ${r.blocked.message}`
                : `${r.readyReplicas}/${r.desiredReplicas} voters ready`,
          },
  );
  put(
    r.blocked?.failed
      ? {
          type: C.Degraded,
          status: "True",
          reason: r.blocked.reason,
          message: `${r.blocked.step}: ${r.blocked.message}`,
        }
      : r.rootTokenRefused
        ? {
            type: C.Degraded,
            status: "True",
            reason: OpenBaoClusterReason.RootTokenRefused,
            message: r.rootTokenRefused,
          }
        : notDegraded(r, allReady),
  );
  if (r.readReplicaSuffrage)
    put({
      type: C.ReadReplicasReady,
      status: "False",
      reason: OpenBaoClusterReason.DemoteRefused,
      message: r.readReplicaSuffrage,
    });
  else if (r.readReplicas && r.readReplicas.desiredReplicas > 0) {
    const ok = r.readReplicas.readyReplicas >= r.readReplicas.desiredReplicas;
    put({
      type: C.ReadReplicasReady,
      status: ok ? "True" : "False",
      reason: ok ? OpenBaoClusterReason.AllReplicasReady : OpenBaoClusterReason.NotReady,
      message: `${r.readReplicas.readyReplicas}/${r.readReplicas.desiredReplicas} read replicas ready`,
    });
  } else list = removeCondition(list, C.ReadReplicasReady);
  if (r.storage === null) list = removeCondition(list, C.StorageExpanded);
  else if (r.storage)
    put({
      type: C.StorageExpanded,
      status: r.storage.expanded ? "True" : "False",
      reason: r.storage.reason,
      message: r.storage.message,
    });
  if (r.gateway === null) list = removeCondition(list, C.GatewayReady);
  else if (r.gateway)
    put({
      type: C.GatewayReady,
      status: r.gateway.ready ? "True" : "False",
      reason: r.gateway.reason,
      message: r.gateway.message,
    });
  if (r.ingress === null) list = removeCondition(list, C.IngressIntegrationReady);
  else if (r.ingress) put({ type: C.IngressIntegrationReady, ...r.ingress });
  for (const type of r.readiness?.remove ?? []) list = removeCondition(list, type);
  for (const c of r.readiness?.set ?? []) put(c);
  if (r.unsupported?.length)
    put({
      type: "UnsupportedFields",
      status: "True",
      reason: OpenBaoClusterReason.NotSupported,
      message: `accepted but not acted on: ${r.unsupported.join(", ")}`,
    });
  else list = removeCondition(list, "UnsupportedFields");
  if (r.deprecated?.length)
    put({
      type: C.Deprecated,
      status: "True",
      reason: OpenBaoClusterReason.DeprecatedFields,
      message: r.deprecated.join("; "),
    });
  else list = removeCondition(list, C.Deprecated);
  if (r.emptySecretReferences?.length)
    put({
      type: C.SecretReferencesNamed,
      status: "False",
      reason: OpenBaoClusterReason.SecretReferenceMissingName,
      message: r.emptySecretReferences.join("; "),
    });
  else if (r.emptySecretReferences) list = removeCondition(list, C.SecretReferencesNamed);
  const posture = postureOf(cluster.spec);
  const inline = r.inlineCredentials?.length
    ? `credentials written into the spec, readable by anyone who may read this object: ${r.inlineCredentials.join(", ")}; the pods get them from Secrets the operator keeps, but the spec still holds them: move seal credentials to the Secret named by spec.unseal.credentialsSecretRef, and configure a plugin's through its config endpoint with a self-init request`
    : undefined;
  if (posture.profile === "Development")
    put({
      type: C.SecurityRisk,
      status: "True",
      reason: OpenBaoClusterReason.DevelopmentProfile,
      message: `spec.profile is Development: relaxed security (without spec.network.egressRules the operator's Jobs may reach any address on port 443), not for production${inline ? `; also ${inline}` : ""}`,
    });
  else if (inline)
    put({
      type: C.SecurityRisk,
      status: "True",
      reason: OpenBaoClusterReason.InlineCredentials,
      message: inline,
    });
  else list = removeCondition(list, C.SecurityRisk);
  put(productionReadiness(posture, r.admission));
  put(etcdEncryptionWarning());
  const capability = nodeCapability(
    cluster.spec.workloadHardening?.appArmorEnabled === true,
    r.replicaFailure,
  );
  if (capability) put(capability);
  else list = removeCondition(list, C.NodeSecurityCapabilityMismatch);

  const next: OpenBaoClusterStatus = {
    ...prev,
    observedGeneration: g,
    phase: phaseOf(r, cluster.status, cluster.metadata.namespace),
    initialized: r.initialized,
    readyReplicas: r.readyReplicas,
    conditions: list,
  };
  if (r.selfInitialized !== undefined) next.selfInitialized = r.selfInitialized;
  if (r.currentVersion) next.currentVersion = r.currentVersion;
  if (r.activeLeader !== undefined) next.activeLeader = r.activeLeader || undefined;
  if (r.readReplicas) next.readReplicas = r.readReplicas;
  for (const k of Object.keys(next) as (keyof OpenBaoClusterStatus)[])
    if (next[k] === undefined) delete next[k];
  return next;
}

/**
 * Degraded=False with the reason that is true: Paused (only deletion is reconciled, as upstream says
 * it), Reconciling while a step waits or the voters are not all Ready yet, Idle when every step ran
 * and nothing is left to do. Upstream writes Reconciling in every case, idle or not.
 */
function notDegraded(
  r: PassResult,
  allReady: boolean,
): Omit<ConditionInput<OpenBaoClusterReasonType>, "observedGeneration"> {
  const base = { type: C.Degraded, status: "False" as const };
  if (r.paused)
    return {
      ...base,
      reason: OpenBaoClusterReason.Paused,
      message: "spec.paused: nothing is reconciled but deletion",
    };
  if (r.blocked)
    return {
      ...base,
      reason: OpenBaoClusterReason.Reconciling,
      message: `nothing failed; ${r.blocked.step} waits: ${r.blocked.reason}`,
    };
  if (!allReady)
    return {
      ...base,
      reason: OpenBaoClusterReason.Reconciling,
      message: `nothing failed; every step ran, ${r.readyReplicas}/${r.desiredReplicas} voters ready`,
    };
  return {
    ...base,
    reason: OpenBaoClusterReason.Idle,
    message: "nothing failed; every step ran and nothing is left to do",
  };
}

/** Whether writing `next` would change anything; lastTransitionTime-only churn does not count. */
export function statusChanged(prev: OpenBaoClusterStatus | undefined, next: OpenBaoClusterStatus): boolean {
  // Only the workload plane is compared: the other writers' fields are never in `next`.
  return !sameStatus(workloadPlaneOf(prev), next);
}

/** Conditions whose status moved (or appeared): each becomes one event. */
export function transitions(prev: readonly Condition[] | undefined, next: readonly Condition[]): Condition[] {
  return next.filter((c) => {
    const before = prev?.find((p) => p.type === c.type);
    // A new reason is news while the condition is bad (a different failure), not while it is good
    // (Degraded=False going from Reconciling to Idle).
    return !before || before.status !== c.status || (isBad(c) && before.reason !== c.reason);
  });
}

const isBad = (c: Condition): boolean =>
  c.type === C.Degraded ||
  c.type === C.OpenBaoSealed ||
  c.type === C.SecurityRisk ||
  c.type === C.EtcdEncryptionWarning ||
  c.type === C.NodeSecurityCapabilityMismatch ||
  c.type === "UnsupportedFields" ||
  c.type === C.Deprecated
    ? c.status === "True"
    : c.status === "False";

/** Warning for conditions that are bad when True (Degraded, Sealed) or when False (the others). */
export function eventType(c: Condition): "Normal" | "Warning" {
  const bad = isBad(c);
  // Waiting during first boot is expected, not a warning.
  if (bad && c.reason === OpenBaoClusterReason.Initializing) return "Normal";
  return bad ? "Warning" : "Normal";
}
