import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { parseQuantity as quantityBytes } from "../../../../runtime/quantity.js";
import type { KubeObject, ResourceType } from "../../../../runtime/types.js";
import type { ServiceContext } from "../../services.js";
import type { Writes } from "../statefulsets/reconcile.js";

const STORAGECLASS: ResourceType = {
  group: "storage.k8s.io",
  version: "v1",
  kind: "StorageClass",
  plural: "storageclasses",
  namespaced: false,
};
const PVC: ResourceType = {
  group: "",
  version: "v1",
  kind: "PersistentVolumeClaim",
  plural: "persistentvolumeclaims",
  namespaced: true,
};

interface ClaimTemplate {
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
}

/** Size and class of the live StatefulSet's data claim template (immutable once created). */
export function liveClaim(
  sts: KubeObject | undefined,
): { size?: string; storageClassName?: string } | undefined {
  const tpl = ((sts?.["spec"] as { volumeClaimTemplates?: ClaimTemplate[] } | undefined)
    ?.volumeClaimTemplates ?? [])[0];
  if (!tpl) return undefined;
  return { size: tpl.spec?.resources?.requests?.storage, storageClassName: tpl.spec?.storageClassName };
}

export interface StorageVerdict {
  reason: string;
  message: string;
  failed: boolean;
}

/**
 * Storage after the workloads: a class change is refused (claims cannot move); a bigger size is
 * applied to each claim when the class allows expansion, else refused with upstream's reason. A
 * smaller size never reaches here (the schema refuses a shrink). Returns undefined when nothing
 * blocks the later steps.
 */
export async function checkStorage(
  ctx: ServiceContext,
  cluster: OpenBaoCluster,
  sts: KubeObject | undefined,
  writes: Writes,
): Promise<StorageVerdict | undefined> {
  const live = liveClaim(sts);
  if (!live) return undefined;
  const want = cluster.spec.storage;
  if (want.storageClassName && live.storageClassName && want.storageClassName !== live.storageClassName)
    return {
      reason: "StorageClassChangeNotSupported",
      message: `spec.storage.storageClassName ${want.storageClassName} differs from the volumes' class ${live.storageClassName}; claims cannot change class`,
      failed: true,
    };
  const wantBytes = quantityBytes(want.size);
  const haveBytes = live.size ? quantityBytes(live.size) : undefined;
  if (wantBytes === undefined)
    return {
      reason: "StorageInvalidSize",
      message: `spec.storage.size ${want.size} is not a quantity`,
      failed: true,
    };
  if (haveBytes === undefined || wantBytes <= haveBytes) return undefined;
  const className = live.storageClassName ?? (await defaultClass(ctx));
  const sc = className ? await ctx.client.getOrUndefined(STORAGECLASS, className) : undefined;
  if (sc?.["allowVolumeExpansion"] !== true)
    return {
      reason: "StorageResizeNotSupported",
      message: `spec.storage.size ${want.size} is larger than ${live.size}, but StorageClass ${className ?? "(default)"} does not allow volume expansion`,
      failed: true,
    };
  // Expansion allowed: grow every claim of the cluster; the file system grows when the volume does.
  const claims = await ctx.client.list(PVC, {
    namespace: cluster.metadata.namespace,
    labelSelector: `openbao.org/cluster=${cluster.metadata.name}`,
  });
  for (const c of claims.items) {
    const size = (c["spec"] as ClaimTemplate["spec"])?.resources?.requests?.storage;
    if (size && (quantityBytes(size) ?? 0) >= wantBytes) continue;
    writes.record("grow-volume", `PersistentVolumeClaim/${c.metadata.name}`);
    if (!writes.dryRun)
      await ctx.client.mergePatch(PVC, c.metadata.name!, cluster.metadata.namespace, {
        spec: { resources: { requests: { storage: want.size } } },
      });
  }
  return undefined;
}

async function defaultClass(ctx: ServiceContext): Promise<string | undefined> {
  const all = await ctx.client.list(STORAGECLASS);
  return all.items.find(
    (s) => s.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"] === "true",
  )?.metadata.name;
}
