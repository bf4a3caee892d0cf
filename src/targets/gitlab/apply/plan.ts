import {
  GitLabCoreManagers,
  GitLabReleaseNameLabel,
  GitLabReleaseNamespaceLabel,
} from "../../../apis/gitlabcore-names.js";
import { groupOf } from "../../../runtime/ownership.js";
import { kindRank } from "../render/manifests.js";
import { kindKey, type RenderedObject } from "./rendered.js";

/** Every object and status the reconciler writes is owned by this field manager. */
export const FIELD_MANAGER = GitLabCoreManagers.fieldManager;

const RBAC_GROUP = "rbac.authorization.k8s.io";

/** Why a rendered object is never applied; the cluster administrator provisions these. */
export type ExcludedReason = "CustomResourceDefinition" | "RBAC";

/** Definitions and RBAC are the administrator's: the operator holds no rights to manage them. */
export function excludedReason(o: { apiVersion: string; kind: string }): ExcludedReason | undefined {
  const group = groupOf(o.apiVersion);
  if (group === "apiextensions.k8s.io" && o.kind === "CustomResourceDefinition")
    return "CustomResourceDefinition";
  if (group === RBAC_GROUP) return "RBAC";
  return undefined;
}

/** The labels that tie an object to its release; deletion finds cluster-scoped objects by them. */
export function releaseLabels(release: { name: string; namespace: string }): Record<string, string> {
  return { [GitLabReleaseNameLabel]: release.name, [GitLabReleaseNamespaceLabel]: release.namespace };
}

export const releaseSelector = (release: { name: string; namespace: string }): string =>
  `${GitLabReleaseNameLabel}=${release.name},${GitLabReleaseNamespaceLabel}=${release.namespace}`;

export interface ApplyPlan {
  /** What to apply, in install order, each carrying the release labels (owner references need the scope: see exec). */
  objects: RenderedObject[];
  excluded: { object: RenderedObject; reason: ExcludedReason }[];
}

/**
 * The objects of a render to apply: definitions and RBAC left out, the release labels stamped on
 * (over whatever the chart set under those keys), sorted in install order. Pure: no input is changed.
 */
export function planApply(
  objects: readonly RenderedObject[],
  release: { name: string; namespace: string },
): ApplyPlan {
  const labels = releaseLabels(release);
  const excluded: ApplyPlan["excluded"] = [];
  const kept: { o: RenderedObject; i: number }[] = [];
  objects.forEach((object, i) => {
    const reason = excludedReason(object);
    if (reason) excluded.push({ object, reason });
    else kept.push({ o: object, i });
  });
  kept.sort((a, b) => kindRank(a.o.kind) - kindRank(b.o.kind) || a.i - b.i);
  return {
    objects: kept.map(({ o }) => ({
      ...o,
      metadata: { ...o.metadata, labels: { ...(o.metadata.labels ?? {}), ...labels } },
    })),
    excluded,
  };
}

/** The kinds a plan covers, sorted and unique, as status.renderedKinds records them. */
export function kindsOf(objects: readonly RenderedObject[]): string[] {
  return [...new Set(objects.map(kindKey))].sort();
}
