import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
  OpenBaoLabel,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { PERSISTENT_VOLUME_CLAIM, SECRET } from "../../../runtime/builtin-types.js";
import { type CachedReader, liveReader } from "../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { ReconcileContext, ReconcileResult } from "../../../runtime/controller.js";
import { isConflict, isNotFound } from "../../../runtime/errors.js";
import type { EventRecorder } from "../../../runtime/events.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Logger } from "../../../runtime/log.js";
import { secretValue } from "../../../runtime/secrets.js";
import { type StageStop, wait } from "../../../runtime/stages.js";
import { stageResult } from "../../../runtime/stages-settle.js";
import { type KubeObject, splitKey } from "../../../runtime/types.js";
import { voterClient } from "../adminops/upgrade/core/observe.js";
import type { BaoEndpoint } from "../baoclient/client.js";
import { OPENBAOCLUSTER, refOf } from "../cluster-ref.js";
import { clusterNames, LABEL_CLUSTER } from "../identity.js";
import { applyConcern, changePlane, type InAdminOpsPass, withAdminOpsPass } from "../opslifecycle/index.js";
import { OPENBAORESTORE } from "../restore/types.js";
import { UNSEAL_KEY_FILE } from "../workload/config/unseal-key.js";
import { type CanarySpec, ProbeClient, probePod } from "./canary.js";
import { forgetVerification, restoreTestDuration, showVerification } from "./metrics.js";
import { throwawayClusterName, throwawayRestoreName } from "./names.js";
import { sealKeyCopy, staticSeal, throwawayCluster, throwawayRestore } from "./objects.js";
import { observeRun, setBackupVerified } from "./observe.js";
import {
  enabled,
  intervalSeconds,
  judge,
  type Observed,
  type Outcome,
  type Plan,
  type Probe,
  plan,
  type Run,
  recordOutcome,
} from "./plan.js";

/**
 * The restore test's pass for one source cluster: observe, plan (plan.ts), act. Every action is
 * idempotent and named from the source alone, so a pass repeated after a restart finds what the
 * last one made. The source is only read, and its status.backup / BackupVerified written: no lock,
 * no change to its pods or data.
 */

export interface RestoreTestDeps {
  client: KubeClient;
  reader?: Pick<CachedReader, "get">;
  events: EventRecorder;
  log: Logger;
  clusters: Informer<OpenBaoCluster>;
  restores: Informer<OpenBaoRestore>;
  clusterDomain: string;
  now?: () => Date;
  /** Replaces the probe client (tests). */
  probeClient?: (ep: BaoEndpoint) => ProbeClient;
}

/**
 * While the throwaway's pieces go (the restore, the cluster, its volumes), the next look. Their
 * deletion wakes nothing: the watches follow a throwaway's initialization and a restore's phase,
 * and volumes are not watched at all, so their going is polled.
 */
const CLEANUP_POLL_MS = 3_000;
/**
 * After the throwaway or the restore into it was created, the next look. Their progress wakes the
 * pass (initialized, phase); this is the bound if that event is missed.
 */
const STARTED_POLL_MS = 5_000;
/**
 * A run that cannot start until someone acts (a foreign cluster holds the throwaway's name, the
 * seal key is missing): looked at again at this pace, since neither change wakes the source.
 */
const BLOCKED_POLL_MS = 60_000;
/** Back to planning once nothing is left of a run: the plan says when the next one is due. */
const REPLAN_MS = 1_000;

/** How a restore-test pass ends: done, or a stop the kernel turns into the result (stageResult). */
type DrillEnd = { kind: "done" } | StageStop<OpenBaoClusterReasonType>;
const DONE: DrillEnd = { kind: "done" };
/** The stop a plan's computed wait is (a poll bounded by the run's deadline or next window). */
const planned = (why: string, ms: number | undefined): DrillEnd =>
  ms ? wait(R.RestoreTestRunning, why, { afterMs: ms }) : DONE;

export class RestoreTestReconciler {
  private readonly now: () => Date;

  constructor(private readonly d: RestoreTestDeps) {
    this.now = d.now ?? (() => new Date());
  }

  /** One pass; its status changes are staged in one AdminOps pass and committed once. */
  async reconcile(key: string, rc: ReconcileContext): Promise<ReconcileResult> {
    const { namespace = "", name } = splitKey(key);
    return withAdminOpsPass(this.d.client, { namespace, name }, rc, async (pass) =>
      // Every wait names its delay; the default is never used.
      stageResult(await this.pass(key, pass), { waitAfterMs: CLEANUP_POLL_MS }),
    );
  }

  private async pass(key: string, rc: InAdminOpsPass): Promise<DrillEnd> {
    const source = this.d.clusters.get(key);
    if (!source) {
      const [ns, name] = key.split("/");
      forgetVerification(ns ?? "", name ?? "");
      return DONE;
    }
    // A throwaway is tested by nobody.
    if (source.metadata.labels?.[OpenBaoLabel.RestoreTestOf]) return DONE;
    const spec = enabled(source);
    let interval: number | undefined;
    try {
      interval = spec ? intervalSeconds(spec, source.spec.backup?.schedule, this.now()) : undefined;
    } catch {
      interval = undefined;
    }
    showVerification(source, interval);

    const obs = await observeRun(this.d, source, this.now(), rc);
    if (obs.foreign) {
      // Never touched, nor its volumes or Secrets (they carry the same cluster label): no run can
      // start while the name is taken, and the condition says so.
      if (!spec) return DONE;
      const message = `a cluster named ${obs.foreign} exists and is not this cluster's restore test; rename or delete it`;
      await setBackupVerified(this.now(), source, "False", R.RestoreTestInvalid, message, rc);
      return wait(R.RestoreTestInvalid, message, { afterMs: BLOCKED_POLL_MS, by: "stalled" });
    }
    const p = plan(obs);
    return this.act(source, obs, p, rc);
  }

  private async act(source: OpenBaoCluster, obs: Observed, p: Plan, rc: InAdminOpsPass): Promise<DrillEnd> {
    const ns = source.metadata.namespace!;
    const throwaway = throwawayClusterName(source.metadata.name!);
    switch (p.kind) {
      case "idle":
        if (p.invalid)
          await setBackupVerified(this.now(), source, "False", R.RestoreTestInvalid, p.invalid.message, rc);
        return planned("the next restore test is not due", p.requeueMs);
      case "wait":
        rc.log.debug({ why: p.why }, "restore test waits");
        return planned(p.why, p.requeueMs);
      case "start":
        return this.start(source, { ...p.run, startedAt: obs.now }, rc);
      case "create-restore": {
        const t = await this.d.client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, throwaway, ns);
        if (!t)
          return wait(R.RestoreTestRunning, "the throwaway cluster is not readable yet", {
            afterMs: CLEANUP_POLL_MS,
          });
        await this.create(OPENBAORESTORE, throwawayRestore(source, t, p.run));
        rc.log.info(
          { key: p.run.key, cluster: throwaway },
          "restore test: restoring the backup into the throwaway",
        );
        return wait(R.RestoreTestRunning, `restoring ${p.run.key} into ${throwaway}`, {
          afterMs: STARTED_POLL_MS,
        });
      }
      case "probe": {
        const probe = await this.probe(source, rc);
        const next = judge(p.run, probe, obs.now, obs.restore?.completedAt);
        if (next.kind === "record") return this.record(source, next.outcome, p.run, rc);
        if (next.kind === "wait") return planned(next.why, next.requeueMs);
        return DONE;
      }
      case "record":
        return this.record(source, p.outcome, obs.throwaway?.run, rc);
      case "cleanup":
        return this.cleanup(source, rc);
    }
  }

  private async start(source: OpenBaoCluster, run: Run, rc: InAdminOpsPass): Promise<DrillEnd> {
    const ns = source.metadata.namespace!;
    if (staticSeal(source)) {
      // The source's key, so the throwaway opens the snapshot with the seal that sealed it.
      // The base64 text as stored: the key is raw bytes, which no decoding to a string keeps.
      const stored = (await (this.d.reader ?? liveReader(this.d.client)).get(
        SECRET,
        clusterNames(refOf(source)).unsealKeySecret,
        ns,
      )) as { data?: Record<string, string> } | undefined;
      const key = stored?.data?.[UNSEAL_KEY_FILE];
      if (!key) {
        const message = `Secret ${clusterNames(refOf(source)).unsealKeySecret} has no key "${UNSEAL_KEY_FILE}" to give the throwaway cluster the source's seal`;
        await setBackupVerified(this.now(), source, "False", R.RestoreTestInvalid, message, rc);
        return wait(R.RestoreTestInvalid, message, { afterMs: BLOCKED_POLL_MS, by: "stalled" });
      }
      await this.create(SECRET, sealKeyCopy(source, key));
    }
    await this.create(OPENBAOCLUSTER, throwawayCluster(source, run));
    const first = !source.status?.conditions?.some((c) => c.type === C.BackupVerified);
    const msg = `restoring ${run.key} into throwaway cluster ${throwawayClusterName(source.metadata.name!)}`;
    if (first) await setBackupVerified(this.now(), source, "Unknown", R.RestoreTestRunning, msg, rc);
    this.d.events.record(source, {
      type: "Normal",
      reason: R.RestoreTestRunning,
      action: "RestoreTest",
      note: msg,
    });
    rc.log.info({ key: run.key, window: run.window }, "restore test started");
    return wait(R.RestoreTestRunning, msg, { afterMs: STARTED_POLL_MS });
  }

  private async probe(source: OpenBaoCluster, rc: ReconcileContext): Promise<Probe> {
    const ns = source.metadata.namespace!;
    const t = await this.d.client.getOrUndefined<OpenBaoCluster>(
      OPENBAOCLUSTER,
      throwawayClusterName(source.metadata.name!),
      ns,
    );
    if (!t) return { kind: "sealed", message: "the throwaway cluster is gone" };
    const spec = enabled(source);
    let canary: CanarySpec | undefined;
    if (spec?.canary) {
      const secret = spec.canary.tokenSecretRef?.name ?? source.spec.backup?.tokenSecretRef?.name;
      const token = secret
        ? await secretValue(this.d.reader ?? liveReader(this.d.client), ns, secret, "token")
        : undefined;
      if (!token)
        return {
          kind: "canary-missing",
          message: secret
            ? `Secret ${secret} has no token to read ${spec.canary.path} with`
            : "spec.backup.restoreTest.canary.tokenSecretRef is unset and so is spec.backup.tokenSecretRef",
        };
      canary = { path: spec.canary.path, token };
    }
    let client: ProbeClient;
    try {
      client = (await voterClient(
        this.d.client,
        {
          clusterDomain: this.d.clusterDomain,
          ...(this.d.reader ? { reader: this.d.reader } : {}),
          baoClient: (ep) => (this.d.probeClient ? this.d.probeClient(ep) : new ProbeClient(ep)),
        },
        t,
        0,
      )) as ProbeClient;
    } catch (e) {
      return {
        kind: "sealed",
        message: `no client for the restored pod: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
    return probePod(client, canary, rc.signal);
  }

  private async record(
    source: OpenBaoCluster,
    outcome: Outcome,
    run: Run | undefined,
    rc: InAdminOpsPass,
  ): Promise<DrillEnd> {
    const now = this.now();
    await changePlane(rc.adminOps, refOf(source), (plane) =>
      applyConcern(plane, "backup", recordOutcome(plane.backup ?? {}, outcome, now)),
    );
    const message = outcome.passed
      ? `${outcome.key} restored into a throwaway cluster, unsealed${enabled(source)?.canary ? " and its canary read back" : ""}`
      : outcome.message;
    const reason = outcome.passed ? R.BackupVerified : outcome.reason;
    await setBackupVerified(this.now(), source, outcome.passed ? "True" : "False", reason, message, rc);
    // The outcome is written before it is told and before the throwaway goes: a write that fails
    // tells nothing, and a crash after it still finds the outcome recorded.
    await rc.adminOps.commit(rc.signal);
    this.d.events.record(source, {
      type: outcome.passed ? "Normal" : "Warning",
      reason,
      action: "RestoreTest",
      note: message,
    });
    if (run)
      restoreTestDuration.observe(
        {
          namespace: source.metadata.namespace!,
          name: source.metadata.name!,
          outcome: outcome.passed ? "passed" : "failed",
        },
        (now.getTime() - run.startedAt.getTime()) / 1000,
      );
    rc.log.info({ key: outcome.key, passed: outcome.passed, reason }, "restore test recorded");
    return this.cleanup(source, rc);
  }

  /** Restore first (its finalizer releases the throwaway's lock), then the throwaway, then its volumes. */
  private async cleanup(source: OpenBaoCluster, rc: InAdminOpsPass): Promise<DrillEnd> {
    const ns = source.metadata.namespace!;
    const name = throwawayClusterName(source.metadata.name!);
    const mine = (o: KubeObject | undefined) =>
      o?.metadata.labels?.[OpenBaoLabel.RestoreTestOf] === source.metadata.name;
    const r = await this.d.client.getOrUndefined<KubeObject>(OPENBAORESTORE, throwawayRestoreName(name), ns);
    if (r && mine(r)) {
      if (!r.metadata.deletionTimestamp)
        await this.gone(this.d.client.delete(OPENBAORESTORE, r.metadata.name!, ns));
      return wait(R.RestoreTestRunning, "deleting the restore into the throwaway", {
        afterMs: CLEANUP_POLL_MS,
      });
    }
    const t = await this.d.client.getOrUndefined<KubeObject>(OPENBAOCLUSTER, name, ns);
    // Someone else's cluster of that name: its volumes and Secrets are its own.
    if (t && !mine(t)) return DONE;
    if (t) {
      if (!t.metadata.deletionTimestamp) {
        await this.gone(this.d.client.delete(OPENBAOCLUSTER, name, ns));
        rc.log.info({ cluster: name }, "restore test: deleting the throwaway cluster");
      }
      return wait(R.RestoreTestRunning, `deleting throwaway cluster ${name}`, { afterMs: CLEANUP_POLL_MS });
    }
    // The throwaway's finalizer (deletionPolicy DeleteAll) deletes its volumes and Secrets; these
    // deletes cover a finalizer that did not run (an operator stopped in between).
    await this.gone(this.d.client.delete(SECRET, clusterNames({ name, namespace: ns }).unsealKeySecret, ns));
    await this.gone(this.d.client.delete(SECRET, clusterNames({ name, namespace: ns }).rootTokenSecret, ns));
    const claims = await this.d.client.list(PERSISTENT_VOLUME_CLAIM, {
      namespace: ns,
      labelSelector: `${LABEL_CLUSTER}=${name}`,
    });
    if (claims.items.length) {
      for (const c of claims.items)
        if (!c.metadata.deletionTimestamp)
          await this.gone(this.d.client.delete(PERSISTENT_VOLUME_CLAIM, c.metadata.name!, ns));
      return wait(R.RestoreTestRunning, `deleting the volumes of ${name}`, { afterMs: CLEANUP_POLL_MS });
    }
    rc.log.debug({ cluster: name }, "restore test: nothing left of the throwaway");
    // Back to planning: the next run's time.
    return wait(R.RestoreTestRunning, "nothing is left of the run", { afterMs: REPLAN_MS });
  }

  private async create(type: typeof OPENBAOCLUSTER, obj: KubeObject): Promise<void> {
    try {
      await this.d.client.create(type, obj);
    } catch (e) {
      // A pass before a restart made it: that one stands.
      if (!isConflict(e)) throw e;
    }
  }

  private async gone(p: Promise<unknown>): Promise<void> {
    await p.catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
  }
}
