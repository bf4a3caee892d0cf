import type { KubeObject } from "../../../runtime/types.js";
import { describeObject } from "../apply/objects.js";

export interface Readiness {
  ready: string[];
  notReady: { object: string; why: string }[];
}

interface WorkloadLike extends KubeObject {
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
}

const isWorkload = (o: KubeObject): boolean =>
  o.apiVersion === "apps/v1" && (o.kind === "Deployment" || o.kind === "StatefulSet");

/**
 * Readiness of the Deployments and StatefulSets among the applied objects, as their controllers
 * report it: the current generation observed, every desired replica updated and ready (available,
 * for a Deployment). Other kinds are not judged.
 */
export function workloadReadiness(live: readonly KubeObject[]): Readiness {
  const out: Readiness = { ready: [], notReady: [] };
  for (const o of live) {
    if (!isWorkload(o)) continue;
    const w = o as WorkloadLike;
    const name = describeObject(w);
    const want = w.spec?.replicas ?? 1;
    const s = w.status ?? {};
    let why: string | undefined;
    if ((s.observedGeneration ?? 0) < (w.metadata.generation ?? 0))
      why = "its controller has not seen the current spec";
    else if ((s.updatedReplicas ?? 0) < want) why = `${s.updatedReplicas ?? 0}/${want} replicas updated`;
    else if (w.kind === "Deployment" && (s.availableReplicas ?? 0) < want)
      why = `${s.availableReplicas ?? 0}/${want} replicas available`;
    else if ((s.readyReplicas ?? 0) < want) why = `${s.readyReplicas ?? 0}/${want} replicas ready`;
    else if (
      w.kind === "StatefulSet" &&
      s.updateRevision &&
      s.currentRevision !== s.updateRevision &&
      want > 0
    )
      why = "a rolling update is in progress";
    if (why) out.notReady.push({ object: name, why });
    else out.ready.push(name);
  }
  return out;
}
