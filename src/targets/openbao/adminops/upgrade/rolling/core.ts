/**
 * What the rolling upgrade's manager (manager.ts) and its steps (steps.ts) share: the options, the
 * dependencies, the step's context and the part of the manager the steps call.
 */
import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../../apis/openbaocluster-names.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import type { ReconcileContext, ReconcileResult } from "../../../../../runtime/controller.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import type { refOf } from "../../../cluster-ref.js";
import type { OperationLockStore } from "../../../opslifecycle/index.js";
import type { BaoAccess, observeCluster } from "../core/observe.js";
import type { UpgradeStatus } from "../core/status.js";

export const STRATEGY = "RollingUpdate";

export const RollingEvent = {
  StepDown: R.LeaderSteppedDown,
  PodUpgraded: R.UpgradePodReplaced,
  PartitionLowered: R.UpgradePodReplacing,
  StuckPodDeleted: R.UpgradeStuckPodDeleted,
  Retargeted: R.UpgradeRetargeted,
  RetryAccepted: R.UpgradeRetryAccepted,
} as const;

export interface RollingOptions {
  /** A replaced pod may take this long to come back before the upgrade fails (default 15 minutes). */
  waitTimeoutMs?: number;
  /** Transient errors in a row before the upgrade fails (default 5). */
  maxAttempts?: number;
  /** After a step-down, how long to wait for another leader before asking again (default 20 s). */
  stepDownSettleMs?: number;
  /** Step-downs of one pod that did not move leadership before StepDownTimeout (default 3). */
  maxStepDowns?: number;
  /**
   * Requeue while waiting (default 5 s). Pod and StatefulSet changes wake the pass sooner; what they
   * do not show (the replacement unsealed, Raft healthy: OpenBao's own state) has no watch: polled.
   */
  waitPollMs?: number;
}

export interface RollingDeps {
  client: KubeClient;
  events: EventRecorder;
  locks: OperationLockStore;
  access: BaoAccess;
  now: () => Date;
  options?: RollingOptions;
}

export class StepError extends Error {
  constructor(
    readonly reason: OpenBaoClusterReasonType,
    message: string,
  ) {
    super(message);
  }
}

/** The manager as its steps see it. */
export interface RollingCore {
  readonly d: RollingDeps;
  readonly o: Required<RollingOptions>;
  /** When the partition was lowered to each cluster's pod being replaced (for a metric only). */
  readonly replacing: Map<string, { ordinal: number; since: number }>;
  /** Forgets what the metric kept of a cluster's roll. */
  forget(key: string): void;
  fail(
    cluster: OpenBaoCluster,
    reason: string,
    message: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult>;
  condition(
    cluster: OpenBaoCluster,
    status: "True" | "False",
    reason: OpenBaoClusterReasonType,
    message: string,
    rc: ReconcileContext,
  ): Promise<void>;
}

/** What one step of the roll decided on: the cluster as observed, and when. */
export interface StepContext {
  cluster: OpenBaoCluster;
  u: UpgradeStatus;
  key: string;
  obs: Awaited<ReturnType<typeof observeCluster>>;
  now: Date;
  /** The partition held when the step was planned. */
  P: number;
  target: string;
  ref: ReturnType<typeof refOf>;
  rc: ReconcileContext;
}
