import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { CUSTOM_RESOURCE_DEFINITION, SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { Manager } from "../../src/runtime/manager.js";
import { registry } from "../../src/runtime/metrics.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { LABEL_CLUSTER } from "../../src/targets/openbao/identity.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import type { ApiForwarder, ForwardedRequest } from "../support/api-forwarder.js";
import { GATEWAY_ROUTE_KINDS, installGatewayRoutes, removeGatewayRoutes } from "../support/gateway-routes.js";
import { eventually } from "../support/kube.js";
import { createOpenBaoCluster } from "../support/openbao-cluster.js";
import { metricSum } from "../support/openbao-operator.js";
import { type PrivateOpenBaoPlane, startPrivateOpenBaoPlane } from "../support/openbao-private-plane.js";

// The openbao target on a real API server of its own (so this file may install and delete the
// Gateway API's CRDs), every request it sends seen by a loopback forwarder: once a cluster's
// passes stop changing anything, a pass must read nothing from the API server (its reads come from
// the informers' caches) and write nothing — with the Gateway API route kinds served (their
// informers start once discovery finds them), after their CRDs go (the informers stop), and after
// they come back. Watches are the caches' own and are not a pass's; on a bare API server (no node)
// a pass goes as far as it can without pods: certificates, config, networking, identity,
// StatefulSet, PDB, then waits for pod 0.

const NAME = "bao";
const ROUTES = new Set<string>(GATEWAY_ROUTE_KINDS.map((k) => k.plural));
const HTTPROUTE: ResourceType = {
  group: "gateway.networking.k8s.io",
  version: "v1",
  kind: "HTTPRoute",
  plural: "httproutes",
  namespaced: true,
};

const isWatch = (r: ForwardedRequest) => r.query.get("watch") === "true";
const line = (r: ForwardedRequest) => `${r.method} ${r.path}${r.query.size ? `?${r.query}` : ""}`;
const reconciles = async () =>
  metricSum(await registry.metrics(), "controller_runtime_reconcile_total", { controller: "openbaocluster" });
const reconcileErrors = async () =>
  metricSum(await registry.metrics(), "controller_runtime_reconcile_errors_total", {
    controller: "openbaocluster",
  });

describe("openbao target: a quiet pass sends no request", () => {
  let admin: KubeClient;
  let fwd: ApiForwarder;
  let client: KubeClient;
  let manager: Manager;
  let ns: string;

  /** The route kinds an informer runs for now. */
  const routeInformers = () =>
    manager
      .informerScopes()
      .map((i) => i.resource)
      .filter((r) => ROUTES.has(r))
      .sort();

  /** The requests other than watches over `passes` passes, once discovery has nothing left to look at. */
  async function quietPasses(passes: number): Promise<{ requests: string[]; passes: number }> {
    await manager.discoverySettled();
    // Events said while converging are written in the background; on a loaded machine the last of
    // them can still be on its way after two passes without a write.
    await manager.events.flush();
    const from = fwd.requests.length;
    const start = await reconciles();
    await eventually(
      async () => ((await reconciles()) >= start + passes ? true : undefined),
      60_000,
      `${passes} quiet passes`,
    );
    const quiet = fwd.requests.slice(from).filter((r) => !isWatch(r));
    const count = (await reconciles()) - start;
    const reads = quiet.filter((r) => r.method === "GET");
    process.stdout.write(
      `# API requests per quiet pass per OpenBaoCluster: ${(quiet.length / count).toFixed(1)} (${reads.length} reads, ${quiet.length - reads.length} writes over ${count} passes)\n`,
    );
    return { requests: quiet.map(line), passes: count };
  }

  let plane: PrivateOpenBaoPlane | undefined;
  before(async () => {
    plane = await startPrivateOpenBaoPlane("obquiet", installGatewayRoutes);
    ({ admin, fwd, client, manager, ns } = plane);
  });
  after(async () => {
    await plane?.stop();
  });

  it("makes 0 requests of any verb per pass once converged, with the Gateway API served", {
    timeout: 240_000,
  }, async () => {
    await eventually(
      () => (routeInformers().length === ROUTES.size ? true : undefined),
      60_000,
      "an informer per route kind",
    );
    await createOpenBaoCluster(admin, ns, NAME, { replicas: 1 });
    // Converged: two passes in a row sent no write.
    let mark = fwd.requests.length;
    let passes = await reconciles();
    await eventually(
      async () => {
        const writes = fwd.requests.slice(mark).filter((r) => r.method !== "GET");
        const now = await reconciles();
        if (writes.length > 0) {
          mark = fwd.requests.length;
          passes = now;
          return undefined;
        }
        return now >= passes + 2 ? true : undefined;
      },
      180_000,
      "two passes in a row without a write",
    );
    const quiet = await quietPasses(5);
    assert.deepEqual(quiet.requests, [], "requests during quiet passes");

    // The pass got as far as pods: everything before them exists.
    const status = (await admin.get(OPENBAOCLUSTER, NAME, ns)) as {
      status?: { conditions?: { type: string }[] };
    };
    assert.ok(status.status?.conditions?.length, "the cluster has a status");
    assert.ok(await admin.getOrUndefined(SECRET, `${NAME}-unseal-key`, ns), "the seal key was created");
  });

  it("stops the route informers when the Gateway API's CRDs go, and its passes stay quiet", {
    timeout: 180_000,
  }, async () => {
    const errors = await reconcileErrors();
    await removeGatewayRoutes(admin);
    await eventually(
      () => (routeInformers().length === 0 ? true : undefined),
      60_000,
      "the route informers to stop",
    );
    const quiet = await quietPasses(3);
    assert.deepEqual(quiet.requests, [], "requests during quiet passes without the Gateway API");
    assert.equal(await reconcileErrors(), errors, "no pass failed while the kinds went");
    assert.ok(manager.ready, "still ready");
    assert.deepEqual(manager.livenessProblems(60_000), [], "still alive");
  });

  it("starts the route informers when the CRDs are installed while it runs: a leftover route is read from the cache and deleted", {
    timeout: 180_000,
  }, async () => {
    await installGatewayRoutes(admin);
    await eventually(
      () =>
        manager.reader.watches(HTTPROUTE, ns, { labels: { [LABEL_CLUSTER]: NAME } }) &&
        routeInformers().length === ROUTES.size
          ? true
          : undefined,
      60_000,
      "the route informers to start and sync",
    );
    const quiet = await quietPasses(3);
    assert.deepEqual(quiet.requests, [], "requests during quiet passes once the Gateway API is back");

    // A route this cluster made and no longer wants (spec.gateway is off): a pass finds it in the
    // cache and deletes it, without reading it from the API server.
    const cluster = await admin.get(OPENBAOCLUSTER, NAME, ns);
    const from = fwd.requests.length;
    await admin.create(HTTPROUTE, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: {
        name: NAME,
        namespace: ns,
        labels: { [LABEL_CLUSTER]: NAME },
        ownerReferences: [
          {
            apiVersion: cluster.apiVersion!,
            kind: cluster.kind!,
            name: NAME,
            uid: cluster.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: {},
    } as KubeObject);
    await eventually(
      async () => ((await admin.getOrUndefined(HTTPROUTE, NAME, ns)) === undefined ? true : undefined),
      60_000,
      "the leftover HTTPRoute to be deleted",
    );
    const routeRequests = fwd.requests
      .slice(from)
      .filter((r) => !isWatch(r) && r.path.includes("/httproutes"))
      .map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(routeRequests, [
      `DELETE /apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes/${NAME}`,
    ]);
  });

  it("answers 'not served' from memory until a CRD appears, then serves the new kind", {
    timeout: 120_000,
  }, async () => {
    const group = `q${randomBytes(4).toString("hex")}.test.platform-operator.dev`;
    const apiVersion = `${group}/v1`;
    await eventually(
      async () => ((await client.resources.find(apiVersion, "Gizmo")) === undefined ? true : undefined),
      10_000,
      "the kind to be unknown",
    );
    const from = fwd.requests.length;
    for (let i = 0; i < 5; i++) assert.equal(await client.resources.find(apiVersion, "Gizmo"), undefined);
    assert.deepEqual(fwd.requests.slice(from).map(line), [], "a remembered miss asks nothing");
    const crd = `gizmos.${group}`;
    await admin.create(CUSTOM_RESOURCE_DEFINITION, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: crd },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "gizmos", singular: "gizmo", kind: "Gizmo", listKind: "GizmoList" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
    try {
      const found = await eventually(
        () => client.resources.find(apiVersion, "Gizmo"),
        60_000,
        "the new kind",
      );
      assert.equal(found.plural, "gizmos");
    } finally {
      await admin.delete(CUSTOM_RESOURCE_DEFINITION, crd).catch(() => {});
    }
    await eventually(
      async () => ((await client.resources.find(apiVersion, "Gizmo")) === undefined ? true : undefined),
      60_000,
      "the deleted kind to be unknown again",
    );
  });
});
