import type { OpenBaoCluster, OperationLock } from "../../../../apis/openbaocluster.js";
import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../apis/openbaocluster-names.js";
import { withBootstrapRole } from "../../oidc-roles.js";
import { egressRulesMissing } from "../../profile/egress.js";
import { describeEmpty, emptyClusterReferences } from "../../validate/secret-refs.js";

/**
 * What must hold before a backup Job is created. Pure: the caller observes (Secrets present, lock
 * state) and this decides. Each missing piece has its own reason and a message naming the field or
 * object, never a value; the first one found is reported, and no Job is created.
 */

export interface BackupFacts {
  cluster: OpenBaoCluster;
  /** Names of the Secrets that exist in the cluster's namespace, among those the backup needs. */
  secretsPresent: ReadonlySet<string>;
  /** Name of the Secret with the cluster's CA, when TLS is on (mounted so the executor verifies OpenBao). */
  caSecret?: string;
  /** The lock as the last fresh read saw it, and the identity this backup would hold it under. */
  lock?: OperationLock;
  holder: string;
}

export type Prerequisites = { ok: true } | { ok: false; reason: OpenBaoClusterReasonType; message: string };

export const BackupReason = {
  PrerequisitesMissing: R.PrerequisitesMissing,
  ClusterNotReady: R.ClusterNotReady,
  AuthenticationRequired: R.AuthenticationRequired,
  NoBackupToken: R.NoBackupToken,
  SecretReferenceMissingName: R.SecretReferenceMissingName,
  OperationLockHeld: R.OperationLockHeld,
  BackupInProgress: R.BackupInProgress,
  BackupSucceeded: R.BackupSucceeded,
  BackupFailed: R.BackupFailed,
  NetworkEgressRulesRequired: R.NetworkEgressRulesRequired,
  InvalidSchedule: R.InvalidSchedule,
  Idle: R.Idle,
} as const;

export function checkPrerequisites(f: BackupFacts): Prerequisites {
  const spec = f.cluster.spec.backup;
  if (!spec) return missing(R.PrerequisitesMissing, "spec.backup is not set");
  // A reference that names nothing is not read as "none": no Secret "" is asked for, and no
  // other credential the user did not choose is used in its place. Said first:
  // a spec mistake is worth knowing before the cluster is even initialized.
  const unnamed = emptyClusterReferences(f.cluster.spec).find((r) => r.field.startsWith("spec.backup."));
  if (unnamed) return missing(R.SecretReferenceMissingName, describeEmpty(unnamed));
  const egress = egressRulesMissing(f.cluster.spec, "backup");
  if (egress) return missing(R.NetworkEgressRulesRequired, egress);
  if (f.cluster.status?.initialized !== true)
    return missing(R.ClusterNotReady, "the cluster is not initialized yet (status.initialized)");
  // spec.selfInit.oidc bootstraps a backup role, used when the spec names no login of its own.
  const login = withBootstrapRole(f.cluster, "backup", spec);
  const jwt = login?.jwtAuthRole?.trim();
  const tokenSecret = login?.tokenSecretRef?.name?.trim();
  if (!jwt && !tokenSecret)
    return missing(
      R.AuthenticationRequired,
      "set spec.backup.jwtAuthRole (JWT login with a projected ServiceAccount token) or spec.backup.tokenSecretRef, or enable spec.selfInit.oidc; the root token is never used for backups",
    );
  if (!jwt && tokenSecret && !f.secretsPresent.has(tokenSecret))
    return missing(R.NoBackupToken, `Secret ${tokenSecret} (spec.backup.tokenSecretRef) does not exist`);
  const t = spec.target;
  if (!t?.bucket) return missing(R.PrerequisitesMissing, "spec.backup.target.bucket is not set");
  if ((t.provider ?? "s3") === "azure" && !t.azure?.storageAccount && !t.endpoint)
    return missing(
      R.PrerequisitesMissing,
      "provider azure needs spec.backup.target.azure.storageAccount or spec.backup.target.endpoint",
    );
  const creds = t.credentialsSecretRef?.name?.trim();
  if (creds && !f.secretsPresent.has(creds))
    return missing(
      R.PrerequisitesMissing,
      `Secret ${creds} (spec.backup.target.credentialsSecretRef) does not exist`,
    );
  if (f.caSecret && !f.secretsPresent.has(f.caSecret))
    return missing(R.PrerequisitesMissing, `Secret ${f.caSecret} with the cluster's CA does not exist yet`);
  const lock = f.lock;
  if (lock?.holder && lock.holder !== f.holder)
    return missing(
      R.OperationLockHeld,
      `the operation lock is held by ${lock.operation ?? "another operation"} (${lock.holder}); the backup waits for its release`,
    );
  return { ok: true };
}

function missing(reason: OpenBaoClusterReasonType, message: string): Prerequisites {
  return { ok: false, reason, message };
}
