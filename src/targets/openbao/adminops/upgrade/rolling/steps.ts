/**
 * The rolling upgrade's steps that move it on (wait for a pod, record it, step its leader down,
 * lower the partition), each one pass's work as planned by plan.ts. The manager (manager.ts) decides
 * which runs and owns the failure policy they call into.
 */
import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../../../apis/openbaocluster-names.js";
import { POD } from "../../../../../runtime/builtin-types.js";
import {
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
} from "../../../../../runtime/controller.js";
import { ApiError, errorMessage } from "../../../../../runtime/errors.js";
import { AT_ONCE_MS } from "../../../../../runtime/stages.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { refOf } from "../../../cluster-ref.js";
import { commitBeforeRelease, planeTarget } from "../../../opslifecycle/index.js";
import { UpgradeReason } from "../core/condition.js";
import { upgradeLock } from "../core/lock.js";
import {
  endRollingProgress,
  showRollingProgress,
  UpgradeStatusValue,
  upgradeDuration,
  upgradePodDuration,
  upgradeStatus,
  upgradeStepDownFailures,
  upgradeStepDowns,
  upgradeSuccessTotal,
} from "../core/metrics.js";
import { STEP_DOWN_POLL_MS, voterClient } from "../core/observe.js";
import { stamp, type UpgradeStatus, writeUpgrade } from "../core/status.js";
import { upgradeToken } from "../core/token.js";
import { type RollingCore, RollingEvent, STRATEGY, type StepContext, StepError } from "./core.js";
import type { RollingStep } from "./plan.js";
import { heldPartition } from "./plan.js";
import { progress, withoutLastError, withoutWait } from "./record.js";

export async function waitFor(
  m: RollingCore,
  at: StepContext,
  step: Extract<RollingStep, { kind: "wait" }>,
): Promise<ReconcileResult> {
  const { cluster, u, obs, now, P, target, ref, rc } = at;
  const what = `${P}/${step.ordinal ?? "-"}`;
  const began = u.waitingOn === what && u.waitingSince ? Date.parse(u.waitingSince) : Number.NaN;
  const since = Number.isFinite(began) ? began : now.getTime();
  // A new wait is recorded once, so its timeout holds across restarts of the operator.
  if (!Number.isFinite(began))
    await writeUpgrade(
      planeTarget(rc, m.d.client),
      ref,
      (cur) =>
        cur && cur.targetVersion === target
          ? { upgrade: { ...cur, waitingOn: what, waitingSince: stamp(now) } }
          : undefined,
      rc.signal,
    );
  if (now.getTime() - since > m.o.waitTimeoutMs)
    return m.fail(
      cluster,
      R.UpgradeFailed,
      `${step.message} for more than ${Math.round(m.o.waitTimeoutMs / 60_000)} minutes`,
      rc,
    );
  await m.condition(
    cluster,
    "True",
    UpgradeReason.InProgress,
    `${progress(u, obs.replicas)}: ${step.message}`,
    rc,
  );
  return requeueAfter(m.o.waitPollMs);
}

export async function completePod(
  m: RollingCore,
  at: StepContext,
  step: Extract<RollingStep, { kind: "complete-pod" }>,
): Promise<ReconcileResult> {
  const { cluster, obs, target, ref, rc } = at;
  const w = await writeUpgrade(
    planeTarget(rc, m.d.client),
    ref,
    (cur) =>
      cur && cur.targetVersion === target && heldPartition(cur, obs.replicas) === step.ordinal
        ? {
            upgrade: {
              ...withoutWait(withoutLastError(cur)),
              completedPods: [...new Set([...(cur.completedPods ?? []), step.ordinal])].sort((a, b) => b - a),
            },
          }
        : undefined,
    rc.signal,
  );
  const labels = { namespace: ref.namespace, name: ref.name };
  const started = m.replacing.get(at.key);
  if (w.wrote && started?.ordinal === step.ordinal) {
    upgradePodDuration.observe(
      { ...labels, pod: obs.voters[step.ordinal]!.name },
      Math.max(0, (m.d.now().getTime() - started.since) / 1000),
    );
    m.replacing.delete(at.key);
  }
  if (w.wrote)
    m.d.events.record(cluster, {
      type: "Normal",
      reason: RollingEvent.PodUpgraded,
      action: "Upgrade",
      note: `pod ${obs.voters[step.ordinal]!.name} runs ${target}, is Ready and unsealed; Raft is healthy`,
    });
  return requeueAfter(AT_ONCE_MS);
}

export async function stepDown(
  m: RollingCore,
  at: StepContext,
  step: Extract<RollingStep, { kind: "step-down" }>,
): Promise<ReconcileResult> {
  const { cluster, u, obs, now, target, ref, rc } = at;
  const count = u.stepDownOrdinal === step.ordinal ? (u.stepDowns ?? 0) + 1 : 1;
  if (count > m.o.maxStepDowns)
    return m.fail(
      cluster,
      R.StepDownTimeout,
      `pod ${obs.voters[step.ordinal]!.name} is still the Raft leader after ${m.o.maxStepDowns} step-downs`,
      rc,
    );
  const token = (await upgradeToken(m.d.client, m.d.access, cluster, m.d.now, rc.signal))!;
  const labels = { namespace: ref.namespace, name: ref.name };
  upgradeStepDowns.inc(labels);
  try {
    const bao = await voterClient(m.d.client, m.d.access, cluster, step.ordinal);
    await bao.stepDown(token, rc.signal);
  } catch (e) {
    rc.signal.throwIfAborted();
    upgradeStepDownFailures.inc(labels);
    throw new StepError(
      R.StepDownFailed,
      `step-down of ${obs.voters[step.ordinal]!.name}: ${errorMessage(e)}`,
    );
  }
  await writeUpgrade(
    planeTarget(rc, m.d.client),
    ref,
    (cur) =>
      cur && cur.targetVersion === target
        ? {
            upgrade: {
              ...withoutWait(cur),
              lastStepDownTime: stamp(now),
              stepDownOrdinal: step.ordinal,
              stepDowns: count,
            },
          }
        : undefined,
    rc.signal,
  );
  m.d.events.record(cluster, {
    type: "Normal",
    reason: RollingEvent.StepDown,
    action: "Upgrade",
    note: `asked the leader ${obs.voters[step.ordinal]!.name} to step down before its pod is replaced`,
  });
  await m.condition(
    cluster,
    "True",
    UpgradeReason.InProgress,
    `${progress(u, obs.replicas)}: leader ${obs.voters[step.ordinal]!.name} stepping down`,
    rc,
  );
  return requeueAfter(STEP_DOWN_POLL_MS);
}

export async function lowerPartition(
  m: RollingCore,
  at: StepContext,
  step: Extract<RollingStep, { kind: "lower-partition" }>,
): Promise<ReconcileResult> {
  const { cluster, u, obs, P, target, ref, rc } = at;
  const w = await writeUpgrade(
    planeTarget(rc, m.d.client),
    ref,
    (cur) =>
      cur && cur.targetVersion === target && heldPartition(cur, obs.replicas) === P
        ? { upgrade: { ...withoutWait(withoutLastError(cur)), currentPartition: step.to } }
        : undefined,
    rc.signal,
  );
  if (w.wrote) {
    m.replacing.set(at.key, { ordinal: step.to, since: m.d.now().getTime() });
    showRollingProgress(
      { namespace: ref.namespace, name: ref.name },
      { completed: (u.completedPods ?? []).length, total: obs.replicas, partition: step.to },
    );
  }
  if (w.wrote)
    m.d.events.record(cluster, {
      type: "Normal",
      reason: RollingEvent.PartitionLowered,
      action: "Upgrade",
      note: `partition ${P} → ${step.to}: pod ${obs.voters[step.to]!.name} is replaced with ${target}`,
    });
  await m.condition(
    cluster,
    "True",
    UpgradeReason.InProgress,
    `${progress({ ...u, currentPartition: step.to }, obs.replicas)}: replacing pod ${obs.voters[step.to]!.name}`,
    rc,
  );
  return requeueAfter(m.o.waitPollMs);
}

/**
 * A pod of a given-up target that cannot start (plan.ts's abandonedAndStuck) is deleted once: the
 * StatefulSet makes it again from its ordinal's revision. Deleting by UID, so a pod already made
 * again under the same name is never the one deleted.
 */
export async function replaceStuckPod(
  m: RollingCore,
  at: StepContext,
  step: Extract<RollingStep, { kind: "replace-stuck-pod" }>,
): Promise<ReconcileResult> {
  const { cluster, obs, ref } = at;
  const v = obs.voters[step.ordinal]!;
  const pod = await m.d.client.getOrUndefined<KubeObject>(POD, v.name, ref.namespace);
  if (pod?.metadata.uid && !pod.metadata.deletionTimestamp) {
    await m.d.client
      .delete(POD, v.name, ref.namespace, { preconditions: { uid: pod.metadata.uid } })
      .catch((e: unknown) => {
        // Gone or made again meanwhile: the next pass observes what is there now.
        if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) throw e;
      });
    m.d.events.record(cluster, {
      type: "Warning",
      reason: RollingEvent.StuckPodDeleted,
      action: "Upgrade",
      note: `pod ${v.name} was made for a target given up since (revision ${v.revision}) and cannot start: deleted, so the StatefulSet makes it again from revision ${step.ordinal >= at.P ? obs.updateRevision : obs.currentRevision}`,
    });
  }
  return requeueAfter(m.o.waitPollMs);
}

/** Every pod runs the target: the upgrade is recorded done and its lock released. */
export async function finalize(
  m: RollingCore,
  cluster: OpenBaoCluster,
  u: UpgradeStatus,
  rc: ReconcileContext,
): Promise<ReconcileResult> {
  const ref = refOf(cluster);
  const target = u.targetVersion ?? "";
  const w = await writeUpgrade(
    planeTarget(rc, m.d.client),
    ref,
    (cur) => (cur && cur.targetVersion === target && !cur.failure ? { upgrade: null } : undefined),
    rc.signal,
  );
  const labels = { namespace: ref.namespace, name: ref.name, strategy: STRATEGY };
  const now = m.d.now();
  const started = u.startedAt ? Date.parse(u.startedAt) : Number.NaN;
  const seconds = Number.isFinite(started) ? Math.max(0, (now.getTime() - started) / 1000) : undefined;
  if (w.wrote) {
    upgradeSuccessTotal.inc(labels);
    if (seconds !== undefined) upgradeDuration.observe(labels, seconds);
  }
  await m.condition(
    cluster,
    "False",
    UpgradeReason.Complete,
    `upgraded from ${u.fromVersion} to ${target}${seconds !== undefined ? ` in ${Math.round(seconds)}s` : ""}`,
    rc,
  );
  await commitBeforeRelease(rc);
  await m.d.locks.release(ref, upgradeLock(ref.name, u.fromVersion ?? ""), rc.signal);
  upgradeStatus.set({ namespace: ref.namespace, name: ref.name }, UpgradeStatusValue.Succeeded);
  endRollingProgress({ namespace: ref.namespace, name: ref.name }, { total: cluster.spec.replicas ?? 3 });
  m.forget(`${ref.namespace}/${ref.name}`);
  return requeueAfter(AT_ONCE_MS);
}
