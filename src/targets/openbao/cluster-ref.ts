import type { OpenBaoCluster } from "../../apis/openbaocluster.js";
import {
  OpenBaoClusterKind,
  OpenBaoClusterPlural,
  OpenBaoGroup,
  OpenBaoVersion,
} from "../../apis/openbaocluster-names.js";
import type { ResourceType } from "../../runtime/types.js";
import { type ClusterRef, clusterRefOf } from "./identity.js";

/** The name, namespace and peer Service identity.ts derives every object name from. */
export const refOf = (c: Pick<OpenBaoCluster, "metadata">): ClusterRef => clusterRefOf(c.metadata);

/**
 * The revision serving the cluster's voters, from status alone: status.blueGreen.blueRevision, which
 * a completed blue-green upgrade sets to the green revision it promoted (and a rollback leaves
 * alone). Undefined: the cluster's own `<name>` StatefulSet, as before any blue-green upgrade.
 * Throughout an upgrade this stays blue's revision; it moves only when Cleanup finishes.
 */
export function servingRevision(c: Pick<OpenBaoCluster, "status">): string | undefined {
  return c.status?.blueGreen?.blueRevision || undefined;
}

/** refOf narrowed to the serving revision: what every name of a voter pod or set derives from. */
export const servingRef = (c: Pick<OpenBaoCluster, "metadata" | "status">): ClusterRef => {
  const revision = servingRevision(c);
  return revision ? { ...refOf(c), revision } : refOf(c);
};

/**
 * Every voter set that may have pods now: the serving one, and while a blue-green upgrade runs
 * (any phase but Idle) the green revision's. What names every voter pod, e.g. in a Role.
 */
export function voterRefs(c: Pick<OpenBaoCluster, "metadata" | "status">): ClusterRef[] {
  const bg = c.status?.blueGreen;
  const serving = servingRef(c);
  const green = bg && (bg.phase ?? "Idle") !== "Idle" ? bg.greenRevision : undefined;
  return green && green !== serving.revision ? [serving, { ...refOf(c), revision: green }] : [serving];
}

/** OpenBaoCluster as the client addresses it; shared by the workload, AdminOps and restore paths. */
export const OPENBAOCLUSTER: ResourceType = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoClusterKind,
  plural: OpenBaoClusterPlural,
  namespaced: true,
};
