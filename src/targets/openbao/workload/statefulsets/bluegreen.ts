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
import { refOf, servingRef, servingRevision } from "../../cluster-ref.js";
import {
  Component,
  clusterNames,
  LABEL_REVISION,
  podAddress,
  podSelector,
  revisionNames,
  revisionSelector,
  voterSetName,
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

/**
 * The client Service's selector: green alone once green can take over; otherwise the serving
 * revision's pods (after a completed blue-green upgrade), or every voter of the cluster's own set.
 */
export function clientSelector(c: BlueGreenView): Record<string, string> {
  const green = greenRevision(c);
  const ref = refOf(c);
  if (green && GREEN_SERVES.includes(phaseOf(c))) return revisionSelector(ref, green.revision);
  const serving = servingRevision(c);
  return serving ? revisionSelector(ref, serving) : podSelector(ref);
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
 * The voter StatefulSet `voter` (buildStatefulSet's output) as revision `revision`'s set: its own
 * name, the revision label on pods and selector, the revision's config map. Replicas, image and
 * update strategy stay the caller's (the serving revision keeps the rolling partition).
 */
export function asRevisionSet(c: BlueGreenView, voter: Obj, revision: string, replicas: number): Obj {
  const ref = refOf(c);
  const names = revisionNames(ref, revision);
  const meta = voter["metadata"] as Obj;
  const spec = voter["spec"] as Obj;
  const template = spec["template"] as Obj;
  const tmeta = (template["metadata"] ?? {}) as Obj;
  const podSpec = template["spec"] as Obj;
  const volumes = (podSpec["volumes"] as Obj[]).map((v) =>
    v["name"] === "config" ? revisionConfigVolume(c, v, names.configMap) : v,
  );
  const label = { [LABEL_REVISION]: revision };
  return {
    ...voter,
    metadata: { ...meta, name: names.statefulSet, labels: { ...(meta["labels"] as Obj), ...label } },
    spec: {
      ...spec,
      replicas,
      selector: { matchLabels: revisionSelector(ref, revision) },
      template: {
        ...template,
        metadata: { ...tmeta, labels: { ...(tmeta["labels"] as Obj), ...label } },
        spec: { ...podSpec, volumes },
      },
    },
  };
}

/**
 * The green StatefulSet from the voter StatefulSet `voter` (buildStatefulSet's output, rendered with
 * green's config hash): own name, revision label on pods and selector, green image, green config
 * map, no partition (a new set has nothing to hold back).
 */
export function buildGreenStatefulSet(c: BlueGreenView, voter: Obj, green: GreenRevision): Obj {
  const set = asRevisionSet(c, withImage(voter, green.image), green.revision, green.replicas);
  return { ...set, spec: { ...(set["spec"] as Obj), updateStrategy: { type: "RollingUpdate" } } };
}

/**
 * The serving voter set from `voter`: the cluster's own set, or the serving revision's after a
 * completed blue-green upgrade; while an upgrade runs pinned to blue's image, and emptied in Cleanup.
 */
export function buildServingStatefulSet(c: BlueGreenView, voter: Obj, replicas: number): Obj {
  const revision = servingRevision(c);
  const want = blueReplicas(c, replicas);
  const pinned = bluePinnedImage(c);
  const base = pinned ? withImage(voter, pinned) : voter;
  if (revision) return asRevisionSet(c, base, revision, want);
  return { ...base, spec: { ...(base["spec"] as Obj), replicas: want } };
}

/**
 * Where green's retry_join looks for a leader: the serving voters (blue leads while green joins),
 * then green's own pods (for a green pod restarted after green took over).
 */
export function greenPeerHosts(c: BlueGreenView, green: GreenRevision, clusterDomain: string): string[] {
  const serving = servingRef(c);
  const greenRef = { ...refOf(c), revision: green.revision };
  const blueCount = c.status?.blueGreen?.blueReplicas ?? c.spec.replicas ?? 3;
  return [
    ...Array.from({ length: blueCount }, (_, i) => podAddress(serving, i, Component.Server, clusterDomain)),
    ...Array.from({ length: green.replicas }, (_, i) =>
      podAddress(greenRef, i, Component.Server, clusterDomain),
    ),
  ];
}

/**
 * Which of the cluster's live voter StatefulSets (`live`, names) no longer serve and are not the
 * green revision being brought up: blue after a completed upgrade, green after a rollback. The
 * workload deletes them and their claims.
 */
export function retiredVoterSets(c: BlueGreenView, live: readonly string[]): string[] {
  const keep = new Set([voterSetName(servingRef(c))]);
  const green = greenRevision(c);
  if (green) keep.add(revisionNames(refOf(c), green.revision).statefulSet);
  return live.filter((n) => !keep.has(n));
}

/** Claims of set `set` among `claims` (names): the volumeClaimTemplate "data" makes `data-<set>-N`. */
export function claimsOfSet(set: string, claims: readonly string[]): string[] {
  const prefix = `data-${set}-`;
  return claims.filter((n) => n.startsWith(prefix) && /^(0|[1-9][0-9]*)$/.test(n.slice(prefix.length)));
}

/**
 * The projected config volume with the voters' config.hcl swapped for the revision's, in whichever
 * kind it is kept (a ConfigMap, or a Secret of the same name when it holds a credential).
 */
function revisionConfigVolume(c: BlueGreenView, v: Obj, configMap: string): Obj {
  const voterMap = clusterNames(refOf(c)).configMap;
  const projected = v["projected"] as { sources: Obj[] };
  return {
    ...v,
    projected: {
      ...projected,
      sources: projected.sources.map((s) => {
        for (const kind of ["configMap", "secret"] as const) {
          const src = s[kind] as Obj | undefined;
          if (src?.["name"] === voterMap) return { [kind]: { ...src, name: configMap } };
        }
        return s;
      }),
    },
  };
}
