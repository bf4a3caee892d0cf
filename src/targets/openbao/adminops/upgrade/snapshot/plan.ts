import { createHash } from "node:crypto";
import type { BackupTarget, OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../../../apis/openbaocluster-names.js";
import type { ExecutorAuth } from "../../../executor/contract.js";
import { type ClusterRef, clusterNames } from "../../../identity.js";
import { egressRulesMissing } from "../../../profile/egress.js";
import { describeEmpty, emptyClusterReferences } from "../../../validate/secret-refs.js";
import { executorAuth } from "../../jobs/snapshot-upload.js";

/**
 * The pure half of the pre-upgrade snapshot: whether one is asked for, the Job's name, and what
 * must hold before its Job is created. The caller observes (which Secrets exist) and this decides;
 * each missing piece is named by its field, never by a value.
 */

/** Job names become a pod label value: at most 63 characters. */
const MAX_JOB_NAME = 63;

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

/**
 * One upgrade, one Job: the name comes from the upgrade's id alone, so a restarted operator asking
 * again for the same upgrade finds the Job it created before instead of starting a second one.
 */
export function snapshotJobName(cluster: string, upgradeId: string): string {
  const suffix = `pre-upgrade-${hash(upgradeId, 8)}`;
  const full = `${cluster}-${suffix}`;
  if (full.length <= MAX_JOB_NAME) return full;
  const room = MAX_JOB_NAME - suffix.length - 8;
  return `${cluster.slice(0, room).replace(/-+$/, "")}-${hash(cluster, 6)}-${suffix}`;
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
  | { ok: false; reason: string; message: string };

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
  const own = executorAuth(cluster.spec.upgrade);
  const auth = own ?? executorAuth(backup);
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

function missing(reason: string, message: string): SnapshotPlan {
  return { ok: false, reason, message };
}
