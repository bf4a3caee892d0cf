import { Counter, Gauge, Histogram } from "prom-client";
import { ClusterOperations, ClusterPhases, OpenBaoMetric } from "../../apis/openbaocluster-names.js";
import { registry } from "../../runtime/metrics.js";
import { DRIFT_ACTIONS } from "./drift.js";

// Upstream's metric names, so existing dashboards and alerts keep working.

export const clusterPhase = new Gauge({
  name: "openbao_cluster_phase",
  help: "1 for the phase each OpenBaoCluster is in, 0 for the others.",
  labelNames: ["namespace", "name", "phase"] as const,
  registers: [registry],
});

export const clusterReplicas = new Gauge({
  name: "openbao_cluster_replicas",
  help: "Voters an OpenBaoCluster asks for (spec.replicas).",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

export const clusterReadyReplicas = new Gauge({
  name: "openbao_cluster_ready_replicas",
  help: "Voter pods that are Ready.",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

export const clusterInitialized = new Gauge({
  name: "openbao_cluster_initialized",
  help: "1 once the cluster is initialized (status.initialized).",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

export const reconcileDuration = new Histogram({
  name: "openbao_reconcile_duration_seconds",
  help: "Time of one OpenBaoCluster reconcile.",
  labelNames: ["namespace", "name"] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const reconcileErrors = new Counter({
  name: "openbao_reconcile_errors_total",
  help: "OpenBaoCluster reconciles that ended with an error, by step.",
  labelNames: ["namespace", "name", "step"] as const,
  registers: [registry],
});

export const raftPeersRemoved = new Counter({
  name: "openbao_cluster_raft_peers_removed_total",
  help: "Raft peers the operator removed before shrinking the voter StatefulSet.",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

/** Set once at start by policies/dependencies.ts; no labels, as upstream's. */
export const admissionDependenciesReady = new Gauge({
  name: OpenBaoMetric.AdmissionDependenciesReady,
  help: "1 when the admission policies and bindings the openbao target depends on were in place at start.",
  registers: [registry],
});

// Not upstream's: what its dashboards read from conditions, as numbers a panel and an alert can use.

export const clusterSealed = new Gauge({
  name: "openbao_cluster_sealed",
  help: "1 while OpenBao answers sealed (the OpenBaoSealed condition), 0 unsealed; absent while unknown.",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

export const leaderChanges = new Counter({
  name: "openbao_cluster_leader_changes_total",
  help: "Times the active OpenBao node (status.activeLeader) was seen to change to another pod.",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

export const operationLockHeld = new Gauge({
  name: "openbao_operation_lock_held",
  help: "1 for the operation (Upgrade, Backup, Restore) holding the cluster's operation lock, 0 for the others.",
  labelNames: ["namespace", "name", "operation"] as const,
  registers: [registry],
});

/** Raft members by what their registration labels say: the active node, unsealed standbys, sealed ones. */
export interface RegisteredPeers {
  active: number;
  standby: number;
  sealed: number;
}

export const PEER_STATES = [
  "active",
  "standby",
  "sealed",
] as const satisfies readonly (keyof RegisteredPeers)[];

export const raftPeers = new Gauge({
  name: "openbao_cluster_raft_peers",
  help: "Running server pods by what OpenBao's service registration labels say of them: active (the leader), standby (unsealed) or sealed (a member that cannot vote). Read from the pods, no OpenBao request; absent before initialization.",
  labelNames: ["namespace", "name", "state"] as const,
  registers: [registry],
});

/** Sets the peers gauge from a pass's count; removes it when the pass could not count (not initialized). */
export function recordRaftPeers(
  labels: { namespace: string; name: string },
  peers: RegisteredPeers | undefined,
): void {
  for (const state of PEER_STATES)
    if (peers) raftPeers.set({ ...labels, state }, peers[state]);
    else raftPeers.remove({ ...labels, state });
}

export const PHASES = ClusterPhases;

/** The gauges and counters read from a pass's status: seal state, leader moves, the lock's holder. */
export function recordClusterState(
  labels: { namespace: string; name: string },
  prev: { activeLeader?: string | undefined } | undefined,
  next: { activeLeader?: string | undefined; operationLock?: { operation?: string | undefined } | undefined },
  sealed: boolean | undefined,
): void {
  if (sealed === undefined) clusterSealed.remove(labels);
  else clusterSealed.set(labels, sealed ? 1 : 0);
  // Counted only between two known leaders: a pass that cannot see one keeps the last (status).
  if (prev?.activeLeader && next.activeLeader && prev.activeLeader !== next.activeLeader)
    leaderChanges.inc(labels);
  else leaderChanges.inc(labels, 0);
  for (const operation of ClusterOperations)
    operationLockHeld.set({ ...labels, operation }, next.operationLock?.operation === operation ? 1 : 0);
}

export function forgetClusterMetrics(namespace: string, name: string): void {
  for (const phase of PHASES) clusterPhase.remove({ namespace, name, phase });
  clusterReplicas.remove({ namespace, name });
  clusterReadyReplicas.remove({ namespace, name });
  clusterInitialized.remove({ namespace, name });
  clusterSealed.remove({ namespace, name });
  for (const state of PEER_STATES) raftPeers.remove({ namespace, name, state });
  leaderChanges.remove({ namespace, name });
  for (const operation of ClusterOperations) operationLockHeld.remove({ namespace, name, operation });
  for (const action of DRIFT_ACTIONS) plannedChanges.remove({ namespace, name, action });
}

export const plannedChanges = new Gauge({
  name: "openbao_cluster_planned_changes",
  help: "Changes a real run would make, per action (create, update, delete, grow-volume, initialize, step-down, remove-peer, autopilot), as seen by the last observe-only pass.",
  labelNames: ["namespace", "name", "action"] as const,
  registers: [registry],
});
