import {
  type OpenBaoCluster,
  OpenBaoClusterKind,
  OpenBaoClusterPlural,
  OpenBaoGroup,
  OpenBaoVersion,
} from "../../apis/openbaocluster.js";
import type { ResourceType } from "../../runtime/types.js";
import type { ClusterRef } from "./identity.js";

/** The name and namespace identity.ts derives every object name from. */
export const refOf = (c: Pick<OpenBaoCluster, "metadata">): ClusterRef => ({
  name: c.metadata.name ?? "",
  namespace: c.metadata.namespace ?? "",
});

/** OpenBaoCluster as the client addresses it; shared by the workload, AdminOps and restore paths. */
export const OPENBAOCLUSTER: ResourceType = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoClusterKind,
  plural: OpenBaoClusterPlural,
  namespaced: true,
};
