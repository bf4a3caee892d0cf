import { createHash } from "node:crypto";
import type { BackupTarget, OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import {
  OpenBaoAnnotation,
  type OpenBaoClusterReasonType,
  OpenBaoLabel,
  OpenBaoClusterReason as R,
} from "../../../../../apis/openbaocluster-names.js";
import { DEFAULT_OPENBAO_AUDIENCE } from "../../../config.js";
import type { ExecutorAuth } from "../../../executor/contract.js";
import { type ClusterRef, Component, type ComponentName, clusterNames } from "../../../identity.js";
import { withBootstrapRole } from "../../../oidc-roles.js";
import { egressRulesMissing } from "../../../profile/egress.js";
import { describeEmpty, emptyClusterReferences } from "../../../validate/secret-refs.js";
import { executorAuth } from "../../jobs/snapshot-upload.js";
import { blueGreenSnapshotJobName, rollingSnapshotJobName } from "../job-names.js";

/**
 * The pure half of the pre-upgrade snapshot: whether one is asked for, the Job's name, and what
 * must hold before its Job is created. The caller observes (which Secrets exist) and this decides;
 * each missing piece is named by its field, never by a value.
 */

export type SnapshotStrategy = "RollingUpdate" | "BlueGreen";

/**
 * Whether this upgrade takes a snapshot first: spec.upgrade.preUpgradeSnapshot, and for blue-green
 * also spec.upgrade.blueGreen.preUpgradeSnapshot (upstream's place for it).
 */
export function snapshotRequested(cluster: OpenBaoCluster, strategy?: SnapshotStrategy): boolean {
  const u = cluster.spec.upgrade;
  const which = strategy ?? u?.strategy ?? "RollingUpdate";
  if (u?.preUpgradeSnapshot) return true;
  return which === "BlueGreen" && u?.blueGreen?.preUpgradeSnapshot === true;
}

function hash(s: string, n: number): string {
  return createHash("sha256").update(s).digest("hex").slice(0, n);
}

/** The Job a strategy's snapshot runs as: upstream's name, component and marks for that strategy. */
export interface SnapshotJobIdentity {
  name: string;
  component: ComponentName;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/**
 * Upstream's two pre-upgrade Jobs. The rolling upgrade's is a backup (`pre-upgrade-backup-<name>-
 * gen<generation>`, component backup, label backup-type pre-upgrade); blue-green's is
 * `upgrade-<name>-preupgrade-snapshot-<hash>` with component upgrade-snapshot, no backup-type label
 * and the annotation snapshot-phase pre-upgrade. Which upgrade a Job belongs to is not read from
 * its name but from its openbao.org/upgrade-run-id annotation (ensure.ts), so a spec edited while
 * the snapshot runs (a new generation, a new name) does not start a second one.
 */
export function snapshotJobIdentity(
  cluster: OpenBaoCluster,
  strategy: SnapshotStrategy,
): SnapshotJobIdentity {
  const name = cluster.metadata.name ?? "";
  if (strategy === "RollingUpdate")
    return {
      name: rollingSnapshotJobName(name, cluster.metadata.generation ?? 0),
      component: Component.Backup,
      labels: { [OpenBaoLabel.BackupType]: "pre-upgrade" },
      annotations: {},
    };
  return {
    name: blueGreenSnapshotJobName({
      cluster: name,
      currentVersion: cluster.status?.currentVersion ?? "",
      version: cluster.spec.version ?? "",
      image: cluster.spec.image ?? "",
      // The definition defaults replicas to 3; an object read without defaults means the same.
      replicas: cluster.spec.replicas ?? 3,
      blueRevision: cluster.status?.blueGreen?.blueRevision ?? "",
    }),
    component: Component.UpgradeSnapshot,
    labels: {},
    annotations: { [OpenBaoAnnotation.SnapshotPhase]: "pre-upgrade" },
  };
}

/** The id part of the object key: distinct from scheduled backups' and stable per upgrade. */
export function snapshotKeyId(upgradeId: string): string {
  return `pre-upgrade-${hash(upgradeId, 8)}`;
}

/** ServiceAccount the Job runs as: the upgrade's own when spec.upgrade says how to log in. */
export const upgradeServiceAccount = (cluster: ClusterRef): string =>
  clusterNames(cluster).upgradeServiceAccount;
export const backupServiceAccount = (cluster: ClusterRef): string =>
  clusterNames(cluster).backupServiceAccount;

export interface SnapshotFacts {
  cluster: OpenBaoCluster;
  /** Names of the Secrets that exist in the cluster's namespace, among those the Job would mount. */
  secretsPresent: ReadonlySet<string>;
  /** The cluster's CA Secret, when TLS is on (mounted so the executor verifies OpenBao). */
  caSecret?: string;
  /** The operator's executorImage setting. */
  defaultImage?: string;
  /** The target's openBaoAudience: the audience of the Job's projected token for a JWT login. */
  audience?: string;
}

export type SnapshotPlan =
  | {
      ok: true;
      target: BackupTarget;
      auth: ExecutorAuth;
      /** Which section the login came from: it picks the ServiceAccount a JWT role binds. */
      authFrom: "upgrade" | "backup";
      image: string;
    }
  | { ok: false; reason: OpenBaoClusterReasonType; message: string };

/**
 * What the Job needs: spec.backup's target (where the snapshot goes) and credentials; a login,
 * spec.upgrade's own first and spec.backup's otherwise; an executor image; the Secrets it mounts.
 */
export function planSnapshot(f: SnapshotFacts): SnapshotPlan {
  const { cluster } = f;
  const egress = egressRulesMissing(cluster.spec, "pre-upgrade snapshot");
  if (egress) return missing(R.NetworkEgressRulesRequired, egress);
  const backup = cluster.spec.backup;
  const target = backup?.target;
  if (!target?.bucket?.trim())
    return missing(
      R.PrerequisitesMissing,
      "a pre-upgrade snapshot (spec.upgrade.preUpgradeSnapshot) needs spec.backup.target with a bucket to write to",
    );
  if ((target.provider ?? "s3") === "azure" && !target.azure?.storageAccount && !target.endpoint)
    return missing(
      R.PrerequisitesMissing,
      "provider azure needs spec.backup.target.azure.storageAccount or spec.backup.target.endpoint",
    );
  // The snapshot logs in and writes as spec.upgrade or spec.backup say: a reference of theirs that
  // names nothing waits, rather than falling back to the other's token.
  const unnamed = emptyClusterReferences(cluster.spec).find(
    (r) => r.field.startsWith("spec.upgrade.") || r.field.startsWith("spec.backup."),
  );
  if (unnamed) return missing(R.SecretReferenceMissingName, describeEmpty(unnamed));
  const audience = f.audience ?? DEFAULT_OPENBAO_AUDIENCE;
  const own = executorAuth(withBootstrapRole(cluster, "upgrade", cluster.spec.upgrade), audience);
  const auth = own ?? executorAuth(backup, audience);
  if (!auth)
    return missing(
      R.AuthenticationRequired,
      "a pre-upgrade snapshot needs a login: set spec.upgrade.jwtAuthRole or spec.upgrade.tokenSecretRef (or spec.backup's)",
    );
  const field = own ? "spec.upgrade.tokenSecretRef" : "spec.backup.tokenSecretRef";
  if (auth.method === "token" && !f.secretsPresent.has(auth.secretName))
    return missing(R.NoBackupToken, `Secret ${auth.secretName} (${field}) does not exist`);
  const creds = target.credentialsSecretRef?.name?.trim();
  if (creds && !f.secretsPresent.has(creds))
    return missing(
      R.PrerequisitesMissing,
      `Secret ${creds} (spec.backup.target.credentialsSecretRef) does not exist`,
    );
  if (f.caSecret && !f.secretsPresent.has(f.caSecret))
    return missing(R.PrerequisitesMissing, `Secret ${f.caSecret} with the cluster's CA does not exist yet`);
  const image = cluster.spec.upgrade?.image ?? backup?.image ?? f.defaultImage;
  if (!image)
    return missing(
      R.PrerequisitesMissing,
      "no executor image: set spec.upgrade.image, spec.backup.image or the openbao target's executorImage",
    );
  return { ok: true, target, auth, authFrom: own ? "upgrade" : "backup", image };
}

function missing(reason: OpenBaoClusterReasonType, message: string): SnapshotPlan {
  return { ok: false, reason, message };
}
