/**
 * Upstream 0.5's IngressIntegrationReady for the managed Ingress, pure: its IngressClass must exist
 * (False when it does not; Unknown when the operator may not read IngressClasses), and with
 * `readinessMode: LoadBalancerPublished` (the default) its controller must have published an
 * address (Unknown until then). `Created` only asks that the Ingress exists.
 */
import { OpenBaoClusterReason as R } from "../../../../apis/openbaocluster-names.js";
import type { IngressReadiness } from "../../services.js";

export type IngressClassLookup = "found" | "missing" | "forbidden" | "not-named";

export interface IngressFacts {
  /** The Ingress as written this pass (its status as the API server holds it); undefined when absent. */
  live: { metadata?: { name?: string; namespace?: string }; status?: unknown } | undefined;
  className: string | undefined;
  classLookup: IngressClassLookup;
  readinessMode: "Created" | "LoadBalancerPublished" | undefined;
}

export function ingressReadiness(f: IngressFacts): IngressReadiness {
  if (f.classLookup === "missing")
    return {
      status: "False",
      reason: R.IngressClassMissing,
      message: `spec.ingress.className names IngressClass ${f.className}, which does not exist`,
    };
  if (f.classLookup === "forbidden")
    return {
      status: "Unknown",
      reason: R.IngressCapabilitiesUnknown,
      message: `cannot verify IngressClass ${f.className}: the operator may not read IngressClasses`,
    };
  if (!f.live)
    return {
      status: "Unknown",
      reason: R.IngressObjectPending,
      message: "the managed Ingress does not exist yet",
    };
  const name = `${f.live.metadata?.namespace}/${f.live.metadata?.name}`;
  if ((f.readinessMode ?? "LoadBalancerPublished") === "LoadBalancerPublished" && !published(f.live.status))
    return {
      status: "Unknown",
      reason: R.IngressLoadBalancerPending,
      message: `Ingress ${name} has no load balancer address yet (readinessMode LoadBalancerPublished; Created does not wait for one)`,
    };
  return { status: "True", reason: R.IngressIntegrationReady, message: `Ingress ${name} is ready` };
}

function published(status: unknown): boolean {
  const lb = (status as { loadBalancer?: { ingress?: unknown[] } } | undefined)?.loadBalancer;
  return Array.isArray(lb?.ingress) && lb.ingress.length > 0;
}
