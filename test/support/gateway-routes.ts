import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isConflict, isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { eventually } from "./kube.js";

// The Gateway API route kinds an OpenBaoCluster's gateway setting writes, as loose CRDs (no schema:
// no gateway controller runs here; only whether the kinds are served matters), each in a version
// the openbao target reads (workload/network/reconcile.ts, GATEWAY_VERSIONS).

const GROUP = "gateway.networking.k8s.io";

export const GATEWAY_ROUTE_KINDS = [
  { kind: "HTTPRoute", plural: "httproutes", version: "v1" },
  { kind: "TLSRoute", plural: "tlsroutes", version: "v1alpha2" },
  { kind: "BackendTLSPolicy", plural: "backendtlspolicies", version: "v1" },
] as const;

function routeCrd(kind: string, plural: string, version: string): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    // A protected group (*.k8s.io): the API server wants the approval annotation.
    metadata: {
      name: `${plural}.${GROUP}`,
      annotations: {
        "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/1538",
      },
    },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

/** Installs the three route kinds (an existing definition is left alone) and waits until each is served. */
export async function installGatewayRoutes(client: KubeClient): Promise<void> {
  for (const { kind, plural, version } of GATEWAY_ROUTE_KINDS)
    await client.create(CUSTOM_RESOURCE_DEFINITION, routeCrd(kind, plural, version)).catch((e: unknown) => {
      if (!isConflict(e)) throw e;
    });
  for (const { kind, version } of GATEWAY_ROUTE_KINDS)
    await eventually(
      async () => {
        client.resources.refresh();
        return client.resources.find(`${GROUP}/${version}`, kind);
      },
      60_000,
      `${kind} to be served`,
    );
}

/** Deletes the three route CRDs and waits until none is served any more. */
export async function removeGatewayRoutes(client: KubeClient): Promise<void> {
  for (const { plural } of GATEWAY_ROUTE_KINDS)
    await client.delete(CUSTOM_RESOURCE_DEFINITION, `${plural}.${GROUP}`).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
  for (const { kind, version } of GATEWAY_ROUTE_KINDS)
    await eventually(
      async () => {
        client.resources.refresh();
        return (await client.resources.find(`${GROUP}/${version}`, kind)) ? undefined : true;
      },
      60_000,
      `${kind} to be no longer served`,
    );
}
