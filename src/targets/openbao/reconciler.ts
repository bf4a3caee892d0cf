import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../apis/openbaocluster.js";
import type { KubeClient } from "../../runtime/client.js";
import { done, type ReconcileContext, type ReconcileResult, requeueAfter } from "../../runtime/controller.js";
import { errorMessage, isNotFound } from "../../runtime/errors.js";
import type { EventRecorder } from "../../runtime/events.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../runtime/finalizers.js";
import type { Informer } from "../../runtime/informer.js";
import type { Logger } from "../../runtime/log.js";
import { type KubeObject, type ResourceType, splitKey } from "../../runtime/types.js";
import { BaoClient, type BaoEndpoint } from "./baoclient/client.js";
import { OPENBAOCLUSTER, refOf } from "./cluster-ref.js";
import type { OpenBaoTargetConfig } from "./config.js";
import { API_PORT, CLUSTER_FINALIZER, Component, clusterNames, podHost, podName } from "./identity.js";
import {
  clusterInitialized,
  clusterPhase,
  clusterReadyReplicas,
  clusterReplicas,
  forgetClusterMetrics,
  PHASES,
  raftPeersRemoved,
  reconcileDuration,
  reconcileErrors,
} from "./metrics.js";
import { WORKLOAD_FIELD_MANAGER } from "./opslifecycle/planes.js";
import type { ServiceContext, WorkloadServices } from "./services.js";
import {
  type Blocked,
  eventType,
  nextStatus,
  type PassResult,
  statusChanged,
  transitions,
} from "./status.js";
import { applyWorkloadStatus } from "./status-apply.js";
import { unsupportedFields } from "./unsupported.js";
import { checkClusterSpec } from "./validate/cluster.js";
import { reconcileAutopilot } from "./workload/autopilot/autopilot.js";
import { ROOT_TOKEN_KEY, reconcileInit, selfInitEnabled } from "./workload/init/init.js";
import {
  buildConfigMap,
  buildPodDisruptionBudget,
  buildSelfInitConfigMap,
  buildStatefulSet,
  CONFIG_KEY,
  PATHS,
  SELF_INIT_KEY,
  tlsEnabled,
  tlsSecretName,
  tlsSecretsMounted,
  UNSEAL_KEY_FILE,
} from "./workload/statefulsets/build.js";
import { rolloutHash } from "./workload/statefulsets/hash.js";
import {
  applyOwned,
  cached,
  ensureUnsealKey,
  SECRET,
  secretValue,
  Writes,
} from "./workload/statefulsets/reconcile.js";
import { voterIntent } from "./workload/statefulsets/scale.js";
import { checkStorage, liveClaim } from "./workload/storage/storage.js";

export const FIELD_MANAGER = WORKLOAD_FIELD_MANAGER;

/** Re-exported: the type lives in cluster-ref.ts so the lock and restore code need not load this file. */
export { OPENBAOCLUSTER };
export const STATEFULSET: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "StatefulSet",
  plural: "statefulsets",
  namespaced: true,
};
export const PDB: ResourceType = {
  group: "policy",
  version: "v1",
  kind: "PodDisruptionBudget",
  plural: "poddisruptionbudgets",
  namespaced: true,
};
export const PVC: ResourceType = {
  group: "",
  version: "v1",
  kind: "PersistentVolumeClaim",
  plural: "persistentvolumeclaims",
  namespaced: true,
};

export interface ReconcilerDeps {
  client: KubeClient;
  events: EventRecorder;
  log: Logger;
  config: OpenBaoTargetConfig;
  services: WorkloadServices;
  clusters: Informer<OpenBaoCluster>;
  statefulSets: Informer<KubeObject>;
  configMaps: Informer<KubeObject>;
  pdbs: Informer<KubeObject>;
  now?: () => Date;
  /** Test seam: how a pod's OpenBao is reached. */
  baoClient?: (ep: BaoEndpoint) => BaoClient;
}

interface StatefulSetStatus {
  replicas?: number;
  readyReplicas?: number;
}

/**
 * One OpenBaoCluster pass, in the document's order: certificates → infrastructure (validate, safe
 * voter intent, config, networking, identity, workloads) → storage → initialization (while
 * uninitialized) → Autopilot (after). The first step that is not ready stops the later ones and its
 * reason lands in status. Unchanged objects are not written (applyIfChanged on cached objects with
 * managedFields), and the status is written only when it changes.
 */
export class OpenBaoClusterReconciler {
  private readonly now: () => Date;
  /** Last status written per key: the informer may still hold the older copy on the next pass. */
  private readonly written = new Map<string, OpenBaoClusterStatus>();

  constructor(private readonly d: ReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
  }

  async reconcile(key: string, rc: ReconcileContext): Promise<ReconcileResult> {
    const cluster = this.d.clusters.get(key);
    const { namespace = "", name } = splitKey(key);
    if (!cluster) {
      forgetClusterMetrics(namespace, name);
      this.written.delete(key);
      return done();
    }
    const started = performance.now();
    try {
      return await this.pass(cluster, rc);
    } finally {
      reconcileDuration.observe({ namespace, name }, (performance.now() - started) / 1000);
    }
  }

  private context(cluster: OpenBaoCluster, rc: ReconcileContext): ServiceContext {
    return {
      client: this.d.client,
      owner: cluster,
      fieldManager: FIELD_MANAGER,
      log: rc.log,
      events: this.d.events,
      now: this.now,
      signal: rc.signal,
    };
  }

  private async pass(input: OpenBaoCluster, rc: ReconcileContext): Promise<ReconcileResult> {
    let cluster = input;
    const observeOnly = this.d.config.observeOnly;
    if (cluster.metadata.deletionTimestamp) return this.finalize(cluster, rc);
    if (!observeOnly && !hasFinalizer(cluster, CLUSTER_FINALIZER))
      cluster = await addFinalizer(this.d.client, OPENBAOCLUSTER, cluster, CLUSTER_FINALIZER, rc.signal);

    const writes = new Writes(observeOnly);
    const ctx = this.context(cluster, rc);
    const status = cluster.status ?? {};
    const result: PassResult = {
      initialized: status.initialized === true,
      selfInitialized: status.selfInitialized,
      desiredReplicas: cluster.spec.replicas ?? 3,
      readyReplicas: 0,
    };
    let step = "validate" as Blocked["step"];
    if (cluster.spec.paused) {
      result.paused = true;
    } else {
      try {
        result.blocked = await this.steps(cluster, ctx, writes, result, (s) => {
          step = s;
        });
      } catch (e) {
        if (rc.signal.aborted) throw e;
        reconcileErrors.inc({ namespace: cluster.metadata.namespace!, name: cluster.metadata.name!, step });
        rc.log.warn({ step, err: errorMessage(e) }, "openbao cluster step failed");
        result.blocked = {
          step,
          reason: step === "initialization" ? "InitializationFailed" : "ReconcileError",
          message: errorMessage(e),
          failed: true,
        };
      }
    }
    await this.observe(cluster, result, rc);
    if (writes.applied.length > 0)
      rc.log.info({ writes: writes.applied, observeOnly }, observeOnly ? "would write" : "applied");
    await this.writeStatus(cluster, result, writes, rc);

    const settled = !result.blocked && result.initialized && result.readyReplicas >= result.desiredReplicas;
    return requeueAfter(settled || result.paused ? this.d.config.resyncMs : this.d.config.pollMs);
  }

  /** Runs the ordered steps; returns where it stopped, if it stopped. */
  private async steps(
    cluster: OpenBaoCluster,
    ctx: ServiceContext,
    writes: Writes,
    result: PassResult,
    at: (s: Blocked["step"]) => void,
  ): Promise<Blocked | undefined> {
    const svc = this.d.services;
    const ns = cluster.metadata.namespace!;
    const names = clusterNames(refOf(cluster));

    // ---- validate: what the schema cannot say (tag vs version, TLS and seal settings that belong
    // together, self-init paths), each problem naming its field; nothing is written for a bad spec.
    const problems = checkClusterSpec(cluster.metadata.name, cluster.spec);
    if (problems.length > 0)
      return {
        step: "validate",
        reason: "InvalidSpec",
        message: problems.map((p) => `${p.field}: ${p.message}`).join("; "),
        failed: true,
      };
    result.unsupported = unsupportedFields(cluster.spec);

    // ---- certificates
    at("certificates");
    let certHash: string | undefined;
    if (tlsEnabled(cluster)) {
      const tls = await svc.certificates(ctx, cluster);
      result.tls = tls;
      certHash = tls.activeCertHash;
      if (!tls.ready)
        return { step: "certificates", reason: tls.reason, message: tls.message, failed: false };
    }

    // ---- infrastructure
    at("infrastructure");
    const liveSts = cached(this.d.statefulSets, ns, names.voterStatefulSet);
    const liveReplicas = liveSts ? ((liveSts["spec"] as { replicas?: number }).replicas ?? 1) : undefined;
    const specReplicas = cluster.spec.replicas ?? 3;
    const podNameOf = (i: number) => podName(refOf(cluster), i);
    let intent = voterIntent({
      initialized: result.initialized,
      specReplicas,
      liveReplicas,
      podName: podNameOf,
    });
    if (result.initialized && liveReplicas !== undefined && specReplicas < liveReplicas) {
      // A shrink is asked for: the departing pods leave Raft first.
      const peers = await this.raftPeers(cluster, ctx).catch((e: unknown) => {
        ctx.log.warn({ err: errorMessage(e) }, "could not read the Raft peers");
        return undefined;
      });
      intent = voterIntent({
        initialized: true,
        specReplicas,
        liveReplicas,
        raftPeers: peers?.ids,
        podName: podNameOf,
      });
      if (intent.removePeers.length > 0 && peers) {
        // Membership changes go to the active node (a standby answers 307). When the active node
        // is itself leaving, it steps down first and the removal waits for the next pass.
        const leader = peers.leader;
        if (!leader || !peers.ids.includes(leader))
          return {
            step: "infrastructure",
            reason: "LeaderUnknown",
            message: "scale-down waits for an active node",
            failed: false,
          };
        if (intent.removePeers.includes(leader)) {
          if (!writes.dryRun) {
            await (await this.baoForPod(cluster, ctx, leader)).stepDown(peers.token, ctx.signal);
            ctx.log.info({ leader }, "asked the departing active node to step down before removing it");
          }
          return {
            step: "infrastructure",
            reason: "StepDownRequested",
            message: `${leader} leads Raft and is leaving: it was asked to step down first`,
            failed: false,
          };
        }
        const active = await this.baoForPod(cluster, ctx, leader);
        for (const id of intent.removePeers) {
          if (writes.dryRun) {
            writes.applied.push(`raft remove-peer ${id}`);
            continue;
          }
          await active.removePeer(peers.token, id, ctx.signal);
          raftPeersRemoved.inc({ namespace: ns, name: cluster.metadata.name! });
          ctx.log.info({ peer: id }, "removed Raft peer before shrinking the voter StatefulSet");
          ctx.events.record(cluster, {
            type: "Normal",
            reason: "RaftPeerRemoved",
            action: "ScaleDown",
            note: `removed Raft peer ${id} before its pod goes`,
          });
        }
        if (!writes.dryRun) {
          const after = await this.raftPeers(cluster, ctx);
          intent = voterIntent({
            initialized: true,
            specReplicas,
            liveReplicas,
            raftPeers: after?.ids,
            podName: podNameOf,
          });
        }
      }
    }

    const configText = svc.renderConfig(cluster, {
      clusterDomain: this.d.config.clusterDomain,
      component: "server",
      // The final voter count from the start: growing from one pod after init then changes no
      // config and rolls no pod.
      peers: Math.max(specReplicas, 1),
      tlsDir: PATHS.tlsDir,
      sealKeyPath: `${PATHS.unsealDir}/${UNSEAL_KEY_FILE}`,
    });
    const configHash = rolloutHash(configText);
    await applyOwned(
      ctx,
      writes,
      buildConfigMap(cluster, configText),
      cached(this.d.configMaps, ns, names.configMap),
    );
    const selfInitText = selfInitEnabled(cluster) ? svc.renderSelfInit(cluster) : "";
    await applyOwned(
      ctx,
      writes,
      buildSelfInitConfigMap(cluster, selfInitText || "# no self-init requests\n", result.initialized),
      cached(this.d.configMaps, ns, names.selfInitConfigMap),
    );

    const net = await svc.networking(ctx, cluster);
    if (!net.ready)
      return { step: "infrastructure", reason: net.reason, message: net.message, failed: false };
    const ident = await svc.identity(ctx, cluster);
    if (!ident.ready)
      return { step: "infrastructure", reason: ident.reason, message: ident.message, failed: false };

    if ((cluster.spec.unseal?.type ?? "static") === "static") await ensureUnsealKey(ctx, writes, cluster);

    const runtime = svc.podRuntime(cluster, {
      configFiles: [`${PATHS.configDir}/${CONFIG_KEY}`, `${PATHS.configDir}/${SELF_INIT_KEY}`],
      tlsSecretName: tlsSecretName(cluster),
    });
    for (const extra of runtime.objects?.(cluster) ?? []) {
      const meta = extra["metadata"] as { name: string };
      await applyOwned(
        ctx,
        writes,
        extra,
        extra["kind"] === "ConfigMap" ? cached(this.d.configMaps, ns, meta.name) : undefined,
      );
    }
    await applyOwned(
      ctx,
      writes,
      buildStatefulSet(cluster, {
        component: Component.Server,
        replicas: intent.replicas,
        configHash,
        certHash,
        clusterDomain: this.d.config.clusterDomain,
        runtime,
        // Claim templates cannot change after creation; growth goes to the claims themselves.
        claim: liveClaim(liveSts),
      }),
      liveSts,
    );
    await applyOwned(
      ctx,
      writes,
      buildPodDisruptionBudget(cluster, Component.Server),
      cached(this.d.pdbs, ns, names.podDisruptionBudget),
    );
    const replicas = await this.readReplicas(cluster, ctx, writes, result, certHash);
    if (replicas) return replicas;
    if (intent.waiting)
      return { step: "infrastructure", reason: "ScaleDownWaiting", message: intent.waiting, failed: false };
    if (intent.removePeers.length > 0 && writes.dryRun)
      return {
        step: "infrastructure",
        reason: "ScaleDownPending",
        message: `would remove Raft peers ${intent.removePeers.join(", ")}`,
        failed: false,
      };

    // ---- storage
    at("storage");
    const storage = await checkStorage(ctx, cluster, liveSts, writes);
    if (storage) return { step: "storage", ...storage };

    // ---- initialization
    if (!result.initialized) {
      at("initialization");
      const init = await reconcileInit({ ctx, writes, bao: (i) => this.bao(cluster, ctx, i) }, cluster);
      if (!init.done)
        return {
          step: "initialization",
          reason: init.reason,
          message: init.message,
          failed: init.failed ?? false,
        };
      result.initialized = true;
      result.selfInitialized = init.selfInitialized;
      if (init.recovered)
        ctx.events.record(cluster, {
          type: "Normal",
          reason: "InitializationRecovered",
          action: "Initialize",
          note: "OpenBao was already initialized by this operator; status recorded, nothing initialized again",
        });
    }

    // ---- Autopilot (first attempt right after init, then whenever the spec differs)
    at("autopilot");
    if (!selfInitEnabled(cluster) && !result.selfInitialized) {
      const token = await secretValue(ctx, ns, names.rootTokenSecret, ROOT_TOKEN_KEY);
      if (token) {
        const bao = await this.bao(cluster, ctx, 0);
        try {
          const changed = await reconcileAutopilot(bao, token, cluster, writes.dryRun, ctx.signal);
          if (changed.length > 0) {
            writes.applied.push(`autopilot ${changed.join(",")}`);
            if (!writes.dryRun)
              ctx.events.record(cluster, {
                type: "Normal",
                reason: "AutopilotConfigured",
                action: "Configure",
                note: `Raft Autopilot settings applied: ${changed.join(", ")}`,
              });
          }
        } catch (e) {
          // Autopilot is retried every pass; it never blocks the workload.
          ctx.log.warn({ err: errorMessage(e) }, "Autopilot configuration not applied yet");
        }
      }
    }
    return undefined;
  }

  /**
   * The read-replica StatefulSet: non-voters that join through the same retry_join list, only
   * once the cluster is initialized. Shrinking removes their Raft peers on the active node first.
   */
  private async readReplicas(
    cluster: OpenBaoCluster,
    ctx: ServiceContext,
    writes: Writes,
    result: PassResult,
    certHash: string | undefined,
  ): Promise<Blocked | undefined> {
    const ns = cluster.metadata.namespace!;
    const names = clusterNames(refOf(cluster));
    const want = result.initialized ? (cluster.spec.readReplicas?.replicas ?? 0) : 0;
    const live = cached(this.d.statefulSets, ns, names.readReplicaStatefulSet);
    if (want === 0 && !live) return undefined;
    const liveReplicas = live ? ((live["spec"] as { replicas?: number }).replicas ?? 0) : undefined;
    const readyReplicas = ((live?.["status"] ?? {}) as StatefulSetStatus).readyReplicas ?? 0;
    result.readReplicas = { desiredReplicas: want, readyReplicas };
    let replicas = want;
    if (liveReplicas !== undefined && want < liveReplicas) {
      const podNameOf = (i: number) => podName(refOf(cluster), i, Component.ReadReplica);
      const peers = await this.raftPeers(cluster, ctx).catch(() => undefined);
      const intent = voterIntent({
        initialized: true,
        specReplicas: want,
        liveReplicas,
        raftPeers: peers?.ids,
        podName: podNameOf,
      });
      replicas = intent.replicas;
      if (intent.removePeers.length > 0 && peers?.leader) {
        const active = await this.baoForPod(cluster, ctx, peers.leader);
        for (const id of intent.removePeers) {
          writes.applied.push(`raft remove-peer ${id}`);
          if (writes.dryRun) continue;
          await active.removePeer(peers.token, id, ctx.signal);
          raftPeersRemoved.inc({ namespace: ns, name: cluster.metadata.name! });
          ctx.log.info({ peer: id }, "removed read-replica Raft peer before shrinking its StatefulSet");
        }
        const after = await this.raftPeers(cluster, ctx).catch(() => undefined);
        replicas = voterIntent({
          initialized: true,
          specReplicas: want,
          liveReplicas,
          raftPeers: after?.ids,
          podName: podNameOf,
        }).replicas;
      }
    }
    const configText = this.d.services.renderConfig(cluster, {
      clusterDomain: this.d.config.clusterDomain,
      component: "read-replica",
      peers: Math.max(cluster.spec.replicas ?? 3, 1),
      tlsDir: PATHS.tlsDir,
      sealKeyPath: `${PATHS.unsealDir}/${UNSEAL_KEY_FILE}`,
    });
    await applyOwned(
      ctx,
      writes,
      buildConfigMap(cluster, configText, Component.ReadReplica),
      cached(this.d.configMaps, ns, names.readReplicaConfigMap),
    );
    const runtime = this.d.services.podRuntime(cluster, {
      configFiles: [`${PATHS.configDir}/${CONFIG_KEY}`],
      tlsSecretName: tlsSecretName(cluster),
    });
    await applyOwned(
      ctx,
      writes,
      buildStatefulSet(cluster, {
        component: Component.ReadReplica,
        replicas,
        configHash: rolloutHash(configText),
        certHash,
        clusterDomain: this.d.config.clusterDomain,
        runtime,
        claim: liveClaim(live),
      }),
      live,
    );
    await applyOwned(
      ctx,
      writes,
      buildPodDisruptionBudget(cluster, Component.ReadReplica),
      cached(this.d.pdbs, ns, names.readReplicaPodDisruptionBudget),
    );
    if (replicas !== want)
      return {
        step: "infrastructure",
        reason: "ScaleDownWaiting",
        message: `read replicas shrink to ${want} once their Raft peers are removed`,
        failed: false,
      };
    return undefined;
  }

  /** Raft peers as the cluster lists them, through pod 0 (forwarded to the leader), with the root token. */
  private async raftPeers(
    cluster: OpenBaoCluster,
    ctx: ServiceContext,
  ): Promise<{ ids: string[]; leader?: string; token: string } | undefined> {
    const names = clusterNames(refOf(cluster));
    const token = await secretValue(ctx, cluster.metadata.namespace!, names.rootTokenSecret, ROOT_TOKEN_KEY);
    if (!token) return undefined;
    // Ask a pod that stays: the departing ones may be gone already.
    const bao = await this.bao(cluster, ctx, 0);
    const servers = await bao.raftServers(token, ctx.signal);
    return { ids: servers.map((s) => s.node_id), leader: servers.find((s) => s.leader)?.node_id, token };
  }

  /** A client for a voter pod named by its node id (the pod name). */
  private async baoForPod(cluster: OpenBaoCluster, ctx: ServiceContext, pod: string): Promise<BaoClient> {
    const prefix = `${clusterNames(refOf(cluster)).voterStatefulSet}-`;
    const ordinal = pod.startsWith(prefix) ? Number(pod.slice(prefix.length)) : Number.NaN;
    if (!Number.isInteger(ordinal) || ordinal < 0)
      throw new Error(`Raft node ${pod} is not a voter pod of this cluster`);
    return this.bao(cluster, ctx, ordinal);
  }

  /** A client for voter pod `ordinal`, trusting the cluster's CA (read from the mounted server Secret). */
  private async bao(cluster: OpenBaoCluster, ctx: ServiceContext, ordinal: number): Promise<BaoClient> {
    const host = podHost(refOf(cluster), ordinal, Component.Server, this.d.config.clusterDomain);
    const tls = tlsEnabled(cluster);
    let caPem: string | undefined;
    if (tlsSecretsMounted(cluster)) {
      const names = clusterNames(refOf(cluster));
      const ns = cluster.metadata.namespace!;
      const server = tlsSecretName(cluster) ?? names.serverSecret;
      caPem =
        (await secretValue(ctx, ns, server, "ca.crt")) ??
        (await secretValue(ctx, ns, cluster.spec.tls?.caSecretName ?? names.caSecret, "ca.crt")) ??
        (await secretValue(ctx, ns, cluster.spec.tls?.caSecretName ?? names.caSecret, "tls.crt"));
      if (!caPem) throw new Error(`no CA certificate yet: Secret ${server} has no ca.crt`);
    }
    const ep: BaoEndpoint = {
      address: `${tls ? "https" : "http"}://${host}:${API_PORT}`,
      caPem,
      timeoutMs: 10_000,
    };
    return this.d.baoClient ? this.d.baoClient(ep) : new BaoClient(ep);
  }

  /** Ready replicas from the StatefulSet; seal state, version and the active node from OpenBao. */
  private async observe(cluster: OpenBaoCluster, result: PassResult, rc: ReconcileContext): Promise<void> {
    const ns = cluster.metadata.namespace!;
    const names = clusterNames(refOf(cluster));
    const sts = cached(this.d.statefulSets, ns, names.voterStatefulSet);
    const st = (sts?.["status"] ?? {}) as StatefulSetStatus;
    result.readyReplicas = st.readyReplicas ?? 0;
    if (!result.initialized || result.readyReplicas === 0) return;
    const ctx = this.context(cluster, rc);
    try {
      const bao = await this.bao(cluster, ctx, 0);
      const health = await bao.health(rc.signal);
      result.sealed = health.sealed;
      if (health.version) result.currentVersion = health.version;
      const leader = await bao.leader(rc.signal);
      result.activeLeader = leaderPod(leader.leaderAddress);
    } catch (e) {
      if (rc.signal.aborted) throw e;
      rc.log.debug({ err: errorMessage(e) }, "could not observe OpenBao through pod 0");
      // Keep what was known; pod 0 may be restarting.
      result.activeLeader = cluster.status?.activeLeader;
      result.currentVersion = cluster.status?.currentVersion;
    }
  }

  private async writeStatus(
    cluster: OpenBaoCluster,
    r: PassResult,
    writes: Writes,
    rc: ReconcileContext,
  ): Promise<void> {
    const key = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
    const labels = { namespace: cluster.metadata.namespace!, name: cluster.metadata.name! };
    const prev = cluster.status;
    const next = nextStatus(cluster, r, this.now());
    if (this.d.config.observeOnly) {
      const drift = writes.applied;
      next.conditions = [
        ...(next.conditions ?? []).filter((c) => c.type !== "Drifted"),
        {
          type: "Drifted",
          status: drift.length ? "True" : "False",
          reason: "ObserveOnly",
          message: drift.length
            ? `a real run would change: ${drift.join(", ")}`
            : "a real run would change nothing",
          observedGeneration: cluster.metadata.generation,
          lastTransitionTime:
            prev?.conditions?.find(
              (c) => c.type === "Drifted" && c.status === (drift.length ? "True" : "False"),
            )?.lastTransitionTime ??
            this.now()
              .toISOString()
              .replace(/\.\d+Z$/, "Z"),
        },
      ];
    }
    for (const phase of PHASES) clusterPhase.set({ ...labels, phase }, next.phase === phase ? 1 : 0);
    clusterReplicas.set(labels, r.desiredReplicas);
    clusterReadyReplicas.set(labels, r.readyReplicas);
    clusterInitialized.set(labels, r.initialized ? 1 : 0);
    if (!statusChanged(prev, next)) return;
    const last = this.written.get(key);
    if (last && !statusChanged(last, next)) return;
    for (const c of transitions(prev?.conditions, next.conditions ?? []))
      this.d.events.record(cluster, {
        type: eventType(c),
        reason: c.reason,
        action: "Reconcile",
        note: `${c.type}: ${c.message}`,
      });
    try {
      await applyWorkloadStatus(this.d.client, cluster, next, rc.signal);
      this.written.set(key, next);
      rc.log.debug({ phase: next.phase, readyReplicas: next.readyReplicas }, "status written");
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
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
      const claims = await this.d.client.list(PVC, {
        namespace: ns,
        labelSelector: `openbao.org/cluster=${cluster.metadata.name}`,
      });
      for (const c of claims.items)
        await this.d.client.delete(PVC, c.metadata.name!, ns).catch((e: unknown) => {
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
    this.written.delete(`${ns}/${cluster.metadata.name}`);
    return done();
  }
}

/** "https://demo-1.demo-internal.ns.svc.cluster.local:8200" → "demo-1". */
export function leaderPod(address: string): string {
  if (!address) return "";
  try {
    return new URL(address).hostname.split(".")[0] ?? "";
  } catch {
    return "";
  }
}
