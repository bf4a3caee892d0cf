/**
 * Dynamic resource claims (`resources.claims`, the API server's DRA) of the OpenBao container.
 *
 * A container's claim names one of its pod's `resourceClaims`; upstream's field gives only the
 * container's half, and a pod template whose container names a claim its pod does not declare is
 * refused by the API server. So each name the container asks for is declared on the pod, generated
 * from the ResourceClaimTemplate of the same name in the cluster's namespace: every pod of the
 * StatefulSet gets a claim of its own (one shared ResourceClaim would hold all replicas to the same
 * devices), which Kubernetes deletes with the pod.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The claim names the container's resources ask for, in their order, each once. */
export function containerClaimNames(resources: unknown): string[] {
  const claims = isObject(resources) ? resources["claims"] : undefined;
  if (!Array.isArray(claims)) return [];
  const names = claims.map((c) => (isObject(c) ? c["name"] : undefined));
  return [...new Set(names.filter((n): n is string => typeof n === "string" && n !== ""))];
}

/** The pod spec's `resourceClaims` for the container's claims; none without. */
export function podResourceClaims(resources: unknown): Obj {
  const names = containerClaimNames(resources);
  if (names.length === 0) return {};
  return { resourceClaims: names.map((name) => ({ name, resourceClaimTemplateName: name })) };
}
