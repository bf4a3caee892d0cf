/**
 * OpenBaoRestore's names and the constants its controller uses, without the schema (see
 * `openbaocluster-names.ts`); `openbaorestore.ts` re-exports all of it.
 */
import { reasonTable } from "./reason.js";

export const OpenBaoRestoreKind = "OpenBaoRestore";
export const OpenBaoRestorePlural = "openbaorestores";

export const RestorePhases = ["Pending", "Validating", "Running", "Completed", "Failed"] as const;
export type OpenBaoRestorePhase = (typeof RestorePhases)[number];

export const OpenBaoRestoreCondition = {
  Validated: "Validated",
  LockAcquired: "LockAcquired",
  OperationLockOverridden: "OperationLockOverridden",
  Complete: "Complete",
  // Upstream's condition types.
  RestoreComplete: "RestoreComplete",
  OperationLockOverride: "OperationLockOverride",
  Provisioned: "Provisioned",
  /** Upstream 0.5: whether what the operator can check of the restore's login, store and egress holds. */
  RestoreConfigurationReady: "RestoreConfigurationReady",
} as const;
export type OpenBaoRestoreConditionType =
  (typeof OpenBaoRestoreCondition)[keyof typeof OpenBaoRestoreCondition];

export const OpenBaoRestoreReason = reasonTable<typeof OpenBaoRestoreKind>()({
  ClusterNotFound: "ClusterNotFound",
  ClusterNotInitialized: "ClusterNotInitialized",
  ClusterUnhealthy: "ClusterUnhealthy",
  NetworkEgressRulesRequired: "NetworkEgressRulesRequired",
  SnapshotNotFound: "SnapshotNotFound",
  CredentialsMissing: "CredentialsMissing",
  OperationLockHeld: "OperationLockHeld",
  OperationLockOverridden: "OperationLockOverridden",
  ValidationSucceeded: "ValidationSucceeded",
  JobCreated: "JobCreated",
  JobSucceeded: "JobSucceeded",
  JobFailed: "JobFailed",
  // Upstream's reasons for a restore's outcome.
  RestoreSucceeded: "RestoreSucceeded",
  RestoreFailed: "RestoreFailed",
  RestoreExecutorImageVerificationFailed: "RestoreExecutorImageVerificationFailed",
  Acquired: "Acquired",
  InProgress: "InProgress",
  InvalidRequest: "InvalidRequest",
  JobConflict: "JobConflict",
  JobMissing: "JobMissing",
  /** The restore Job's pod cannot start yet (image pull, scheduling, a missing Secret). */
  JobNotStarted: "JobNotStarted",
  /** The restore Job's pod did not start within the start bound: the restore failed, nothing changed. */
  JobStartTimeout: "JobStartTimeout",
  /**
   * What the restore Job needs before it is created (its ServiceAccount) could not be made, pass
   * after pass: retried with the failure backoff, then the restore fails, nothing changed.
   */
  JobPrepareFailed: "JobPrepareFailed",
  Validating: "Validating",
  /** The snapshot's hash file was sealed by another seal than the target's running one. */
  SealMismatch: "SealMismatch",
  /** After the snapshot was applied, the cluster's pods were restarted to load the restored data. */
  PodsRestarted: "PodsRestarted",
  /** Upstream's: every voter is back and Ready after the restore's restart (status.restore.restartCompletedAt). */
  RestoreRestartCompleted: "RestoreRestartCompleted",
  /** After the voters, the read replicas were restarted to follow the restored leader. */
  ReadReplicasRestarted: "ReadReplicasRestarted",
  /** A Secret reference whose name is empty (upstream's default ""); the request never runs. */
  SecretReferenceMissingName: "SecretReferenceMissingName",
  // Why the restore Job failed, as the executor reports it (its contract's failure reasons) or as
  // the Job showed it without a report; named as the executor names them.
  InvalidInput: "InvalidInput",
  AuthFailed: "AuthFailed",
  SnapshotFailed: "SnapshotFailed",
  UploadFailed: "UploadFailed",
  DownloadFailed: "DownloadFailed",
  Interrupted: "Interrupted",
  DeadlineExceeded: "DeadlineExceeded",
  // Upstream 0.5's RestoreConfigurationReady reasons (readiness/restore.ts), spelled as upstream's.
  /** True: the store is reached with the credentials Secret the source names. */
  Ready: "Ready",
  /** True: the store is reached with the workload identity the source configures. */
  WorkloadIdentityConfigured: "WorkloadIdentityConfigured",
  /** True: no store credentials; the Job relies on the provider's default credential chain. */
  AmbientIdentityAssumed: "AmbientIdentityAssumed",
  /** False: no JWT role and no token Secret for the restore Job's login. */
  AuthenticationRequired: "AuthenticationRequired",
  /** False: the token Secret the restore logs in with does not exist. */
  TokenSecretMissing: "TokenSecretMissing",
  /** False: the restore's own token Secret lacks the labels a restore token carries. */
  TokenSecretInvalid: "TokenSecretInvalid",
  /** False: the store credentials Secret the source names does not exist. */
  CredentialsSecretMissing: "CredentialsSecretMissing",
  /** Unknown: not decided (a Secret the operator may not read, or a result outside the contract). */
  Unknown: "Unknown",
});
export type OpenBaoRestoreReasonType = (typeof OpenBaoRestoreReason)[keyof typeof OpenBaoRestoreReason];

/** The controller and the field manager that write OpenBaoRestore objects. */
export const OpenBaoRestoreManagers = {
  controller: "openbaorestore",
  fieldManager: "platform-operator-openbao-restore",
} as const;
