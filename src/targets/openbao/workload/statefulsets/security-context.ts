import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { type Platform, pinsPodIds } from "../../platform.js";

/**
 * The security contexts of the OpenBao pods (voters, read replicas, blue-green revisions).
 *
 * The pod's starts from the operator's hardened defaults (non-root as the image's `openbao` user,
 * uid 100, with group 1000 owning the volumes, seccomp RuntimeDefault); `spec.securityContext`
 * replaces them field by field, as upstream's does (OpenShift's SCCs, a site's own uid range), and
 * `workloadHardening.appArmorEnabled` sets the AppArmor profile last, over the spec's. Profile
 * Hardened refuses the values that weaken the pods before they get here (policies/hardened.ts).
 *
 * The container's is not configurable, upstream's neither: no privilege escalation, every
 * capability dropped.
 *
 * On OpenShift (platform.ts) the uid, gid and fsGroup defaults are left out, as upstream leaves
 * them: the namespace's SCC assigns them and would refuse the pod over ours. A value the spec sets
 * is still written; the SCC judges it.
 */

type Obj = Record<string, unknown>;

export const DEFAULT_POD_SECURITY_CONTEXT: Readonly<Obj> = Object.freeze({
  runAsNonRoot: true,
  runAsUser: 100,
  runAsGroup: 1000,
  fsGroup: 1000,
  seccompProfile: { type: "RuntimeDefault" },
});

export const OPENBAO_CONTAINER_SECURITY_CONTEXT: Readonly<Obj> = Object.freeze({
  allowPrivilegeEscalation: false,
  // Writable as it always was here (upstream's is read-only): changing it would change the pod
  // template of every running cluster, and so roll all of them on the operator's upgrade.
  readOnlyRootFilesystem: false,
  capabilities: { drop: ["ALL"] },
});

/** The operator's defaults that name ids: the platform may assign these instead. */
const ID_FIELDS = ["runAsUser", "runAsGroup", "fsGroup"] as const;

/**
 * The pod-level security context of an OpenBao pod. Pure; a fresh object each call. Kubernetes
 * (the default) gives the same object as before the platform setting existed.
 */
export function podSecurityContext(c: OpenBaoCluster, platform: Platform = "kubernetes"): Obj {
  const out: Obj = structuredClone({ ...DEFAULT_POD_SECURITY_CONTEXT });
  if (!pinsPodIds(platform)) for (const k of ID_FIELDS) delete out[k];
  const given = c.spec.securityContext as Obj | undefined;
  if (given) {
    // A field left out keeps the default; null (only from a JSON file, the API server prunes it)
    // is left out too rather than written into the pod.
    for (const [k, v] of Object.entries(given))
      if (v !== undefined && v !== null) out[k] = structuredClone(v);
  }
  if (c.spec.workloadHardening?.appArmorEnabled) out["appArmorProfile"] = { type: "RuntimeDefault" };
  return out;
}

/** The OpenBao container's security context. Pure; a fresh object each call. */
export function containerSecurityContext(): Obj {
  return structuredClone({ ...OPENBAO_CONTAINER_SECURITY_CONTEXT });
}
