import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterReason,
  type OpenBaoClusterReasonType,
} from "../../../../apis/openbaocluster-names.js";
import { PERSISTENT_VOLUME_CLAIM, POD } from "../../../../runtime/builtin-types.js";
import { isNotFound } from "../../../../runtime/errors.js";
import type { KubeObject, ResourceType } from "../../../../runtime/types.js";
import { isoTime } from "../../../../runtime/utc-time.js";
import type { Writes } from "../../apply.js";
import { Component, LABEL_CLUSTER, LABEL_COMPONENT } from "../../identity.js";
import type { ServiceContext } from "../../services.js";
import { type ClaimView, FS_RESIZE_PENDING, type PodView, planStorage } from "./plan.js";

const STORAGECLASS: ResourceType = {
  group: "storage.k8s.io",
  version: "v1",
  kind: "StorageClass",
  plural: "storageclasses",
  namespaced: false,
};

/** The volumeClaimTemplate's name: a voter pod P mounts the claim `data-P`. */
const CLAIM_TEMPLATE = "data";

interface ClaimTemplate {
  metadata?: { labels?: Record<string, string> };
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
}

/**
 * Size, class and labels of the live StatefulSet's data claim template, immutable once created:
 * the labels too, so a StatefulSet made with another managed-by value keeps its template.
 */
export function liveClaim(
  sts: KubeObject | undefined,
): { size?: string; storageClassName?: string; labels?: Record<string, string> } | undefined {
  const tpl = ((sts?.["spec"] as { volumeClaimTemplates?: ClaimTemplate[] } | undefined)
    ?.volumeClaimTemplates ?? [])[0];
  if (!tpl) return undefined;
  return {
    size: tpl.spec?.resources?.requests?.storage,
    storageClassName: tpl.spec?.storageClassName,
    ...(tpl.metadata?.labels ? { labels: tpl.metadata.labels } : {}),
  };
}

export interface StorageVerdict {
  reason: OpenBaoClusterReasonType;
  message: string;
  failed: boolean;
}

/** Where volume growth stands, for the StorageExpanded condition; null when none is asked for. */
export type StorageState = { expanded: boolean; reason: OpenBaoClusterReasonType; message: string } | null;

export interface StorageOutcome {
  /** Set when the later steps must wait (or the change is refused). */
  blocked?: StorageVerdict;
  state: StorageState;
}

/**
 * Storage after the workloads (plan in ./plan.ts): a class change or a shrink is refused; a bigger
 * size is written to each voter claim when the class allows expansion, else refused with upstream's
 * reason; a claim whose file system waits for a remount gets its pod restarted, one at a time.
 * Nothing is listed unless the size asks for growth, so a cluster that never grew pays nothing.
 * `blocked` is unset when nothing stops the later steps.
 */
export async function checkStorage(
  ctx: ServiceContext,
  cluster: OpenBaoCluster,
  sts: KubeObject | undefined,
  writes: Writes,
): Promise<StorageOutcome> {
  const live = liveClaim(sts);
  if (!live) return { state: null };
  const ns = cluster.metadata.namespace!;
  const replicas = ((sts?.["spec"] as { replicas?: number } | undefined)?.replicas ?? 1) as number;
  const base = {
    specSize: cluster.spec.storage.size,
    specClass: cluster.spec.storage.storageClassName,
    templateSize: live.size,
    templateClass: live.storageClassName,
    replicas,
    leader: cluster.status?.activeLeader,
    claimOf: (pod: string) => `${CLAIM_TEMPLATE}-${pod}`,
  };
  let plan = planStorage(base);
  if (plan.kind === "inspect") {
    const className = live.storageClassName ?? (await defaultClass(ctx));
    const sc = className ? await ctx.reader.get(STORAGECLASS, className) : undefined;
    const selector = `${LABEL_CLUSTER}=${cluster.metadata.name},${LABEL_COMPONENT}=${Component.Server}`;
    const claims = (
      await ctx.reader.list(PERSISTENT_VOLUME_CLAIM, { namespace: ns, labelSelector: selector })
    ).map(claimView);
    const inspected = {
      ...base,
      className,
      expansionAllowed: sc?.["allowVolumeExpansion"] === true,
      claims,
    };
    plan = planStorage(inspected);
    if (plan.kind === "inspect") {
      const pods = (await ctx.reader.list(POD, { namespace: ns, labelSelector: selector })).map(podView);
      plan = planStorage({ ...inspected, pods });
    }
  }
  switch (plan.kind) {
    case "none":
    case "inspect":
      return { state: null };
    case "settled":
      return {
        state: {
          expanded: plan.expanded,
          reason: plan.expanded
            ? OpenBaoClusterReason.StorageExpanded
            : OpenBaoClusterReason.StorageExpanding,
          message: plan.message,
        },
      };
    case "refuse": {
      const blocked = { reason: plan.reason, message: plan.message, failed: true };
      return { blocked, state: { expanded: false, reason: plan.reason, message: plan.message } };
    }
    case "wait":
      return {
        blocked: { reason: plan.reason, message: plan.message, failed: false },
        state: { expanded: false, reason: plan.reason, message: plan.message },
      };
    case "grow": {
      for (const name of plan.claims) {
        writes.record("grow-volume", `PersistentVolumeClaim/${name}`);
        if (writes.dryRun) continue;
        await ctx.client.mergePatch(PERSISTENT_VOLUME_CLAIM, name, ns, {
          spec: { resources: { requests: { storage: plan.size } } },
        });
      }
      const message = `asked for ${plan.size} on ${plan.claims.join(", ")}`;
      if (!writes.dryRun)
        ctx.events.record(cluster, {
          type: "Normal",
          reason: OpenBaoClusterReason.StorageExpanding,
          action: "Resize",
          note: message,
        });
      // The file systems may still need their pods restarted: a later pass sees the conditions.
      return { state: { expanded: false, reason: OpenBaoClusterReason.StorageExpanding, message } };
    }
    case "restart":
      writes.record("delete", `Pod/${plan.pod}`);
      if (!writes.dryRun) {
        try {
          // The uid precondition: only the pod this plan looked at, never its replacement.
          await ctx.client.delete(POD, plan.pod, ns, { preconditions: { uid: plan.uid } });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        ctx.log.info({ pod: plan.pod }, "restarted a voter so its volume's file system grows");
        ctx.events.record(cluster, {
          type: "Normal",
          reason: OpenBaoClusterReason.StorageRestartRequired,
          action: "Restart",
          note: plan.message,
        });
      }
      return {
        blocked: {
          reason: OpenBaoClusterReason.StorageRestartRequired,
          message: plan.message,
          failed: false,
        },
        state: {
          expanded: false,
          reason: OpenBaoClusterReason.StorageRestartRequired,
          message: plan.message,
        },
      };
  }
}

function claimView(c: KubeObject): ClaimView {
  const spec = (c["spec"] ?? {}) as ClaimTemplate["spec"];
  const status = (c["status"] ?? {}) as {
    capacity?: { storage?: string };
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
  };
  const pending = status.conditions?.find((x) => x.type === FS_RESIZE_PENDING && x.status === "True");
  return {
    name: c.metadata.name!,
    request: spec?.resources?.requests?.storage,
    capacity: status.capacity?.storage,
    // A condition without a time is treated as older than every pod: nothing restarts for it.
    fsResizePendingSince: pending ? (pending.lastTransitionTime ?? isoTime(0)) : undefined,
  };
}

function podView(p: KubeObject): PodView {
  const conditions = ((p["status"] as { conditions?: { type: string; status: string }[] } | undefined)
    ?.conditions ?? []) as { type: string; status: string }[];
  return {
    name: p.metadata.name!,
    uid: p.metadata.uid!,
    creationTimestamp: p.metadata.creationTimestamp ?? isoTime(0),
    ready: conditions.some((c) => c.type === "Ready" && c.status === "True"),
    deleting: p.metadata.deletionTimestamp !== undefined && p.metadata.deletionTimestamp !== null,
  };
}

async function defaultClass(ctx: ServiceContext): Promise<string | undefined> {
  const all = await ctx.reader.list(STORAGECLASS);
  return all.find((s) => s.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"] === "true")
    ?.metadata.name;
}
