/**
 * OpenBaoCluster's names and the constants the controllers use, without the schema: the operator's
 * run path imports these, and so never loads TypeBox (about 200 modules), which only the CRD builder
 * and offline validation need. `openbaocluster.ts` re-exports all of it.
 */
import { reasonTable } from "./reason.js";

export const OpenBaoGroup = "openbao.org";
export const OpenBaoVersion = "v1alpha1";
export const OpenBaoApiVersion = `${OpenBaoGroup}/${OpenBaoVersion}` as const;
export const OpenBaoClusterKind = "OpenBaoCluster";
export const OpenBaoClusterPlural = "openbaoclusters";

/** Annotation whose new value asks for one manual backup. */
export const TriggerBackupAnnotation = "openbao.org/trigger-backup";

/**
 * Annotation that lets the operator initialize a cluster whose data is gone (status.initialized, or
 * its root-token Secret, says it was initialized, yet pod 0 answers uninitialized). Its value must
 * be the UID of pod 0's current, empty data claim, which the DataLost condition names: it accepts
 * that one loss only, so a later loss stops again.
 */
export const AcknowledgeDataLossAnnotation = "openbao.org/acknowledge-data-loss";

/**
 * Written by the operator on one of its Jobs whose pod never started within the start bound, just
 * before it ends that Job: the reason it was failed for, read back by whichever pass records the
 * result (a restarted operator too), since the pod that showed the trouble is gone by then.
 */
export const JobStartFailureAnnotation = "openbao.org/job-start-failure";

/**
 * Annotations and labels under upstream's names. `cluster`, `component` and `revision` are labels on
 * the objects the operator creates; the finalizer names appear here because upstream also lists them
 * among its keys.
 */
export const OpenBaoAnnotation = {
  BackupKey: "openbao.org/backup-key",
  BackupType: "openbao.org/backup-type",
  Cluster: "openbao.org/cluster",
  Component: "openbao.org/component",
  ConfigHash: "openbao.org/config-hash",
  /** Label upstream asks of a static restore-token Secret (with openbao.org/cluster), value RestoreTokenPurpose. */
  CredentialPurpose: "openbao.org/credential-purpose",
  ForceRollback: "openbao.org/force-rollback",
  LastDevelopmentWarning: "openbao.org/last-development-warning",
  LastProfileNotSetWarning: "openbao.org/last-profile-not-set-warning",
  LastRootTokenWarning: "openbao.org/last-root-token-warning",
  LastStaticUnsealWarning: "openbao.org/last-static-unseal-warning",
  Maintenance: "openbao.org/maintenance",
  MaintenanceAllowed: "openbao.org/maintenance-allowed",
  OpenBaoClusterFinalizer: "openbao.org/openbaocluster-finalizer",
  OpenBaoRestoreFinalizer: "openbao.org/openbaorestore-finalizer",
  RestartAt: "openbao.org/restart-at",
  Revision: "openbao.org/revision",
  SnapshotPhase: "openbao.org/snapshot-phase",
  TLSCertHash: "openbao.org/tls-cert-hash",
  TriggerBackup: "openbao.org/trigger-backup",
  UpgradeAction: "openbao.org/upgrade-action",
  UpgradeRunID: "openbao.org/upgrade-run-id",
} as const;

/** The labels among them: every object the operator creates for a cluster carries these. */
export const OpenBaoLabel = {
  Cluster: OpenBaoAnnotation.Cluster,
  Component: OpenBaoAnnotation.Component,
  Revision: OpenBaoAnnotation.Revision,
  /**
   * On a restore test's throwaway cluster, its OpenBaoRestore and the Secret it gets: the source
   * cluster's name (the drill controller finds its throwaway again by it after a restart).
   */
  RestoreTestOf: "openbao.org/restore-test-of",
  /** Upstream's label on snapshot Jobs: `scheduled`, `manual` or `pre-upgrade`. */
  BackupType: OpenBaoAnnotation.BackupType,
  CredentialPurpose: OpenBaoAnnotation.CredentialPurpose,
} as const;

/** The openbao.org/credential-purpose a static restore-token Secret carries (upstream 0.3.0). */
export const RestoreTokenPurpose = "restore-token";

export const OpenBaoFinalizer = {
  Cluster: "openbao.org/openbaocluster-finalizer",
  Restore: "openbao.org/openbaorestore-finalizer",
} as const;

/** Metric names upstream exports; a metric with the same meaning uses the same name here. */
export const OpenBaoMetric = {
  AdmissionDependenciesReady: "openbao_admission_dependencies_ready",
  BackupConsecutiveFailures: "openbao_backup_consecutive_failures",
  BackupDurationSeconds: "openbao_backup_duration_seconds",
  BackupInProgress: "openbao_backup_in_progress",
  BackupLastDurationSeconds: "openbao_backup_last_duration_seconds",
  BackupLastSizeBytes: "openbao_backup_last_size_bytes",
  BackupFailureTotal: "openbao_backup_failure_total",
  BackupLastSuccessTimestamp: "openbao_backup_last_success_timestamp",
  BackupSizeBytes: "openbao_backup_size_bytes",
  BackupSuccessTotal: "openbao_backup_success_total",
  BackupTotal: "openbao_backup_total",
  // Restore tests (spec.backup.restoreTest): no upstream counterpart, named after its backup metrics.
  BackupLastVerifiedTimestampSeconds: "openbao_backup_last_verified_timestamp_seconds",
  BackupVerificationFailed: "openbao_backup_verification_failed",
  BackupRestoreTestIntervalSeconds: "openbao_backup_restore_test_interval_seconds",
  BackupRestoreTestDurationSeconds: "openbao_backup_restore_test_duration_seconds",
  ClusterPhase: "openbao_cluster_phase",
  ClusterReadyReplicas: "openbao_cluster_ready_replicas",
  ClusterReplicas: "openbao_cluster_replicas",
  DriftCorrectedTotal: "openbao_drift_corrected_total",
  DriftDetectedTotal: "openbao_drift_detected_total",
  DriftLastDetectedTimestamp: "openbao_drift_last_detected_timestamp",
  ReconcileDurationSeconds: "openbao_reconcile_duration_seconds",
  ReconcileErrorsTotal: "openbao_reconcile_errors_total",
  RestoreDurationSeconds: "openbao_restore_duration_seconds",
  RestoreFailureTotal: "openbao_restore_failure_total",
  RestoreSuccessTotal: "openbao_restore_success_total",
  RestoreTotal: "openbao_restore_total",
  TlsCertExpiryTimestamp: "openbao_tls_cert_expiry_timestamp",
  TlsRotationTotal: "openbao_tls_rotation_total",
  UpgradeDurationSeconds: "openbao_upgrade_duration_seconds",
  UpgradeFailureTotal: "openbao_upgrade_failure_total",
  UpgradeInProgress: "openbao_upgrade_in_progress",
  UpgradePartition: "openbao_upgrade_partition",
  UpgradePodDurationSeconds: "openbao_upgrade_pod_duration_seconds",
  UpgradePodsCompleted: "openbao_upgrade_pods_completed",
  UpgradePodsTotal: "openbao_upgrade_pods_total",
  UpgradeRollbackTotal: "openbao_upgrade_rollback_total",
  UpgradeStatus: "openbao_upgrade_status",
  UpgradeStepDownFailuresTotal: "openbao_upgrade_stepdown_failures_total",
  UpgradeStepDownTotal: "openbao_upgrade_stepdown_total",
  UpgradeSuccessTotal: "openbao_upgrade_success_total",
  UpgradeTotal: "openbao_upgrade_total",
} as const;

export const OpenBaoClusterCondition = {
  Available: "Available",
  Degraded: "Degraded",
  TLSReady: "TLSReady",
  Upgrading: "Upgrading",
  BackingUp: "BackingUp",
  /** The rolling restart spec.runtime.restartAt asks for: True while pods are replaced. */
  Restarting: "Restarting",
  /** spec.backup.restoreTest: whether the latest restore test of a backup passed; absent without one. */
  BackupVerified: "BackupVerified",
  OpenBaoInitialized: "OpenBaoInitialized",
  OpenBaoSealed: "OpenBaoSealed",
  OpenBaoLeader: "OpenBaoLeader",
  ReadReplicasReady: "ReadReplicasReady",
  StorageExpanded: "StorageExpanded",
  /** Whether the Gateway API routes spec.gateway asks for are served; absent without spec.gateway. */
  GatewayReady: "GatewayReady",
  /**
   * Upstream's: whether the managed Ingress is usable (its IngressClass exists; with readinessMode
   * LoadBalancerPublished, its controller published an address). Absent without spec.ingress.
   */
  IngressIntegrationReady: "IngressIntegrationReady",
  // Upstream 0.5's configuration-readiness conditions (targets/openbao/readiness), each with its fixed
  // reason contract; absent while the feature it checks is not configured.
  /** Whether OpenBao's ACME flow can work as configured (tls.mode ACME only). */
  ACMEIntegrationReady: "ACMEIntegrationReady",
  /** Gateway, GatewayClass and the managed Route's parent status (spec.gateway.enabled only). */
  GatewayIntegrationReady: "GatewayIntegrationReady",
  /** How well the NetworkPolicies' Kubernetes API egress is known (always set). */
  APIServerNetworkReady: "APIServerNetworkReady",
  /** The shared ACME cache claim (tls.acme.sharedCache only). */
  ACMECacheReady: "ACMECacheReady",
  /** The shared audit claim and its mount in the voter StatefulSet (spec.auditFileStorage only). */
  AuditFileStorageReady: "AuditFileStorageReady",
  /** Whether a backup Job could log in and reach its store as configured (spec.backup only). */
  BackupConfigurationReady: "BackupConfigurationReady",
  /** How the pods authenticate to a cloud KMS seal (awskms, gcpckms, azurekeyvault, ocikms only). */
  CloudUnsealIdentityReady: "CloudUnsealIdentityReady",
  /** Best effort: whether the self-init requests set up a way for people to log in (always set). */
  UserAccessBootstrap: "UserAccessBootstrap",
  /** Set when the spec carries fields this operator accepts but does not act on; the message names them. */
  UnsupportedFields: "UnsupportedFields",
  /**
   * True while the spec uses paths upstream removed in 0.5 (tls.acme.domain, maintenance.restartAt,
   * earlier seal option names): still acted on, under their 0.5 name; the message names each with its
   * replacement. Absent otherwise.
   */
  Deprecated: "Deprecated",
  /**
   * False while a Secret reference names nothing (upstream's default name ""): the message names each
   * field and what waits for it; absent when every reference names a Secret.
   */
  SecretReferencesNamed: "SecretReferencesNamed",
  ProductionReady: "ProductionReady",
  EtcdEncryptionWarning: "EtcdEncryptionWarning",
  SecurityRisk: "SecurityRisk",
  NodeSecurityCapabilityMismatch: "NodeSecurityCapabilityMismatch",
} as const;
export type OpenBaoClusterConditionType =
  (typeof OpenBaoClusterCondition)[keyof typeof OpenBaoClusterCondition];

export const OpenBaoClusterReason = reasonTable<typeof OpenBaoClusterKind>()({
  Reconciled: "Reconciled",
  Paused: "Paused",
  InvalidSpec: "InvalidSpec",
  WaitingForTLS: "WaitingForTLS",
  WaitingForPods: "WaitingForPods",
  /**
   * OpenBaoInitialized=False before the first initialization: upstream's word (the key keeps this
   * operator's earlier name, "Initializing", so the code reads as before).
   */
  Initializing: "NotInitialized",
  Initialized: "Initialized",
  Sealed: "Sealed",
  Unsealed: "Unsealed",
  LeaderElected: "LeaderElected",
  NoLeader: "NoLeader",
  OperationLockHeld: "OperationLockHeld",
  /** Upgrading=True while an upgrade runs: upstream's condition says InProgress (its constant UpgradeInProgress is shown nowhere). */
  UpgradeInProgress: "InProgress",
  UpgradeComplete: "UpgradeComplete",
  UpgradeFailed: "UpgradeFailed",
  PreUpgradeBackupFailed: "PreUpgradeBackupFailed",
  /** BackingUp=True while a backup Job runs: upstream's InProgress (this key's value was BackupInProgress). */
  BackupInProgress: "InProgress",
  BackupSucceeded: "BackupSucceeded",
  BackupFailed: "BackupFailed",
  BreakGlass: "BreakGlass",
  StorageExpanding: "StorageExpanding",
  StorageShrinkRefused: "StorageShrinkRefused",
  FieldsNotSupported: "FieldsNotSupported",
  AllFieldsSupported: "AllFieldsSupported",
  /** A cluster made before the names followed upstream keeps the headless Service its pods live under. */
  PeerServiceKept: "PeerServiceKept",
  // Upstream's reasons, so one situation reads the same on both operators.
  ACMEDomainNotResolvable: "ACMEDomainNotResolvable",
  ACMEGatewayNotConfiguredForPassthrough: "ACMEGatewayNotConfiguredForPassthrough",
  AdmissionPoliciesNotReady: "AdmissionPoliciesNotReady",
  AdmissionPoliciesReady: "AdmissionPoliciesReady",
  AllReplicasReady: "AllReplicasReady",
  AppArmorUnsupported: "AppArmorUnsupported",
  AuthenticationRequired: "AuthenticationRequired",
  BackupExecutorImageVerificationFailed: "BackupExecutorImageVerificationFailed",
  BlueGreenImageVerificationFailed: "BlueGreenImageVerificationFailed",
  BlueGreenSnapshotImageVerificationFailed: "BlueGreenSnapshotImageVerificationFailed",
  BreakGlassRequired: "BreakGlassRequired",
  ClusterNotReady: "ClusterNotReady",
  DevelopmentProfile: "DevelopmentProfile",
  Disabled: "Disabled",
  DowngradeBlocked: "DowngradeBlocked",
  Error: "Error",
  EtcdEncryptionUnknown: "EtcdEncryptionUnknown",
  GatewayAPIMissing: "GatewayAPIMissing",
  IngressCapabilitiesUnknown: "IngressCapabilitiesUnknown",
  IngressClassMissing: "IngressClassMissing",
  IngressIntegrationReady: "IngressIntegrationReady",
  IngressLoadBalancerPending: "IngressLoadBalancerPending",
  IngressObjectPending: "IngressObjectPending",
  HealthCheckFailed: "HealthCheckFailed",
  Idle: "Idle",
  ImageVerificationFailed: "ImageVerificationFailed",
  InProgress: "InProgress",
  InitContainerImageVerificationFailed: "InitContainerImageVerificationFailed",
  InvalidVersion: "InvalidVersion",
  LeaderFound: "LeaderFound",
  LeaderUnknown: "LeaderUnknown",
  MultipleLeaders: "MultipleLeaders",
  NetworkEgressRulesRequired: "NetworkEgressRulesRequired",
  NoBackupToken: "NoBackupToken",
  NoReplicasReady: "NoReplicasReady",
  /** Upgrading=False with nothing to do: upstream's condition says Idle (its constant NoUpgradeNeeded is shown nowhere). */
  NoUpgradeNeeded: "Idle",
  NotReady: "NotReady",
  OperationLockOverridden: "OperationLockOverridden",
  OperatorManagedTLS: "OperatorManagedTLS",
  PodNotReady: "PodNotReady",
  PreUpgradeBackupImageVerificationFailed: "PreUpgradeBackupImageVerificationFailed",
  PrerequisitesMissing: "PrerequisitesMissing",
  PrerequisitesReady: "PrerequisitesReady",
  ProductionNotReady: "ProductionNotReady",
  ProductionReady: "ProductionReady",
  ProfileNotSet: "ProfileNotSet",
  QuorumLost: "QuorumLost",
  Ready: "Ready",
  Reconciling: "Reconciling",
  RestoreExecutorImageVerificationFailed: "RestoreExecutorImageVerificationFailed",
  RestoreFailed: "RestoreFailed",
  RestoreSucceeded: "RestoreSucceeded",
  RollbackFailed: "RollbackFailed",
  RootTokenStored: "RootTokenStored",
  SecurityViolation: "SecurityViolation",
  StaticUnsealInUse: "StaticUnsealInUse",
  StepDownFailed: "StepDownFailed",
  StepDownTimeout: "StepDownTimeout",
  StorageClassChangeNotSupported: "StorageClassChangeNotSupported",
  StorageInvalidSize: "StorageInvalidSize",
  StorageResizeNotSupported: "StorageResizeNotSupported",
  StorageRestartRequired: "StorageRestartRequired",
  StorageShrinkNotSupported: "StorageShrinkNotSupported",
  TLSSecretInvalid: "TLSSecretInvalid",
  TLSSecretMissing: "TLSSecretMissing",
  Unknown: "Unknown",
  UpgradeExecutorImageVerificationFailed: "UpgradeExecutorImageVerificationFailed",
  UpgradePaused: "UpgradePaused",
  UpgradeRollback: "UpgradeRollback",
  UpgradeStarted: "UpgradeStarted",
  VersionMismatch: "VersionMismatch",
  AutopilotConfigured: "AutopilotConfigured",
  CAIssued: "CAIssued",
  CertificateIssued: "CertificateIssued",
  DeadlineExceeded: "DeadlineExceeded",
  InitializationFailed: "InitializationFailed",
  /**
   * selfInit.oidc: the API server's ServiceAccount issuer or signing keys could not be read, so the
   * first start (which would revoke the root token) waits rather than run without the JWT bootstrap.
   */
  OIDCIssuerUnavailable: "OIDCIssuerUnavailable",
  InitializationRecovered: "InitializationRecovered",
  InlineCredentials: "InlineCredentials",
  Interrupted: "Interrupted",
  JobMissing: "JobMissing",
  /** An operator Job's pod cannot start (image pull, scheduling, a missing Secret); it may still. */
  JobNotStarted: "JobNotStarted",
  /** An operator Job's pod did not start within the start bound: the operation failed. */
  JobStartTimeout: "JobStartTimeout",
  NotSupported: "NotSupported",
  /** The Deprecated condition: earlier paths in use, mapped to their 0.5 form. */
  DeprecatedFields: "DeprecatedFields",
  PodCrashLooping: "PodCrashLooping",
  PrePromotionHookStarted: "PrePromotionHookStarted",
  RaftPeerRemoved: "RaftPeerRemoved",
  ReconcileError: "ReconcileError",
  RevisionRetired: "RevisionRetired",
  RollbackConsensusRepairFailed: "RollbackConsensusRepairFailed",
  RootTokenMissing: "RootTokenMissing",
  /** OpenBao answers 403 to the root token the operator keeps (after a restore: the source's tokens). */
  RootTokenRefused: "RootTokenRefused",
  /**
   * OpenBao answers 403 to the operator role's sys/storage/raft/demote: a read replica stays a voter
   * until the grant is added to policy openbao-operator (ReadReplicasReady=False, a Warning event).
   */
  DemoteRefused: "DemoteRefused",
  SelfInitialized: "SelfInitialized",
  StorageExpanded: "StorageExpanded",
  UnsealKeyCreated: "UnsealKeyCreated",
  /** Initialized before (status or root-token Secret) but pod 0 answers uninitialized: never initialized over. */
  DataLost: "DataLost",
  /** The lost data was acknowledged (AcknowledgeDataLossAnnotation): the cluster is initialized afresh. */
  DataLossAcknowledged: "DataLossAcknowledged",
  /** A Secret reference whose name is empty (upstream's default ""): the part that needs it waits. */
  SecretReferenceMissingName: "SecretReferenceMissingName",
  // The readiness conditions' reasons (upstream 0.5's names; see OpenBaoClusterCondition).
  ACMEIntegrationReady: "ACMEIntegrationReady",
  GatewayIntegrationReady: "GatewayIntegrationReady",
  GatewayReferenceMissing: "GatewayReferenceMissing",
  GatewayClassMissing: "GatewayClassMissing",
  GatewayClassPending: "GatewayClassPending",
  GatewayClassNotAccepted: "GatewayClassNotAccepted",
  GatewayVersionUnsupported: "GatewayVersionUnsupported",
  GatewayFeatureUnsupported: "GatewayFeatureUnsupported",
  GatewayCapabilitiesUnknown: "GatewayCapabilitiesUnknown",
  GatewayNotProgrammed: "GatewayNotProgrammed",
  GatewayProgrammingPending: "GatewayProgrammingPending",
  GatewayListenerIncompatible: "GatewayListenerIncompatible",
  GatewayRoutePending: "GatewayRoutePending",
  GatewayRouteNotAccepted: "GatewayRouteNotAccepted",
  GatewayRouteReferencesUnresolved: "GatewayRouteReferencesUnresolved",
  APIServerNetworkReady: "APIServerNetworkReady",
  APIServerEndpointIPsRecommended: "APIServerEndpointIPsRecommended",
  APIServerNetworkConfigurationInvalid: "APIServerNetworkConfigurationInvalid",
  ACMECacheReady: "ACMECacheReady",
  ACMECacheNotConfigured: "ACMECacheNotConfigured",
  ACMECacheMissing: "ACMECacheMissing",
  ACMECachePending: "ACMECachePending",
  ACMECacheInvalidAccessMode: "ACMECacheInvalidAccessMode",
  AuditFileStorageReady: "AuditFileStorageReady",
  AuditFileStorageMissing: "AuditFileStorageMissing",
  AuditFileStoragePending: "AuditFileStoragePending",
  AuditFileStorageInvalidAccessMode: "AuditFileStorageInvalidAccessMode",
  AuditFileStorageStatefulSetRecreateRequired: "AuditFileStorageStatefulSetRecreateRequired",
  AmbientIdentityAssumed: "AmbientIdentityAssumed",
  WorkloadIdentityConfigured: "WorkloadIdentityConfigured",
  TokenSecretMissing: "TokenSecretMissing",
  CredentialsSecretMissing: "CredentialsSecretMissing",
  UserAccessConfigured: "UserAccessConfigured",
  UserAccessUnverified: "UserAccessUnverified",
  /** Tenant mode: no provisioned OpenBaoTenant onboards the cluster's namespace; nothing is created until one does. */
  TenantNotProvisioned: "TenantNotProvisioned",
  /** Degraded while a scale-down waits: the pods to remove are not yet out of Raft. */
  ScaleDownWaiting: "ScaleDownWaiting",
  ScaleDownPending: "ScaleDownPending",
  /** A scale-down removes the active node last: it is asked to step down first. */
  StepDownRequested: "StepDownRequested",
  /** Drifted (observe-only): what a real run would change. */
  ObserveOnly: "ObserveOnly",
  /** BackingUp: spec.backup.schedule is not a cron expression the operator reads. */
  InvalidSchedule: "InvalidSchedule",
  // Events only: what the backup and the rolling upgrade did (no condition carries these).
  BackupJobCreated: "BackupJobCreated",
  PreUpgradeSnapshotJobCreated: "PreUpgradeSnapshotJobCreated",
  BackupManualTriggerAccepted: "BackupManualTriggerAccepted",
  BackupRetentionApplied: "BackupRetentionApplied",
  BackupRetentionFailed: "BackupRetentionFailed",
  LeaderSteppedDown: "LeaderSteppedDown",
  UpgradePodReplaced: "UpgradePodReplaced",
  UpgradePodReplacing: "UpgradePodReplacing",
  // A pod of a given-up target, stuck (e.g. its image cannot be pulled), deleted so the roll goes on.
  UpgradeStuckPodDeleted: "UpgradeStuckPodDeleted",
  UpgradeRetargeted: "UpgradeRetargeted",
  UpgradeRetryAccepted: "UpgradeRetryAccepted",
  // The Restarting condition (spec.runtime.restartAt) and its events.
  RestartInProgress: "RestartInProgress",
  RestartComplete: "RestartComplete",
  RestartStepFailed: "RestartStepFailed",
  // Not upstream's (its restart is a pod-template annotation the StatefulSet controller rolls,
  // retried for ever): a restart step failed several times in a row; still retried, a person must look.
  RestartStalled: "RestartStalled",
  RestartPodDeleted: "RestartPodDeleted",
  /** Event: the operator created a ManagedPVC claim (auditFileStorage, tls.acme.sharedCache). */
  SharedClaimCreated: "SharedClaimCreated",
  // BackupVerified (spec.backup.restoreTest): the last restore test's outcome.
  /** True: the latest backup was restored into a throwaway cluster, unsealed and read back. */
  BackupVerified: "BackupVerified",
  /** Unknown: the first restore test is running (a later one leaves the last outcome standing). */
  RestoreTestRunning: "RestoreTestRunning",
  /** The OpenBaoRestore into the throwaway cluster failed: the snapshot is corrupt, missing or unreadable. */
  RestoreTestRestoreFailed: "RestoreTestRestoreFailed",
  /**
   * OpenBao refused the snapshot because its hash file does not open with the source's seal (which
   * the throwaway holds): another cluster's backup at this key, or the source's seal key changed
   * after it was taken. The source could not restore it either.
   */
  RestoreTestSealMismatch: "RestoreTestSealMismatch",
  /** The throwaway cluster did not answer unsealed after the restore. */
  RestoreTestSealed: "RestoreTestSealed",
  /** The canary path did not read back from the restored data. */
  RestoreTestCanaryMissing: "RestoreTestCanaryMissing",
  /** The test did not finish within spec.backup.restoreTest.timeout. */
  RestoreTestTimedOut: "RestoreTestTimedOut",
  /** The test cannot run as configured (no backup target, an invalid schedule, a Secret missing). */
  RestoreTestInvalid: "RestoreTestInvalid",
});
export type OpenBaoClusterReasonType = (typeof OpenBaoClusterReason)[keyof typeof OpenBaoClusterReason];

/**
 * Upstream's cluster phases, and RestoringReadReplicas: this operator's while the read replicas
 * restart after a restore's voters (upstream spells that phase only on status.blueGreen).
 */
export const ClusterPhases = [
  "Initializing",
  "Running",
  "Upgrading",
  "BackingUp",
  "Failed",
  "RestoringReadReplicas",
] as const;
export type OpenBaoClusterPhase = (typeof ClusterPhases)[number];
export const TLSModes = ["OperatorManaged", "External", "ACME"] as const;
export type TLSMode = (typeof TLSModes)[number];
export const UpgradeStrategies = ["RollingUpdate", "BlueGreen"] as const;
export type UpgradeStrategy = (typeof UpgradeStrategies)[number];
// "Restart" (spec.runtime.restartAt) is this operator's own: upstream rolls a pod-template annotation
// without the lock.
export const ClusterOperations = ["Upgrade", "Backup", "Restore", "Restart"] as const;
export type ClusterOperation = (typeof ClusterOperations)[number];
export const BackupProviders = ["s3", "gcs", "azure"] as const;
export type BackupProvider = (typeof BackupProviders)[number];
export const ClusterDeletionPolicies = ["Retain", "DeletePVCs", "DeleteAll"] as const;
export type ClusterDeletionPolicy = (typeof ClusterDeletionPolicies)[number];
/** Blue-green progress, in order; a failure leaves the forward path for RollingBack → RollbackCleanup. */
export const BlueGreenPhases = [
  "Idle",
  "DeployingGreen",
  "JoiningMesh",
  "Syncing",
  "Promoting",
  "DemotingBlue",
  "Cleanup",
  "RollingBack",
  "RollbackCleanup",
] as const;
export type BlueGreenPhase = (typeof BlueGreenPhases)[number];
export const UnsealTypes = [
  "static",
  "transit",
  "awskms",
  "gcpckms",
  "azurekeyvault",
  "kmip",
  "ocikms",
  "pkcs11",
  "kms",
] as const;
export type UnsealType = (typeof UnsealTypes)[number];

/** A semantic version, optionally with a leading v, as OpenBao releases are numbered. */
export const SEMVER_PATTERN =
  "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$";

/**
 * The most voters a cluster may ask for. Upstream sets no maximum (its CRD says minimum 1 only), so a
 * typo such as `replicas: 100` made a hundred pods at once; nine voters survive four losses already.
 */
export const MAX_VOTERS = 9;

/**
 * The controllers of OpenBaoCluster and the field manager of each concern that writes it: the
 * workload plane, the operation lock, the AdminOps plane and the objects AdminOps creates.
 */
export const OpenBaoClusterManagers = {
  controller: "openbaocluster",
  adminOpsController: "openbaocluster-adminops",
  workload: "platform-operator-openbao",
  lock: "platform-operator-openbao-lock",
  adminOps: "platform-operator-openbao-adminops",
  /** status.restore, written by the restore controller after a restore's restart. */
  restoreRecord: "platform-operator-openbao-restore",
  /** The restore-test controller (spec.backup.restoreTest) and the objects it creates. */
  restoreTestController: "openbaocluster-restore-test",
  restoreTest: "platform-operator-openbao-restore-test",
} as const;

/** TLS versions a listener can be bounded to (OpenBao's tls_min_version / tls_max_version). */
export const TLS_VERSIONS = ["tls12", "tls13"] as const;
/**
 * Key exchange groups OpenBao 2.7 takes in tls_key_exchange_preferences: three hybrid post-quantum
 * groups and the classical curves. Pure ML-KEM is left out, as upstream does: the operator's own
 * clients would not offer it.
 */
export const TLS_KEY_EXCHANGE_GROUPS = [
  "X25519MLKEM768",
  "SecP256r1MLKEM768",
  "SecP384r1MLKEM1024",
  "X25519",
  "CurveP256",
  "CurveP384",
  "CurveP521",
] as const;
export const CLASSICAL_KEY_EXCHANGE_GROUPS: readonly string[] = [
  "X25519",
  "CurveP256",
  "CurveP384",
  "CurveP521",
];
