/**
 * The OpenBaoCluster workload pass, in one file because it is one sequence read top to bottom:
 * finalizer, the stages of ./steps on the runtime's kernel, what OpenBao and the caches report
 * (observe, readiness), then one status write and the metrics taken from it. Each part lives in its
 * own module; what stays here is their order and the hand-over between them.
 */
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../apis/openbaocluster.js";
import { OpenBaoClusterReason, type OpenBaoClusterReasonType } from "../../apis/openbaocluster-names.js";
import { PERSISTENT_VOLUME_CLAIM, POD, SECRET } from "../../runtime/builtin-types.js";
import type { CachedReader } from "../../runtime/cached-reader.js";
import type { KubeClient } from "../../runtime/client.js";
import { done, type ReconcileContext, type ReconcileResult, requeueAfter } from "../../runtime/controller.js";
import { errorMessage, isNotFound } from "../../runtime/errors.js";
import type { EventRecorder } from "../../runtime/events.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../runtime/finalizers.js";
import type { Informer } from "../../runtime/informer.js";
import type { Logger } from "../../runtime/log.js";
import { fail, runStages } from "../../runtime/stages.js";
import { stageResult } from "../../runtime/stages-settle.js";
import type { StatusWriter } from "../../runtime/status.js";
import { type ResourceType, splitKey } from "../../runtime/types.js";
import { plannedBackup } from "./adminops/backup/observe.js";
import { cached, Writes } from "./apply.js";
import { OPENBAOCLUSTER, refOf, servingRef } from "./cluster-ref.js";
import { countDrift, DRIFT_ACTIONS, summarizeDrift } from "./drift.js";
import {
  CLUSTER_FINALIZER,
  Component,
  clusterNames,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
  podName,
  voterSetName,
} from "./identity.js";
import { ImageVerifier } from "./imageverify/verifier.js";
import {
  clusterInitialized,
  clusterPhase,
  clusterReadyReplicas,
  clusterReplicas,
  forgetClusterMetrics,
  PHASES,
  plannedChanges,
  reconcileDuration,
  reconcileErrors,
  recordClusterState,
  recordRaftPeers,
} from "./metrics.js";
import { describeDeprecation, normaliseClusterSpec } from "./normalise.js";
import { driftedCondition, withoutDrifted } from "./observe.js";
import { WORKLOAD_FIELD_MANAGER } from "./opslifecycle/planes.js";
import type { AdmissionReadiness } from "./profile/posture.js";
import { PostureWarnings } from "./profile/say-warnings.js";
import { readinessConditions } from "./readiness/assemble.js";
import { observeReadiness } from "./readiness/observe.js";
import { nextPassMs } from "./resync.js";
import type { ServiceContext } from "./services.js";
import { eventType, nextStatus, type PassResult, startingPassResult, transitions } from "./status.js";
import { workloadStatusWriter } from "./status-apply.js";
import { baoForOrdinal } from "./steps/bao.js";
import { DemoteRefusals } from "./steps/demote-refusals.js";
import { blockedOf, reportOf, type StepDeps, WORKLOAD_STEPS, type WorkloadOutcome } from "./steps/index.js";
import { keepPeerService } from "./steps/peer-service.js";
import { RootTokenRefusals } from "./steps/root-token.js";
import { AutopilotChecks } from "./workload/autopilot/autopilot.js";
import { forgetCertificateMetrics } from "./workload/certs/metrics.js";
import { registeredPeers, registeredState } from "./workload/registration/state.js";

export const FIELD_MANAGER = WORKLOAD_FIELD_MANAGER;

const SILENT_EVENTS = { record(): void {} } as unknown as EventRecorder;

/** Re-exported: the type lives in cluster-ref.ts so the lock and restore code need not load this file. */
export { OPENBAOCLUSTER };
export const PDB: ResourceType = {
  group: "policy",
  version: "v1",
  kind: "PodDisruptionBudget",
  plural: "poddisruptionbudgets",
  namespaced: true,
};

export interface ReconcilerDeps extends StepDeps {
  client: KubeClient;
  /** The start-up check of the admission policies, for ProductionReady; unset: not checked. */
  admission?: AdmissionReadiness;
  /** Reads from the manager's informers (live only for kinds not watched). */
  reader: Pick<CachedReader, "get" | "list">;
  events: EventRecorder;
  log: Logger;
  clusters: Informer<OpenBaoCluster>;
  /**
   * Tenant mode: why a cluster in this namespace may not be reconciled yet (no provisioned
   * OpenBaoTenant onboards it), or undefined when it may. Unset outside tenant mode.
   */
  tenantMissing?: (namespace: string) => string | undefined;
  now?: () => Date;
}

interface StatefulSetStatus {
  replicas?: number;
  readyReplicas?: number;
  conditions?: { type: string; status: string; message?: string }[];
}

/**
 * One OpenBaoCluster pass: the finalizer, then the ordered steps of ./steps (certificates →
 * infrastructure → storage → initialization → Autopilot), then what OpenBao reports, then status.
 * The first step that is not ready stops the later ones and its reason lands in status. Unchanged
 * objects are not written (applyIfChanged on cached objects with managedFields), and the status is
 * written only when it changes.
 */
export class OpenBaoClusterReconciler {
  private readonly now: () => Date;
  /** Writes the workload plane only when it changed; knows what it wrote before the cache does. */
  private readonly status: StatusWriter<OpenBaoClusterStatus>;

  private readonly d: ReconcilerDeps;
  private readonly postureWarnings: PostureWarnings;

  constructor(deps: ReconcilerDeps) {
    this.d = {
      ...deps,
      autopilotChecks: deps.autopilotChecks ?? new AutopilotChecks(),
      rootTokenRefusals: deps.rootTokenRefusals ?? new RootTokenRefusals(),
      demoteRefusals: deps.demoteRefusals ?? new DemoteRefusals(),
      imageVerifier: deps.imageVerifier ?? new ImageVerifier(),
    };
    const d = this.d;
    this.now = d.now ?? (() => new Date());
    this.status = workloadStatusWriter(d.client, d.clusters);
    this.postureWarnings = new PostureWarnings(d.client, d.events);
  }

  async reconcile(key: string, rc: ReconcileContext): Promise<ReconcileResult> {
    const cached = this.d.clusters.get(key);
    const { namespace = "", name } = splitKey(key);
    if (!cached) {
      forgetClusterMetrics(namespace, name);
      forgetCertificateMetrics(namespace, name);
      this.status.forget(key);
      this.d.autopilotChecks?.forget(key);
      this.d.rootTokenRefusals?.forget(key);
      this.postureWarnings.forget(key);
      return done();
    }
    const cluster = this.status.freshest(key, cached);
    const started = performance.now();
    try {
      return await this.pass(cluster, rc);
    } finally {
      reconcileDuration.observe({ namespace, name }, (performance.now() - started) / 1000);
    }
  }

  private context(cluster: OpenBaoCluster, rc: ReconcileContext): ServiceContext {
    const observeOnly = this.d.config.observeOnly;
    return {
      client: this.d.client,
      reader: this.d.reader,
      owner: cluster,
      fieldManager: FIELD_MANAGER,
      log: rc.log,
      // Observe-only: the steps' events would tell of certificates issued, peers removed or a
      // cluster initialized when none was; only the status report (and its transitions) is written.
      events: observeOnly ? SILENT_EVENTS : this.d.events,
      now: this.now,
      signal: rc.signal,
      observeOnly,
    };
  }

  private async pass(input: OpenBaoCluster, rc: ReconcileContext): Promise<ReconcileResult> {
    let cluster = input;
    const observeOnly = this.d.config.observeOnly;
    if (cluster.metadata.deletionTimestamp) return this.finalize(cluster, rc);
    const untenanted = this.d.tenantMissing?.(cluster.metadata.namespace ?? "");
    if (untenanted !== undefined) return this.awaitTenant(cluster, untenanted, rc);
    if (!observeOnly && !hasFinalizer(cluster, CLUSTER_FINALIZER))
      cluster = await addFinalizer(this.d.client, OPENBAOCLUSTER, cluster, CLUSTER_FINALIZER, rc.signal);
    // Before any name is derived: a cluster from before upstream's names keeps its pods' Service.
    cluster = await keepPeerService(this.d, cluster, { observeOnly, signal: rc.signal });
    // Paths upstream removed in 0.5 are read under their 0.5 names from here on (never written back).
    const normalised = normaliseClusterSpec(cluster.spec);
    if (normalised.deprecated.length > 0) cluster = { ...cluster, spec: normalised.spec };

    const writes = new Writes(observeOnly);
    const ctx = this.context(cluster, rc);
    const result: PassResult = {
      ...startingPassResult(cluster),
      ...(this.d.admission ? { admission: this.d.admission } : {}),
      deprecated: normalised.deprecated.map(describeDeprecation),
    };
    let outcome: WorkloadOutcome | undefined;
    if (cluster.spec.paused) {
      result.paused = true;
    } else {
      const labels = { namespace: cluster.metadata.namespace!, name: cluster.metadata.name! };
      outcome = await runStages(
        WORKLOAD_STEPS,
        { cluster, ctx, deps: this.d, writes, result },
        {
          signal: rc.signal,
          // An error thrown in a step is that step's failure: it lands in status like one it
          // reported, under the reason the step's table entry names.
          onThrow: (e, name) => {
            const { step, errorReason } = reportOf(name);
            reconcileErrors.inc({ ...labels, step });
            rc.log.warn({ step, err: errorMessage(e) }, "openbao cluster step failed");
            return fail(errorReason, e);
          },
        },
      );
      result.blocked = blockedOf(outcome);
    }
    await this.observe(cluster, result, rc);
    // Upstream's configuration-readiness conditions, from what the caches hold (readiness/).
    result.readiness = readinessConditions(
      cluster,
      result.paused
        ? undefined
        : await observeReadiness(this.d.reader, this.d.client, cluster, this.d.config),
      result.paused === true,
    );
    if (observeOnly) {
      // The backup controller does not run observe-only; a backup it would start is reported here.
      const backup = plannedBackup(cluster, this.now());
      if (backup) writes.record(backup.action, backup.what);
    }
    if (writes.changes.length > 0)
      rc.log.info(
        { changes: summarizeDrift(writes.changes), observeOnly },
        observeOnly ? "would write" : "applied",
      );
    await this.writeStatus(cluster, result, writes, rc);
    if (!observeOnly && !result.paused) await this.sayPostureWarnings(cluster, rc);

    // A failed step backs off in the runtime (and counts as an error there); an invalid spec waits
    // for the object to change. A step that waits on progress looks again at the poll interval.
    const settled = !result.blocked && result.initialized && result.readyReplicas >= result.desiredReplicas;
    const key = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
    const next = nextPassMs({
      settled,
      paused: !!result.paused,
      observedThroughApi: !!result.observedThroughApi,
      dueAt: [...(result.dueAt ?? []), observeOnly ? undefined : this.postureWarnings.nextDue(cluster, key)],
      now: this.now().getTime(),
      resyncMs: this.d.config.resyncMs,
      pollMs: this.d.config.pollMs,
    });
    return outcome ? stageResult(outcome, { doneAfterMs: next, waitAfterMs: next }) : requeueAfter(next);
  }

  /**
   * Tenant mode, a namespace no provisioned tenant onboards: nothing is created there (no finalizer
   * either; the operator may hold no rights there yet), only the status says what is missing, and
   * its transition a Warning event. The tenant's change wakes the cluster; the resync is a backstop.
   */
  private async awaitTenant(
    cluster: OpenBaoCluster,
    message: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const result: PassResult = {
      ...startingPassResult(cluster),
      blocked: { step: "tenancy", reason: OpenBaoClusterReason.TenantNotProvisioned, message, failed: false },
    };
    rc.log.info({ reason: OpenBaoClusterReason.TenantNotProvisioned }, message);
    await this.writeStatus(cluster, result, new Writes(this.d.config.observeOnly), rc);
    return requeueAfter(this.d.config.resyncMs);
  }

  /**
   * Ready replicas from the StatefulSet; seal state, version and the active node from the labels
   * OpenBao's service registration keeps on its pods (workload/registration), read from the pod
   * cache. OpenBao's API is asked only where the labels do not tell (an image or a pod without the
   * registration, two pods saying active), through pod 0 as before.
   */
  private async observe(cluster: OpenBaoCluster, result: PassResult, rc: ReconcileContext): Promise<void> {
    const ns = cluster.metadata.namespace!;
    const sts = cached(this.d.statefulSets, ns, voterSetName(servingRef(cluster)));
    const st = (sts?.["status"] ?? {}) as StatefulSetStatus;
    result.readyReplicas = st.readyReplicas ?? 0;
    const failure = st.conditions?.find((x) => x.type === "ReplicaFailure" && x.status === "True");
    if (failure?.message) result.replicaFailure = failure.message;
    if (!result.initialized) return;
    const pods = await this.d.reader.list(POD, {
      namespace: ns,
      labelSelector: `${LABEL_CLUSTER}=${cluster.metadata.name},${LABEL_COMPONENT}=${Component.Server}`,
    });
    // Counted even with no pod Ready: a cluster whose every pod is sealed is what the panel must show.
    result.raftPeers = registeredPeers(pods);
    if (result.readyReplicas === 0) return;
    const labels = registeredState(pods, podName(servingRef(cluster), 0));
    if (labels.pod0) {
      result.sealed = labels.pod0.sealed;
      result.currentVersion = labels.pod0.version ?? cluster.status?.currentVersion;
    }
    if (labels.activeLeader !== undefined) result.activeLeader = labels.activeLeader;
    if (labels.gaps.length === 0) return;
    rc.log.debug({ gaps: labels.gaps }, "OpenBao's pod labels do not tell everything; asking pod 0's API");
    result.observedThroughApi = true;
    try {
      const bao = await baoForOrdinal(this.d, cluster, this.context(cluster, rc), 0);
      const health = await bao.health(rc.signal);
      result.sealed = health.sealed;
      if (health.version) result.currentVersion = health.version;
      const leader = await bao.leader(rc.signal);
      result.activeLeader = leaderPod(leader.leaderAddress);
    } catch (e) {
      if (rc.signal.aborted) throw e;
      rc.log.debug({ err: errorMessage(e) }, "could not observe OpenBao through pod 0");
      // Keep what was known (or what the labels told); pod 0 may be restarting.
      result.activeLeader ??= cluster.status?.activeLeader;
      result.currentVersion ??= cluster.status?.currentVersion;
    }
  }

  /** Upstream's hourly reminders of a weak posture; a failure to stamp them is said and retried. */
  private async sayPostureWarnings(cluster: OpenBaoCluster, rc: ReconcileContext): Promise<void> {
    try {
      await this.postureWarnings.say(
        cluster,
        `${cluster.metadata.namespace}/${cluster.metadata.name}`,
        this.now(),
      );
    } catch (e) {
      if (rc.signal.aborted) throw e;
      rc.log.warn(
        { err: errorMessage(e) },
        "could not stamp the posture warnings; they are said on a later pass",
      );
    }
  }

  private async writeStatus(
    cluster: OpenBaoCluster,
    r: PassResult,
    writes: Writes,
    rc: ReconcileContext,
  ): Promise<void> {
    const labels = { namespace: cluster.metadata.namespace!, name: cluster.metadata.name! };
    const prev = cluster.status;
    const next = nextStatus(cluster, r, this.now());
    if (this.d.config.observeOnly) {
      next.conditions = driftedCondition(
        next.conditions ?? [],
        writes.changes,
        cluster.metadata.generation,
        this.now(),
      );
      const counts = countDrift(writes.changes);
      for (const action of DRIFT_ACTIONS) plannedChanges.set({ ...labels, action }, counts.get(action) ?? 0);
    } else {
      next.conditions = withoutDrifted(next.conditions ?? []);
      for (const action of DRIFT_ACTIONS) plannedChanges.remove({ ...labels, action });
    }
    for (const phase of PHASES) clusterPhase.set({ ...labels, phase }, next.phase === phase ? 1 : 0);
    clusterReplicas.set(labels, r.desiredReplicas);
    clusterReadyReplicas.set(labels, r.readyReplicas);
    clusterInitialized.set(labels, r.initialized ? 1 : 0);
    recordClusterState(labels, prev, { ...next, operationLock: cluster.status?.operationLock }, r.sealed);
    recordRaftPeers(labels, r.raftPeers);
    const written = await this.status.write(cluster, next, {
      signal: rc.signal,
      onChange: () => {
        // Every condition of the workload plane was set from the kind's reasons (nextStatus).
        for (const c of transitions(prev?.conditions, next.conditions ?? []))
          this.d.events.record(cluster, {
            type: eventType(c),
            reason: c.reason as OpenBaoClusterReasonType,
            action: "Reconcile",
            note: `${c.type}: ${c.message}`,
          });
      },
    });
    if (written) rc.log.debug({ phase: next.phase, readyReplicas: next.readyReplicas }, "status written");
  }

  /**
   * deletionPolicy: Retain keeps volumes and the seal key and root token (they carry no owner
   * reference), DeletePVCs removes the data volumes, DeleteAll removes those Secrets as well. The
   * rest goes with the owner through garbage collection.
   */
  private async finalize(cluster: OpenBaoCluster, rc: ReconcileContext): Promise<ReconcileResult> {
    if (!hasFinalizer(cluster, CLUSTER_FINALIZER) || this.d.config.observeOnly) return done();
    const policy = cluster.spec.deletionPolicy ?? "Retain";
    const ns = cluster.metadata.namespace!;
    const names = clusterNames(refOf(cluster));
    if (policy === "DeletePVCs" || policy === "DeleteAll") {
      const claims = await this.d.client.list(PERSISTENT_VOLUME_CLAIM, {
        namespace: ns,
        labelSelector: `openbao.org/cluster=${cluster.metadata.name}`,
      });
      for (const c of claims.items)
        await this.d.client.delete(PERSISTENT_VOLUME_CLAIM, c.metadata.name!, ns).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
    }
    if (policy === "DeleteAll") {
      for (const s of [names.unsealKeySecret, names.rootTokenSecret])
        await this.d.client.delete(SECRET, s, ns).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
    }
    rc.log.info({ deletionPolicy: policy }, "openbao cluster deleted; finalizer removed");
    await removeFinalizer(this.d.client, OPENBAOCLUSTER, cluster, CLUSTER_FINALIZER, rc.signal);
    forgetClusterMetrics(ns, cluster.metadata.name!);
    forgetCertificateMetrics(ns, cluster.metadata.name!);
    this.status.forget(`${ns}/${cluster.metadata.name}`);
    return done();
  }
}

/** "https://demo-1.demo.ns.svc:8200" → "demo-1". */
export function leaderPod(address: string): string {
  if (!address) return "";
  try {
    return new URL(address).hostname.split(".")[0] ?? "";
  } catch {
    return "";
  }
}
