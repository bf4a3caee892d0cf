import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { PERSISTENT_VOLUME_CLAIM } from "../../../runtime/builtin-types.js";
import { ApiError } from "../../../runtime/errors.js";
import type { KubeObject } from "../../../runtime/types.js";
import { managedClaimObject, sharedClaims } from "../workload/statefulsets/shared-claims.js";
import type { PassBase } from "./context.js";

/**
 * Creates the ManagedPVC claims of spec.auditFileStorage and spec.tls.acme.sharedCache before the
 * pods that mount them. Created once and then left alone, as the data claims are: a claim's class and
 * access modes cannot change, and a user who resized one by hand keeps that size. An ExistingPVC is the
 * user's: a missing one leaves the pods Pending, which the pods' own status reports.
 */
export async function ensureSharedClaims(pass: PassBase): Promise<void> {
  const { cluster, ctx, writes } = pass;
  const ns = cluster.metadata.namespace!;
  for (const s of sharedClaims(cluster)) {
    const claim = managedClaimObject(cluster, s);
    if (!claim) continue;
    if (await ctx.reader.get(PERSISTENT_VOLUME_CLAIM, s.claimName, ns)) continue;
    if (writes.dryRun) {
      writes.record("create", `PersistentVolumeClaim/${s.claimName}`);
      continue;
    }
    try {
      await ctx.client.create(PERSISTENT_VOLUME_CLAIM, claim as unknown as KubeObject);
      writes.record("create", `PersistentVolumeClaim/${s.claimName}`);
      ctx.events.record(cluster, {
        type: "Normal",
        reason: OpenBaoClusterReason.SharedClaimCreated,
        action: "Create",
        note: `created the ReadWriteMany claim ${s.claimName} for ${s.field}`,
      });
    } catch (e) {
      // Created by another pass (or a restarted operator) first: that claim stands.
      if (!(e instanceof ApiError && e.code === 409)) throw e;
    }
  }
}
