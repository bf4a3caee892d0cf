/**
 * GatewayIntegrationReady, pure: upstream 0.5's checks in its order — the Gateway reference, the
 * Gateway's listeners, its GatewayClass (Accepted, SupportedVersion, the features the mode needs),
 * the Gateway's Programmed, then the cluster's own Route, ready only when its status for our parent
 * says Accepted and ResolvedRefs for the Route's current generation.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import { refOf } from "../cluster-ref.js";
import { clusterNames } from "../identity.js";
import type { Readiness } from "./contract.js";
import { found, type GatewayFacts, type Lookup } from "./facts.js";

export const GATEWAY_GROUP = "gateway.networking.k8s.io";

interface Cond {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}
type Obj = Record<string, unknown>;

const conditionsOf = (o: Obj | undefined): Cond[] =>
  ((o?.["status"] as { conditions?: Cond[] } | undefined)?.conditions ?? []) as Cond[];
const find = (list: Cond[], type: string) => list.find((c) => c.type === type);
const said = (c: Cond) => `${c.reason ?? ""}${c.message ? `: ${c.message}` : ""}`;

/** The Gateway the spec refers to: its namespace defaults to the cluster's. */
export function gatewayRefOf(c: OpenBaoCluster): { namespace: string; name: string } {
  const ref = c.spec.gateway?.gatewayRef;
  return {
    namespace: ref?.namespace?.trim() || c.metadata.namespace || "",
    name: ref?.name?.trim() ?? "",
  };
}

/** The Gateway API features the mode needs of the class. */
export function requiredFeatures(c: OpenBaoCluster): string[] {
  const g = c.spec.gateway;
  if (!g?.enabled) return [];
  if (g.tlsPassthrough) return ["TLSRoute"];
  const backendTLS = c.spec.tls?.enabled !== false && (g.backendTLS?.enabled ?? true);
  return backendTLS ? ["HTTPRoute", "BackendTLSPolicy"] : ["HTTPRoute"];
}

/** The cluster's own route: kind and name. */
export function routeOf(c: OpenBaoCluster): { kind: "HTTPRoute" | "TLSRoute"; name: string } {
  const names = clusterNames(refOf(c));
  return c.spec.gateway?.tlsPassthrough
    ? { kind: "TLSRoute", name: names.tlsRoute }
    : { kind: "HTTPRoute", name: names.httpRoute };
}

const no = (reason: Readiness["reason"], message: string): Readiness => ({
  status: "False",
  reason,
  message,
});
const unknown = (reason: Readiness["reason"], message: string): Readiness => ({
  status: "Unknown",
  reason,
  message,
});

const API_MISSING = no(
  R.GatewayAPIMissing,
  "the Gateway API CRDs spec.gateway needs are not installed (or this operator runs without the Gateway API)",
);

export function gatewayIntegration(c: OpenBaoCluster, f: GatewayFacts): Readiness {
  const ref = gatewayRefOf(c);
  const gwName = `${ref.namespace}/${ref.name}`;
  if (!ref.name)
    return no(
      R.GatewayReferenceMissing,
      "spec.gateway.gatewayRef.name must be set when spec.gateway.enabled",
    );
  const lookupProblem = (l: Lookup | undefined, what: string, missing: Readiness): Readiness | undefined => {
    if (l === "not-served") return API_MISSING;
    if (l === "forbidden")
      return unknown(R.GatewayCapabilitiesUnknown, `cannot verify ${what}: the operator may not read it`);
    if (l === "missing" || l === undefined) return missing;
    return undefined;
  };
  const gwProblem = lookupProblem(
    f.gateway,
    `Gateway ${gwName}`,
    no(R.GatewayReferenceMissing, `the referenced Gateway ${gwName} does not exist`),
  );
  if (gwProblem) return gwProblem;
  const gateway = found(f.gateway) as Obj;
  const listeners = listenerProblem(c, gateway, gwName);
  if (listeners) return listeners;
  const className = String((gateway["spec"] as Obj | undefined)?.["gatewayClassName"] ?? "").trim();
  if (!className) return no(R.GatewayClassMissing, `Gateway ${gwName} sets no spec.gatewayClassName`);
  const classProblem = lookupProblem(
    f.gatewayClass,
    `GatewayClass ${className}`,
    no(R.GatewayClassMissing, `GatewayClass ${className} (of Gateway ${gwName}) does not exist`),
  );
  if (classProblem) return classProblem;
  const gatewayClass = found(f.gatewayClass) as Obj;
  const classConds = conditionsOf(gatewayClass);
  const accepted = find(classConds, "Accepted");
  if (!accepted || accepted.status === "Unknown" || accepted.status === undefined)
    return unknown(R.GatewayClassPending, `GatewayClass ${className} has not said Accepted=True yet`);
  if (accepted.status === "False")
    return no(R.GatewayClassNotAccepted, `GatewayClass ${className} is not accepted (${said(accepted)})`);
  const version = find(classConds, "SupportedVersion");
  if (version?.status === "Unknown")
    return unknown(R.GatewayClassPending, `GatewayClass ${className} has not said SupportedVersion=True yet`);
  if (version?.status === "False")
    return no(
      R.GatewayVersionUnsupported,
      `GatewayClass ${className} does not support the installed Gateway API version (${said(version)})`,
    );
  const required = requiredFeatures(c);
  const supported = (
    ((gatewayClass["status"] as Obj | undefined)?.["supportedFeatures"] ?? []) as (
      | string
      | { name?: string }
    )[]
  ).map((x) => (typeof x === "string" ? x : (x.name ?? "")));
  if (supported.length === 0)
    return unknown(
      R.GatewayCapabilitiesUnknown,
      `GatewayClass ${className} publishes no status.supportedFeatures, so support for ${required.join(", ")} cannot be verified`,
    );
  const lacking = required.filter((x) => !supported.includes(x));
  if (lacking.length > 0)
    return no(
      R.GatewayFeatureUnsupported,
      `GatewayClass ${className} does not support ${lacking.join(", ")}`,
    );
  const programmed = find(conditionsOf(gateway), "Programmed");
  if (!programmed || programmed.status === "Unknown" || programmed.status === undefined)
    return unknown(R.GatewayProgrammingPending, `Gateway ${gwName} has not said Programmed=True yet`);
  if (programmed.status === "False")
    return no(R.GatewayNotProgrammed, `Gateway ${gwName} is not programmed (${said(programmed)})`);
  return routeReadiness(c, f.route, gatewayClass, ref, lookupProblem);
}

function listenerProblem(c: OpenBaoCluster, gateway: Obj, gwName: string): Readiness | undefined {
  const g = c.spec.gateway!;
  let listeners = ((gateway["spec"] as Obj | undefined)?.["listeners"] ?? []) as Obj[];
  const wanted = g.listenerName?.trim();
  if (wanted) {
    listeners = listeners.filter((l) => l["name"] === wanted);
    if (listeners.length === 0)
      return no(R.GatewayListenerIncompatible, `Gateway ${gwName} has no listener ${wanted}`);
  }
  const fits = (l: Obj) =>
    g.tlsPassthrough
      ? l["protocol"] === "TLS" && (l["tls"] as Obj | undefined)?.["mode"] === "Passthrough"
      : l["protocol"] === "HTTP" || l["protocol"] === "HTTPS";
  if (listeners.some(fits)) return undefined;
  return no(
    R.GatewayListenerIncompatible,
    g.tlsPassthrough
      ? `Gateway ${gwName} has no TLS listener in Passthrough mode for the TLSRoute`
      : `Gateway ${gwName} has no HTTP or HTTPS listener for the HTTPRoute`,
  );
}

function routeReadiness(
  c: OpenBaoCluster,
  lookup: Lookup | undefined,
  gatewayClass: Obj,
  ref: { namespace: string; name: string },
  lookupProblem: (l: Lookup | undefined, what: string, missing: Readiness) => Readiness | undefined,
): Readiness {
  const route = routeOf(c);
  const routeName = `${route.kind} ${c.metadata.namespace}/${route.name}`;
  const problem = lookupProblem(
    lookup,
    routeName,
    unknown(R.GatewayRoutePending, `${routeName} does not exist yet`),
  );
  if (problem) return problem;
  const obj = found(lookup)!;
  const generation = obj.metadata.generation;
  const controller = (gatewayClass["spec"] as Obj | undefined)?.["controllerName"];
  const listener = c.spec.gateway?.listenerName?.trim() ?? "";
  const parents = ((obj["status"] as Obj | undefined)?.["parents"] ?? []) as Obj[];
  const parent = parents.find((p) => {
    const pr = (p["parentRef"] ?? {}) as Obj;
    return (
      p["controllerName"] === controller &&
      (pr["group"] ?? GATEWAY_GROUP) === GATEWAY_GROUP &&
      (pr["kind"] ?? "Gateway") === "Gateway" &&
      pr["name"] === ref.name &&
      (pr["namespace"] ?? c.metadata.namespace) === ref.namespace &&
      (pr["sectionName"] ?? "") === listener &&
      pr["port"] === undefined
    );
  });
  if (!parent)
    return unknown(
      R.GatewayRoutePending,
      `${routeName} has no status from Gateway ${ref.namespace}/${ref.name}'s controller yet`,
    );
  const conds = (parent["conditions"] ?? []) as Cond[];
  const current = (x: Cond | undefined, status: string) =>
    x !== undefined && x.status === status && x.observedGeneration === generation;
  const accepted = find(conds, "Accepted");
  const resolved = find(conds, "ResolvedRefs");
  if (current(accepted, "False"))
    return no(R.GatewayRouteNotAccepted, `${routeName} was not accepted by its Gateway (${said(accepted!)})`);
  if (current(resolved, "False"))
    return no(
      R.GatewayRouteReferencesUnresolved,
      `${routeName} has unresolved references (${said(resolved!)})`,
    );
  if (!current(accepted, "True") || !current(resolved, "True"))
    return unknown(
      R.GatewayRoutePending,
      `${routeName} has not said Accepted=True and ResolvedRefs=True for its current generation yet`,
    );
  return {
    status: "True",
    reason: R.GatewayIntegrationReady,
    message: `Gateway ${ref.namespace}/${ref.name} is programmed and accepts ${routeName}`,
  };
}
