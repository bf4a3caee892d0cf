/**
 * Restore validation, pure: from what was observed, whether the request may go on, must wait for
 * something that can still come (a Secret, initialization), or can never run (it is immutable, so a
 * structural problem is final). `force` overrides the named safety checks only (cluster health);
 * the lock is decided separately (lock state needs explicit overrideOperationLock).
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoLabel, RestoreTokenPurpose } from "../../../apis/openbaocluster-names.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import {
  type OpenBaoRestoreReasonType,
  OpenBaoRestoreReason as R,
} from "../../../apis/openbaorestore-names.js";
import { findCondition } from "../../../runtime/conditions.js";
import { clusterNames } from "../identity.js";
import { OidcRole, oidcEnabled } from "../oidc-roles.js";
import { egressRulesMissing } from "../profile/egress.js";
import { credentialNamespaceProblems, restoreCredentialRefs } from "../validate/credentials.js";
import { describeEmpty, emptyRestoreReferences } from "../validate/secret-refs.js";
import type { SnapshotHead } from "./ports.js";

export type RestoreAuth = { method: "jwt"; role: string } | { method: "token"; secretName: string };

/**
 * The restore's own auth, else the cluster's role for restores (spec.restore.jwtAuthRole), else the
 * cluster's backup auth (the same OpenBao policy usually serves both).
 */
export function restoreAuth(r: OpenBaoRestore, c: OpenBaoCluster | undefined): RestoreAuth | undefined {
  if (r.spec.jwtAuthRole) return { method: "jwt", role: r.spec.jwtAuthRole };
  if (r.spec.tokenSecretRef?.name) return { method: "token", secretName: r.spec.tokenSecretRef.name };
  if (c?.spec.restore?.jwtAuthRole) return { method: "jwt", role: c.spec.restore.jwtAuthRole };
  // The restore role spec.selfInit.oidc bootstrapped (upstream's order: before the backup's login).
  if (c && oidcEnabled(c)) return { method: "jwt", role: OidcRole.restore };
  if (c?.spec.backup?.jwtAuthRole) return { method: "jwt", role: c.spec.backup.jwtAuthRole };
  if (c?.spec.backup?.tokenSecretRef?.name)
    return { method: "token", secretName: c.spec.backup.tokenSecretRef.name };
  return undefined;
}

export interface RestoreObservation {
  restore: OpenBaoRestore;
  cluster?: OpenBaoCluster;
  /** Names of Secrets in the namespace that were looked up and found. */
  secretsFound: ReadonlySet<string>;
  /** Their labels, by name (the run path always passes them; the restore-token labels are read here). */
  secretLabels?: ReadonlyMap<string, Readonly<Record<string, string>> | undefined>;
  /** The object store's answer for the source key; an Error when it could not answer. */
  snapshot?: SnapshotHead | Error;
}

export type Verdict =
  | { kind: "ok"; auth: RestoreAuth; size?: number; forced: string[] }
  | { kind: "wait"; reason: OpenBaoRestoreReasonType; message: string }
  | { kind: "fail"; reason: OpenBaoRestoreReasonType; message: string };

/** The Secrets validation needs looked up (token and store credentials), so the caller can read them. */
export function secretsToCheck(r: OpenBaoRestore, c: OpenBaoCluster | undefined): string[] {
  const out: string[] = [];
  const auth = restoreAuth(r, c);
  if (auth?.method === "token") out.push(auth.secretName);
  const creds = r.spec.source.target.credentialsSecretRef?.name;
  if (creds) out.push(creds);
  return out;
}

/** Whether the snapshot is worth probing yet: everything before it in validateRestore passed. */
export function readyToProbe(o: Omit<RestoreObservation, "snapshot">): boolean {
  const v = validateRestore({ ...o, snapshot: { exists: true } });
  return v.kind === "ok";
}

export function validateRestore(o: RestoreObservation): Verdict {
  const r = o.restore;
  const c = o.cluster;
  const target = `OpenBaoCluster ${r.metadata.namespace}/${r.spec.cluster}`;
  // Immutable: a reference that names nothing now always will.
  const [unnamed] = emptyRestoreReferences(r.spec);
  if (unnamed) return { kind: "fail", reason: R.SecretReferenceMissingName, message: describeEmpty(unnamed) };
  if (!c)
    return { kind: "fail", reason: R.ClusterNotFound, message: `spec.cluster: ${target} does not exist` };
  if (c.metadata.deletionTimestamp)
    return { kind: "fail", reason: R.ClusterNotFound, message: `spec.cluster: ${target} is being deleted` };
  const egress = egressRulesMissing(c.spec, "restore");
  if (egress) return { kind: "fail", reason: R.NetworkEgressRulesRequired, message: `${target}: ${egress}` };
  if (c.status?.initialized !== true)
    return {
      kind: "wait",
      reason: R.ClusterNotInitialized,
      message: `${target} is not initialized yet; a snapshot can only be restored into an initialized cluster`,
    };
  const forced: string[] = [];
  const available = findCondition(c.status?.conditions, "Available");
  if (available?.status !== "True") {
    if (!r.spec.force)
      return {
        kind: "wait",
        reason: R.ClusterUnhealthy,
        message: `${target} is not Available (${available?.reason ?? "no Available condition"}); set spec.force: true on a new OpenBaoRestore to restore anyway`,
      };
    forced.push("ClusterUnhealthy");
  }
  const auth = restoreAuth(r, c);
  if (!auth)
    return {
      kind: "fail",
      reason: R.CredentialsMissing,
      message:
        "no OpenBao authentication: set spec.jwtAuthRole or spec.tokenSecretRef (or the cluster's spec.restore.jwtAuthRole, spec.backup.jwtAuthRole / tokenSecretRef)",
    };
  if (auth.method === "token" && !o.secretsFound.has(auth.secretName))
    return {
      kind: "wait",
      reason: R.CredentialsMissing,
      message: `token Secret ${auth.secretName} (tokenSecretRef) does not exist in ${r.metadata.namespace}`,
    };
  const unlabelled = restoreTokenLabelsMissing(r, o.secretLabels);
  if (unlabelled)
    return {
      kind: "wait",
      reason: R.CredentialsMissing,
      message: `token Secret ${r.spec.tokenSecretRef?.name} (tokenSecretRef) lacks the labels a restore token carries: ${unlabelled}; add them to let this restore use it`,
    };
  const [elsewhere] = credentialNamespaceProblems(restoreCredentialRefs(r.spec), r.metadata.namespace);
  if (elsewhere)
    return {
      kind: "fail",
      reason: R.CredentialsMissing,
      message: `${elsewhere.field}: ${elsewhere.message}`,
    };
  const creds = r.spec.source.target.credentialsSecretRef?.name;
  if (creds && !o.secretsFound.has(creds))
    return {
      kind: "wait",
      reason: R.CredentialsMissing,
      message: `credentials Secret ${creds} (spec.source.target.credentialsSecretRef) does not exist in ${r.metadata.namespace}`,
    };
  const where = `${r.spec.source.target.provider ?? "s3"} bucket ${r.spec.source.target.bucket}, key ${r.spec.source.key}`;
  if (o.snapshot instanceof Error)
    return {
      kind: "wait",
      reason: R.SnapshotNotFound,
      message: `cannot read the snapshot (${where}): ${o.snapshot.message}`,
    };
  if (!o.snapshot?.exists)
    return { kind: "fail", reason: R.SnapshotNotFound, message: `spec.source: no snapshot at ${where}` };
  return { kind: "ok", auth, size: o.snapshot.size, forced };
}

/**
 * Upstream (0.3.0) uses a static restore token only from a Secret labelled for it: its cluster
 * (openbao.org/cluster) and its purpose (openbao.org/credential-purpose: restore-token), so a token
 * Secret made for something else is never lent to a restore Job by a typo. The labels that are
 * missing or wrong, as `key=value` (undefined when all are there, or the restore's own
 * spec.tokenSecretRef is not what it logs in with: a JWT role, or the cluster's backup token). The
 * target cluster's own root-token Secret asks none: the operator wrote it for that cluster, so it
 * cannot be a Secret made for something else (the restore tests log in with it).
 */
export function restoreTokenLabelsMissing(
  r: OpenBaoRestore,
  labels: RestoreObservation["secretLabels"],
): string | undefined {
  const name = r.spec.tokenSecretRef?.name;
  if (!name || r.spec.jwtAuthRole || !labels?.has(name)) return undefined;
  if (name === clusterNames({ name: r.spec.cluster, namespace: r.metadata.namespace ?? "" }).rootTokenSecret)
    return undefined;
  const have = labels.get(name) ?? {};
  const want: [string, string][] = [
    [OpenBaoLabel.Cluster, r.spec.cluster],
    [OpenBaoLabel.CredentialPurpose, RestoreTokenPurpose],
  ];
  const missing = want.filter(([k, v]) => have[k] !== v).map(([k, v]) => `${k}=${v}`);
  return missing.length > 0 ? missing.join(", ") : undefined;
}
