import type { CachePruning } from "../../runtime/informer.js";

/**
 * What this target keeps of a cached pod: its metadata (OpenBao's service-registration labels,
 * owners, uid, deletion) and its status (phase, conditions, container states). Nothing here reads a
 * cached pod's spec (containers, volumes, env: most of a pod's bytes); code that needs it, such as
 * the upgrade and restore checks, lists pods from the API server.
 */
export const POD_PRUNING: CachePruning = {
  name: "openbao-pod-status",
  apply(pod) {
    delete pod["spec"];
    return pod;
  },
};
