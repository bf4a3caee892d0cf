import { createHash } from "node:crypto";

/**
 * The names of the Jobs an upgrade runs, as upstream's operator names them, so runbooks, alerts and
 * `kubectl get job <name>` written for upstream find ours. Pure.
 *
 * A Job's name becomes its pods' `batch.kubernetes.io/job-name` label value, so every name here is
 * at most 63 characters. Where upstream's own rule has no bound (the rolling snapshot, the hook), a
 * name that would be longer keeps upstream's shape with the cluster name cut and a hash of the whole
 * cluster name put in, so two long cluster names never share a Job.
 */

export const MAX_JOB_NAME = 63;
/** Upstream's suffix length: 10 hex digits of a SHA-256. */
const HASH_HEX = 10;

function sha256Hex(s: string, n: number): string {
  return createHash("sha256").update(s).digest("hex").slice(0, n);
}

/**
 * Upstream's rule for upgrade Jobs: `<base>-<10 hex of sha256(payload)>`, the base lower-cased with
 * `_` as `-`, cut (and stripped of trailing dashes) so the whole is at most 63 characters.
 */
export function hashedUpgradeJobName(base: string, payload: string): string {
  const suffix = sha256Hex(payload, HASH_HEX);
  let b = base.toLowerCase().replaceAll("_", "-");
  const room = MAX_JOB_NAME - 1 - suffix.length;
  if (b.length > room) b = b.slice(0, room).replace(/-+$/, "");
  return `${b}-${suffix}`;
}

/** What upstream's blue-green snapshot name is computed from, each as its status and spec hold it. */
export interface BlueGreenSnapshotInputs {
  cluster: string;
  /** status.currentVersion: the version running when the upgrade starts. */
  currentVersion: string;
  /** spec.version, spec.image and spec.replicas asked for. */
  version: string;
  image: string;
  replicas: number;
  /** status.blueGreen.blueRevision: the revision serving now, empty before the first blue-green upgrade. */
  blueRevision: string;
}

/**
 * Blue-green's pre-upgrade snapshot Job: `upgrade-<cluster>-preupgrade-snapshot-<hash>`, the hash
 * over `cluster|pre-upgrade-snapshot|currentVersion|version|image|replicas|blueRevision` (upstream's
 * internal/upgrade/bluegreen/job.go). One upgrade asks for one name; another target or a new
 * blue revision gives another.
 */
export function blueGreenSnapshotJobName(i: BlueGreenSnapshotInputs): string {
  const payload = [
    i.cluster,
    "pre-upgrade-snapshot",
    i.currentVersion,
    i.version,
    i.image,
    String(i.replicas),
    i.blueRevision,
  ].join("|");
  return hashedUpgradeJobName(`upgrade-${i.cluster}-preupgrade-snapshot`, payload);
}

/**
 * Fits `prefix + cluster + suffix` into 63 characters: unchanged when it fits, else the cluster
 * name cut and followed by 6 hex of its hash.
 */
function bounded(prefix: string, cluster: string, suffix: string): string {
  const full = `${prefix}${cluster}${suffix}`;
  if (full.length <= MAX_JOB_NAME) return full;
  const tag = `-${sha256Hex(cluster, 6)}`;
  const room = MAX_JOB_NAME - prefix.length - suffix.length - tag.length;
  return `${prefix}${cluster.slice(0, room).replace(/-+$/, "")}${tag}${suffix}`;
}

/**
 * The rolling upgrade's pre-upgrade backup Job: `pre-upgrade-backup-<cluster>-gen<generation>`
 * (upstream's internal/upgrade/rolling/snapshot_job.go), one per spec generation.
 */
export function rollingSnapshotJobName(cluster: string, generation: number): string {
  return bounded("pre-upgrade-backup-", cluster, `-gen${generation}`);
}

/**
 * Blue-green's pre-promotion hook Job: `<cluster>-validation-hook` (upstream's
 * internal/upgrade/bluegreen/hooks.go). The same name for every attempt: which attempt a Job
 * belongs to is its openbao.org/upgrade-run-id annotation.
 */
export function validationHookJobName(cluster: string): string {
  return bounded("", cluster, "-validation-hook");
}
