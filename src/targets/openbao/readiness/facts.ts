/**
 * What the readiness conditions are decided from: objects a pass reads from the informers' caches,
 * gathered by observe.ts (the only part here that reads). Each lookup says found, missing or
 * forbidden, so the pure evaluators can tell "absent" from "may not look".
 */
import type { KubeObject } from "../../../runtime/types.js";

/** A read: the object, "missing" (404 or not in a synced cache), "forbidden" (RBAC), "not-served" (no CRD). */
export type Lookup = KubeObject | "missing" | "forbidden" | "not-served";

export const found = (l: Lookup | undefined): KubeObject | undefined =>
  typeof l === "object" ? l : undefined;

export interface GatewayFacts {
  /** The referenced Gateway; "not-served" while the Gateway kind is not (or the operator runs without it). */
  gateway: Lookup;
  /** The Gateway's class; undefined when the Gateway was not found or names none. */
  gatewayClass?: Lookup;
  /** The cluster's own HTTPRoute or TLSRoute; "not-served" when its kind is not. */
  route: Lookup;
}

export interface ReadinessFacts {
  /** Secrets the spec names (backup token and store credentials, seal credentials): name → lookup. */
  secrets: ReadonlyMap<string, Lookup>;
  /** Shared claims (spec.auditFileStorage, tls.acme.sharedCache): claim name → lookup. */
  claims: ReadonlyMap<string, Lookup>;
  /** The voter StatefulSet(s) of the cluster, for the audit mount. */
  statefulSets: readonly KubeObject[];
  /** Addresses of the API server the NetworkPolicy egress may use: what the spec gives and what was seen. */
  apiServer: { serviceIPs: string[]; endpointIPs: string[] };
  /** Set only with spec.gateway.enabled. */
  gateway?: GatewayFacts;
}
