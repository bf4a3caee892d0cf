import type { OpenBaoCluster } from "../../apis/openbaocluster.js";
import type { ClusterRef } from "./identity.js";

/** The name and namespace identity.ts derives every object name from. */
export const refOf = (c: Pick<OpenBaoCluster, "metadata">): ClusterRef => ({
  name: c.metadata.name ?? "",
  namespace: c.metadata.namespace ?? "",
});
