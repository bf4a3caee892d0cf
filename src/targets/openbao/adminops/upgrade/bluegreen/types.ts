import type {
  BlueGreenPhase,
  OpenBaoClusterSpec,
  OpenBaoClusterStatus,
} from "../../../../../apis/openbaocluster.js";
import type { OpenBaoClusterReasonType } from "../../../../../apis/openbaocluster-names.js";

export type BlueGreenStatus = NonNullable<OpenBaoClusterStatus["blueGreen"]>;
export type BreakGlassStatus = NonNullable<OpenBaoClusterStatus["breakGlass"]>;
export type UpgradeRequestsStatus = NonNullable<OpenBaoClusterStatus["upgradeRequests"]>;
export type BlueGreenSettings = NonNullable<NonNullable<OpenBaoClusterSpec["upgrade"]>["blueGreen"]>;
export type { BlueGreenPhase };

/** What the planner reads from the spec: the version asked for and how blue-green should behave. */
export interface PlanSpec {
  version: string;
  /** Image the spec asks for (spec.image or the default for spec.version). */
  image: string;
  replicas: number;
  settings: BlueGreenSettings | undefined;
  requests: { promote?: string; rollback?: string; retry?: string };
  breakGlassAck?: string;
}

/** What the planner reads from status: the persisted progress it resumes from. */
export interface PlanStatus {
  currentVersion?: string;
  /** Image the serving StatefulSet runs now (what blue is pinned to). */
  currentImage: string;
  blueGreen?: BlueGreenStatus;
  breakGlass?: BreakGlassStatus;
  upgradeRequests?: UpgradeRequestsStatus;
}

/**
 * What the manager observed this pass. `raft` is undefined when Autopilot could not be read (no
 * leader, no token): the planner then waits instead of guessing.
 */
export interface Observed {
  now: Date;
  /** Green pods Ready and unsealed. */
  greenReady: number;
  /** A green pod cannot run: image pull failure, crash loop, or the StatefulSet is refused. */
  greenFailure?: string;
  /**
   * Green pods whose OpenBao says it is sealed (its service-registration label): such a server
   * drops out of Raft, so green stops catching up until it is unsealed, which the wait must name.
   */
  greenSealed?: string[];
  /** Blue voters that are Ready and unsealed (break-glass is judged on them). */
  blueReady: number;
  raft?: RaftView;
  /** This attempt's pre-promotion hook Job, read while green syncs (when a hook is set). */
  hook?: {
    state: "NotStarted" | "Running" | "Succeeded" | "Failed";
    jobName: string;
    message?: string;
    /** While Running: why its pod cannot start (jobs/start-health.ts), shown in the condition. */
    notStarted?: string;
  };
  /** Pre-upgrade snapshot (U2's ensurePreUpgradeSnapshot), when one is asked for. */
  snapshot?: {
    state: "NotRequested" | "Running" | "Succeeded" | "Failed";
    jobName?: string;
    message?: string;
    /** While Running: why its pod cannot start (jobs/start-health.ts), shown in the condition. */
    notStarted?: string;
  };
}

/** Raft membership seen through Autopilot, already reduced to the facts the phases wait for. */
export interface RaftView {
  greenJoined: boolean;
  greenCaughtUp: boolean;
  greenVoting: boolean;
  /** No blue server keeps a vote. */
  blueDemoted: boolean;
  blueVoting: boolean;
  greenDemoted: boolean;
  leaderOnGreen: boolean;
  leaderOnBlue: boolean;
  /**
   * A server of the leader's side other than the leader still votes. A step-down before those lost
   * their vote can hand leadership to one of them, and the next pass steps that one down again.
   */
  leaderSideFollowersVote: boolean;
  bluePresent: number;
  greenPresent: number;
  /** A healthy quorum of the voters is blue. */
  blueQuorum: boolean;
}

/** One membership change for the executor; each is idempotent and re-derived on every pass. */
export type RaftAction =
  | { kind: "promote"; side: "green" | "blue" }
  | { kind: "demote"; side: "green" | "blue" }
  | { kind: "stepDown" }
  | { kind: "remove"; side: "green" | "blue" };

export interface Plan {
  /** The whole status.blueGreen to write (undefined: leave it). */
  blueGreen?: BlueGreenStatus;
  breakGlass?: BreakGlassStatus;
  upgradeRequests?: UpgradeRequestsStatus;
  actions: RaftAction[];
  /** Condition Upgrading: status and upstream reason. */
  condition?: { status: "True" | "False"; reason: OpenBaoClusterReasonType; message: string };
  /** A Kubernetes event worth emitting for this transition. */
  event?: { type: "Normal" | "Warning"; reason: OpenBaoClusterReasonType; message: string };
  /** The upgrade finished (Cleanup done): the caller records currentVersion and releases the lock. */
  completed?: boolean;
  /** The rollback finished: the caller releases the lock and counts a rollback. */
  rolledBack?: boolean;
  requeueAfterMs?: number;
  /** Start this attempt's pre-promotion hook Job (green is in sync and held long enough). */
  startHook?: boolean;
  /** Break-glass holds automation: the executor neither acts nor counts this pass. */
  halted?: boolean;
}
