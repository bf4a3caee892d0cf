/**
 * The claims every OpenBao pod shares, upstream 0.5's two: `spec.auditFileStorage` (where file audit
 * devices write, one subfolder per pod so pods never write the same file) and `spec.tls.acme.sharedCache`
 * (OpenBao's ACME account and certificates, one cache for every serving pod, so they order one
 * certificate instead of one each). Either is a claim the user made (`ExistingPVC`) or one the operator
 * creates (`ManagedPVC`, ReadWriteMany, upstream's names `<name>-audit` and `<name>-acme-cache`).
 * Pure: the I/O that creates managed claims is in steps/shared-claims.ts.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { OpenBaoLabel } from "../../../../apis/openbaocluster-names.js";
import { refOf } from "../../cluster-ref.js";
import { clusterLabels, clusterNames } from "../../identity.js";
import { auditMountPath } from "../config/audit-storage.js";
import { DEFAULT_PATHS } from "../config/options.js";

type Obj = Record<string, unknown>;

/** Each pod writes below its own name on the audit claim (upstream's subPathExpr). */
export const AUDIT_SUB_PATH_EXPR = "$(BAO_K8S_POD_NAME)";

export type SharedClaimPurpose = "audit" | "acme-cache";

export interface SharedClaim {
  purpose: SharedClaimPurpose;
  /** The spec field it comes from, for messages. */
  field: string;
  volumeName: string;
  claimName: string;
  mountPath: string;
  subPathExpr?: string;
  /** Set when the operator creates the claim (ManagedPVC). */
  managed?: { size: string; storageClassName?: string };
}

interface ClaimSpec {
  mode?: string;
  existingClaimName?: string;
  size?: string;
  storageClassName?: string;
}

function claimOf(
  spec: ClaimSpec,
  base: Omit<SharedClaim, "claimName" | "managed">,
  managedName: string,
): SharedClaim {
  if (spec.mode === "ExistingPVC") return { ...base, claimName: (spec.existingClaimName ?? "").trim() };
  return {
    ...base,
    claimName: managedName,
    managed: {
      size: spec.size ?? "",
      ...(spec.storageClassName ? { storageClassName: spec.storageClassName } : {}),
    },
  };
}

/** The shared claims the spec asks for, audit first. */
export function sharedClaims(c: OpenBaoCluster): SharedClaim[] {
  const names = clusterNames(refOf(c));
  const out: SharedClaim[] = [];
  const audit = c.spec.auditFileStorage;
  if (audit)
    out.push(
      claimOf(
        audit as ClaimSpec,
        {
          purpose: "audit",
          field: "spec.auditFileStorage",
          volumeName: "audit-storage",
          mountPath: auditMountPath(c)!,
          subPathExpr: AUDIT_SUB_PATH_EXPR,
        },
        `${refOf(c).name}-audit`,
      ),
    );
  const cache = c.spec.tls?.acme?.sharedCache;
  // Only ACME reads it (the schema refuses it elsewhere; TLS turned off leaves nothing to cache).
  if (cache && c.spec.tls?.enabled !== false && c.spec.tls?.mode === "ACME")
    out.push(
      claimOf(
        cache as ClaimSpec,
        {
          purpose: "acme-cache",
          field: "spec.tls.acme.sharedCache",
          volumeName: "acme-cache",
          // Where config.hcl already points tls_acme_cache_path: the file does not change.
          mountPath: DEFAULT_PATHS.acmeCacheDir,
        },
        names.acmeCacheClaim,
      ),
    );
  return out;
}

/** The pod volumes and the OpenBao container's mounts for the shared claims. */
export function sharedClaimVolumes(c: OpenBaoCluster): { volumes: Obj[]; mounts: Obj[] } {
  const claims = sharedClaims(c);
  return {
    volumes: claims.map((s) => ({ name: s.volumeName, persistentVolumeClaim: { claimName: s.claimName } })),
    mounts: claims.map((s) => ({
      name: s.volumeName,
      mountPath: s.mountPath,
      ...(s.subPathExpr ? { subPathExpr: s.subPathExpr } : {}),
    })),
  };
}

/**
 * The claim the operator creates for a ManagedPVC: ReadWriteMany (every pod mounts it, on any node),
 * labelled with the cluster so deletionPolicy DeletePVCs removes it with the data claims, and no owner
 * reference, so Retain keeps it as it keeps them. Its component label is its purpose, never `server`:
 * the voters' data claims are found by that label and grown with spec.storage.size.
 */
export function managedClaimObject(c: OpenBaoCluster, s: SharedClaim): Obj | undefined {
  if (!s.managed) return undefined;
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: s.claimName,
      namespace: c.metadata.namespace,
      labels: { ...clusterLabels(refOf(c)), [OpenBaoLabel.Component]: s.purpose },
    },
    spec: {
      accessModes: ["ReadWriteMany"],
      ...(s.managed.storageClassName ? { storageClassName: s.managed.storageClassName } : {}),
      resources: { requests: { storage: s.managed.size } },
    },
  };
}
