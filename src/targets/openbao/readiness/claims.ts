/**
 * AuditFileStorageReady and ACMECacheReady, pure: the shared claim must exist, offer ReadWriteMany
 * (every pod mounts it, on any node) and be Bound; the audit claim must also be mounted the way the
 * pods expect in every StatefulSet of the cluster (upstream: StatefulSetRecreateRequired otherwise).
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import type { KubeObject } from "../../../runtime/types.js";
import { type SharedClaim, sharedClaims } from "../workload/statefulsets/shared-claims.js";
import type { Readiness } from "./contract.js";
import { found, type Lookup } from "./facts.js";

type Obj = Record<string, unknown>;

const claimOf = (c: OpenBaoCluster, purpose: SharedClaim["purpose"]) =>
  sharedClaims(c).find((s) => s.purpose === purpose);

/** The ACME cache is required when more than one pod serves (upstream refuses that without one). */
function acmeCacheRequired(c: OpenBaoCluster): boolean {
  const readReplicas = (c.spec.readReplicas as { replicas?: number } | undefined)?.replicas ?? 0;
  return (c.spec.replicas ?? 3) > 1 || readReplicas > 0;
}

export const acmeMode = (c: OpenBaoCluster): boolean =>
  c.spec.tls?.enabled !== false && c.spec.tls?.mode === "ACME";

/** Whether ACMECacheReady applies: ACME, and a cache configured or needed. */
export const acmeCacheApplies = (c: OpenBaoCluster): boolean =>
  acmeMode(c) && (acmeCacheRequired(c) || claimOf(c, "acme-cache") !== undefined);

function claimState(l: Lookup | undefined): "missing" | "unreadable" | "rwo" | "pending" | "ready" {
  if (l === "forbidden") return "unreadable";
  const pvc = found(l);
  if (!pvc) return "missing";
  const modes = ((pvc["spec"] as Obj | undefined)?.["accessModes"] ?? []) as string[];
  if (!modes.includes("ReadWriteMany")) return "rwo";
  return (pvc["status"] as Obj | undefined)?.["phase"] === "Bound" ? "ready" : "pending";
}

const phaseOf = (l: Lookup | undefined) =>
  String((found(l)?.["status"] as Obj | undefined)?.["phase"] ?? "none");

export function acmeCache(c: OpenBaoCluster, claims: ReadonlyMap<string, Lookup>): Readiness {
  const ns = c.metadata.namespace;
  const claim = claimOf(c, "acme-cache");
  if (!claim?.claimName)
    return {
      status: "False",
      reason: R.ACMECacheNotConfigured,
      message:
        "more than one pod serves with tls.mode ACME: set spec.tls.acme.sharedCache (a ReadWriteMany claim)",
    };
  const name = `${ns}/${claim.claimName}`;
  const l = claims.get(claim.claimName);
  switch (claimState(l)) {
    case "unreadable":
      return { status: "Unknown", reason: R.Unknown, message: `cannot read the ACME cache claim ${name}` };
    case "missing":
      return {
        status: "False",
        reason: R.ACMECacheMissing,
        message: `the ACME cache claim ${name} does not exist`,
      };
    case "rwo":
      return {
        status: "False",
        reason: R.ACMECacheInvalidAccessMode,
        message: `the ACME cache claim ${name} does not offer ReadWriteMany`,
      };
    case "pending":
      return {
        status: "False",
        reason: R.ACMECachePending,
        message: `the ACME cache claim ${name} is not Bound yet (phase ${phaseOf(l)})`,
      };
    default:
      return {
        status: "True",
        reason: R.ACMECacheReady,
        message: `the ACME cache claim ${name} is Bound, ReadWriteMany`,
      };
  }
}

export function auditFileStorage(
  c: OpenBaoCluster,
  claims: ReadonlyMap<string, Lookup>,
  statefulSets: readonly KubeObject[],
): Readiness {
  const ns = c.metadata.namespace;
  const claim = claimOf(c, "audit")!;
  if (!claim.claimName)
    return {
      status: "False",
      reason: R.AuditFileStorageMissing,
      message: "spec.auditFileStorage is ExistingPVC but names no claim (existingClaimName)",
    };
  const name = `${ns}/${claim.claimName}`;
  const l = claims.get(claim.claimName);
  switch (claimState(l)) {
    case "unreadable":
      return { status: "Unknown", reason: R.Unknown, message: `cannot read the audit claim ${name}` };
    case "missing":
      return {
        status: "False",
        reason: R.AuditFileStorageMissing,
        message: `the audit claim ${name} does not exist`,
      };
    case "rwo":
      return {
        status: "False",
        reason: R.AuditFileStorageInvalidAccessMode,
        message: `the audit claim ${name} does not offer ReadWriteMany`,
      };
    case "pending":
      return {
        status: "False",
        reason: R.AuditFileStoragePending,
        message: `the audit claim ${name} is not Bound yet (phase ${phaseOf(l)})`,
      };
  }
  const unmounted = statefulSets.find((s) => !mountsAudit(s, claim));
  if (unmounted)
    return {
      status: "False",
      reason: R.AuditFileStorageStatefulSetRecreateRequired,
      message: `StatefulSet ${ns}/${unmounted.metadata.name} does not mount the audit claim ${claim.claimName} at ${claim.mountPath} yet`,
    };
  return {
    status: "True",
    reason: R.AuditFileStorageReady,
    message: `the audit claim ${name} is Bound, ReadWriteMany, and mounted by every StatefulSet`,
  };
}

function mountsAudit(sts: KubeObject, claim: SharedClaim): boolean {
  const pod = ((sts["spec"] as Obj | undefined)?.["template"] as Obj | undefined)?.["spec"] as
    | Obj
    | undefined;
  const volumes = (pod?.["volumes"] ?? []) as Obj[];
  const volume = volumes.find((v) => v["name"] === claim.volumeName);
  if ((volume?.["persistentVolumeClaim"] as Obj | undefined)?.["claimName"] !== claim.claimName) return false;
  const container = ((pod?.["containers"] ?? []) as Obj[]).find((x) => x["name"] === "openbao");
  return ((container?.["volumeMounts"] ?? []) as Obj[]).some(
    (m) =>
      m["name"] === claim.volumeName &&
      m["mountPath"] === claim.mountPath &&
      (m["subPathExpr"] ?? undefined) === claim.subPathExpr,
  );
}
