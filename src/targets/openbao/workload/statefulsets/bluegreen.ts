/**
 * The blue-green revision's side of the workload, pure. The workload controller stays the only
 * writer of StatefulSets and Services: it derives them from spec + status.blueGreen through these
 * functions, while the blue-green manager only moves status.blueGreen and Raft membership.
 *
 * - blue (the cluster's own StatefulSet) keeps status.blueGreen.blueImage while an upgrade runs;
 * - green exists from DeployingGreen to Cleanup (and through RollingBack), built from the voter
 *   StatefulSet with the green image, its own config (joining as a non-voter) and revision label;
 *   in RollbackCleanup it is gone again, and after Cleanup blue's pods are gone;
 * - the client Service selects every voter until green can take over (it votes: DemotingBlue), then
 *   green alone.
 */
import type { BlueGreenPhase, OpenBaoCluster, OpenBaoClusterSpec } from "../../../../apis/openbaocluster.js";
import { refOf } from "../../cluster-ref.js";
import {
  clusterNames,
  LABEL_REVISION,
  podSelector,
  revisionNames,
  revisionSelector,
} from "../../identity.js";

type Obj = Record<string, unknown>;

const GREEN_PHASES: readonly BlueGreenPhase[] = [
  "DeployingGreen",
  "JoiningMesh",
  "Syncing",
  "Promoting",
  "DemotingBlue",
  "Cleanup",
  "RollingBack",
];
const GREEN_SERVES: readonly BlueGreenPhase[] = ["DemotingBlue", "Cleanup"];

export interface GreenRevision {
  revision: string;
  image: string;
  replicas: number;
}

/** What the blue-green workload decisions read: identity, status.blueGreen and the voter count. */
export type BlueGreenView = Pick<OpenBaoCluster, "metadata" | "status"> & {
  spec: Pick<OpenBaoClusterSpec, "replicas">;
};

function phaseOf(c: BlueGreenView): BlueGreenPhase {
  return c.status?.blueGreen?.phase ?? "Idle";
}

/** The green revision the workload must run now, or undefined. */
export function greenRevision(c: BlueGreenView): GreenRevision | undefined {
  const bg = c.status?.blueGreen;
  if (!bg || !GREEN_PHASES.includes(phaseOf(c))) return undefined;
  if (!bg.greenRevision || !bg.greenImage) return undefined;
  return {
    revision: bg.greenRevision,
    image: bg.greenImage,
    replicas: bg.greenReplicas ?? c.spec.replicas ?? 3,
  };
}

/** Image blue is pinned to while an upgrade runs; undefined means the spec's image. */
export function bluePinnedImage(c: BlueGreenView): string | undefined {
  const bg = c.status?.blueGreen;
  return bg && phaseOf(c) !== "Idle" ? bg.blueImage : undefined;
}

/** Blue's replicas: none once Cleanup has taken Raft membership away from it. */
export function blueReplicas(c: BlueGreenView, replicas: number): number {
  return phaseOf(c) === "Cleanup" ? 0 : replicas;
}

/** The client Service's selector: every voter, or green alone once green can take over. */
export function clientSelector(c: BlueGreenView): Record<string, string> {
  const green = greenRevision(c);
  const ref = refOf(c);
  if (green && GREEN_SERVES.includes(phaseOf(c))) return revisionSelector(ref, green.revision);
  return podSelector(ref);
}

/** Sets the server container's image (the first container is OpenBao's). */
export function withImage(sts: Obj, image: string): Obj {
  const spec = sts["spec"] as Obj;
  const template = spec["template"] as Obj;
  const podSpec = template["spec"] as Obj;
  const [first, ...rest] = podSpec["containers"] as Obj[];
  if (!first) throw new Error("StatefulSet without containers");
  return {
    ...sts,
    spec: {
      ...spec,
      template: { ...template, spec: { ...podSpec, containers: [{ ...first, image }, ...rest] } },
    },
  };
}

/**
 * The green StatefulSet from the voter StatefulSet `voter` (buildStatefulSet's output): own name,
 * revision label on pods and selector, green image, green config map, no partition.
 */
export function buildGreenStatefulSet(c: OpenBaoCluster, voter: Obj, green: GreenRevision): Obj {
  const ref = refOf(c);
  const names = revisionNames(ref, green.revision);
  const base = withImage(voter, green.image);
  const meta = base["metadata"] as Obj;
  const spec = base["spec"] as Obj;
  const template = spec["template"] as Obj;
  const tmeta = (template["metadata"] ?? {}) as Obj;
  const podSpec = template["spec"] as Obj;
  const volumes = (podSpec["volumes"] as Obj[]).map((v) =>
    v["name"] === "config" ? greenConfigVolume(c, v, names.configMap) : v,
  );
  const label = { [LABEL_REVISION]: green.revision };
  return {
    ...base,
    metadata: { ...meta, name: names.statefulSet, labels: { ...(meta["labels"] as Obj), ...label } },
    spec: {
      ...spec,
      replicas: green.replicas,
      updateStrategy: { type: "RollingUpdate" },
      selector: { matchLabels: revisionSelector(ref, green.revision) },
      template: {
        ...template,
        metadata: { ...tmeta, labels: { ...(tmeta["labels"] as Obj), ...label } },
        spec: { ...podSpec, volumes },
      },
    },
  };
}

/** The projected config volume with the voter config map swapped for green's. */
function greenConfigVolume(c: OpenBaoCluster, v: Obj, configMap: string): Obj {
  const voterMap = clusterNames(refOf(c)).configMap;
  const projected = v["projected"] as { sources: Obj[] };
  return {
    ...v,
    projected: {
      ...projected,
      sources: projected.sources.map((s) => {
        const cm = s["configMap"] as Obj | undefined;
        return cm?.["name"] === voterMap ? { configMap: { ...cm, name: configMap } } : s;
      }),
    },
  };
}
