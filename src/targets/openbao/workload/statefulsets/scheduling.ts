/**
 * Where read-replica pods run: `readReplicas.template.scheduling` (upstream 0.5's field) into the
 * pod spec as Kubernetes spells it. Voters take none: upstream has no voter field, and the schema
 * has already checked the shapes, so they pass as given (the API server validates them again).
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { Component, type ComponentName } from "../../identity.js";

type Obj = Record<string, unknown>;

const POD_FIELDS = ["affinity", "nodeSelector", "tolerations", "topologySpreadConstraints"] as const;

export function podScheduling(c: OpenBaoCluster, component: ComponentName): Obj {
  if (component !== Component.ReadReplica) return {};
  const scheduling = c.spec.readReplicas?.template?.scheduling as Obj | undefined;
  const out: Obj = {};
  for (const field of POD_FIELDS) {
    const value = scheduling?.[field];
    if (value === undefined) continue;
    if (
      Array.isArray(value)
        ? value.length === 0
        : typeof value === "object" && value !== null && Object.keys(value).length === 0
    )
      continue;
    out[field] = value;
  }
  return out;
}
