import type { OpenBaoCluster, OpenBaoClusterSpec } from "../../../apis/openbaocluster.js";
import { OpenBaoApiVersion, OpenBaoClusterKind, OpenBaoLabel } from "../../../apis/openbaocluster-names.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreKind } from "../../../apis/openbaorestore-names.js";
import type { KubeObject } from "../../../runtime/types.js";
import { isoTime } from "../../../runtime/utc-time.js";
import { refOf } from "../cluster-ref.js";
import { clusterNames } from "../identity.js";
import { UNSEAL_KEY_FILE } from "../workload/config/unseal-key.js";
import { RunAnnotation, throwawayClusterName, throwawayRestoreName } from "./names.js";
import type { Run } from "./plan.js";

/**
 * The objects of a restore test, built from the source. Pure.
 *
 * The throwaway takes from the source what decides whether its data opens and reads: the version and
 * image, the seal (for the static seal, a copy of the source's key under the throwaway's Secret
 * name, written before the cluster so its own random key is never made), the configuration and
 * plugins, storage class and pod settings. It leaves what would reach outside or cost: one voter,
 * no read replicas, no backups or upgrades, no Ingress, Gateway or self-init (the operator
 * initializes it, so the restore has a token), and deletionPolicy DeleteAll so its finalizer
 * removes its volumes and Secrets.
 */

const ownerRef = (source: OpenBaoCluster) => ({
  apiVersion: OpenBaoApiVersion,
  kind: OpenBaoClusterKind,
  name: source.metadata.name!,
  uid: source.metadata.uid!,
  // Not the controller: the throwaway is a cluster of its own; this only lets garbage collection
  // take it with its source.
  blockOwnerDeletion: false,
});

const runLabels = (source: OpenBaoCluster) => ({ [OpenBaoLabel.RestoreTestOf]: source.metadata.name! });

/** Whether the source uses the operator's static seal (unseal omitted or type static). */
export const staticSeal = (c: OpenBaoCluster): boolean => !c.spec.unseal || c.spec.unseal.type === "static";

/** Spec fields copied as they are. */
const COPIED = [
  "version",
  "image",
  "imagePullSecrets",
  "resources",
  "configuration",
  "unseal",
  "plugins",
  "securityContext",
  "initContainer",
  "runtime",
] as const satisfies readonly (keyof OpenBaoClusterSpec)[];

export function throwawayCluster(source: OpenBaoCluster, run: Run): OpenBaoCluster {
  const spec: Record<string, unknown> = {};
  for (const k of COPIED) if (source.spec[k] !== undefined) spec[k] = structuredClone(source.spec[k]);
  spec["replicas"] = 1;
  // Its own volume, sized and classed as the source's.
  spec["storage"] = structuredClone(source.spec.storage);
  spec["deletionPolicy"] = "DeleteAll";
  const tls = source.spec.tls;
  // An External certificate names the source's hosts; the throwaway gets one of its own.
  if (tls && tls.mode !== "External" && tls.mode !== "ACME") spec["tls"] = structuredClone(tls);
  return {
    apiVersion: OpenBaoApiVersion,
    kind: OpenBaoClusterKind,
    metadata: {
      name: throwawayClusterName(source.metadata.name!),
      namespace: source.metadata.namespace!,
      labels: runLabels(source),
      annotations: {
        [RunAnnotation.key]: run.key,
        [RunAnnotation.window]: run.window,
        [RunAnnotation.startedAt]: isoTime(run.startedAt),
      },
      ownerReferences: [ownerRef(source)],
    },
    spec: spec as OpenBaoClusterSpec,
  } as OpenBaoCluster;
}

/** The source's static seal key, under the throwaway's Secret name. */
export function sealKeyCopy(source: OpenBaoCluster, key: string): KubeObject {
  const name = clusterNames({
    name: throwawayClusterName(source.metadata.name!),
    namespace: source.metadata.namespace!,
  }).unsealKeySecret;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: source.metadata.namespace!,
      labels: { ...runLabels(source), [OpenBaoLabel.Cluster]: throwawayClusterName(source.metadata.name!) },
      ownerReferences: [ownerRef(source)],
    },
    type: "Opaque",
    data: { [UNSEAL_KEY_FILE]: key },
  } as KubeObject;
}

/** The OpenBaoRestore of the run's key into the throwaway, with the throwaway's own root token. */
export function throwawayRestore(
  source: OpenBaoCluster,
  throwaway: OpenBaoCluster,
  run: Run,
): OpenBaoRestore {
  const name = throwaway.metadata.name!;
  const target = structuredClone(source.spec.backup!.target);
  return {
    apiVersion: OpenBaoApiVersion,
    kind: OpenBaoRestoreKind,
    metadata: {
      name: throwawayRestoreName(name),
      namespace: source.metadata.namespace!,
      labels: runLabels(source),
      annotations: { [RunAnnotation.key]: run.key },
      ownerReferences: [
        {
          apiVersion: OpenBaoApiVersion,
          kind: OpenBaoClusterKind,
          name,
          uid: throwaway.metadata.uid!,
          blockOwnerDeletion: false,
        },
      ],
    },
    spec: {
      cluster: name,
      source: { target, key: run.key },
      tokenSecretRef: { name: clusterNames(refOf(throwaway)).rootTokenSecret },
      ...(source.spec.backup?.image ? { image: source.spec.backup.image } : {}),
    },
  } as OpenBaoRestore;
}

/** The run a throwaway serves, from its annotations; undefined when they are missing or broken. */
export function runOf(throwaway: KubeObject): Run | undefined {
  const a = throwaway.metadata.annotations ?? {};
  const key = a[RunAnnotation.key];
  const started = Date.parse(a[RunAnnotation.startedAt] ?? "");
  if (!key || Number.isNaN(started)) return undefined;
  return { key, window: a[RunAnnotation.window] ?? "", startedAt: new Date(started) };
}
