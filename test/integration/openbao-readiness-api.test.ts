import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CUSTOM_RESOURCE_DEFINITION, SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { Manager } from "../../src/runtime/manager.js";
import { registry } from "../../src/runtime/metrics.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import type { ApiForwarder, ForwardedRequest } from "../support/api-forwarder.js";
import { GATEWAY_ROUTE_KINDS } from "../support/gateway-routes.js";
import { eventually } from "../support/kube.js";
import { createOpenBaoCluster } from "../support/openbao-cluster.js";
import { metricSum } from "../support/openbao-operator.js";
import { type PrivateOpenBaoPlane, startPrivateOpenBaoPlane } from "../support/openbao-private-plane.js";

// Upstream 0.5's readiness conditions on a real API server of its own (this file installs the Gateway
// API's CRDs, which the shared one must not see appear), with the openbao target in this process and
// no node: a backup's Secrets missing, then created; the Gateway API absent, then installed with a
// Gateway, its class and a Route whose parent status a controller (this test) fills in. Once every
// condition settled, passes still send no request: what they are decided from is in the caches. Then,
// with passes ten minutes apart, a change to the Route, the Gateway or the class wakes the cluster.

const NAME = "bao";
const GROUP = "gateway.networking.k8s.io";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const GATEWAY: ResourceType = {
  group: GROUP,
  version: "v1",
  kind: "Gateway",
  plural: "gateways",
  namespaced: true,
};
const GATEWAY_CLASS: ResourceType = {
  ...GATEWAY,
  kind: "GatewayClass",
  plural: "gatewayclasses",
  namespaced: false,
};
const ENDPOINT_SLICE: ResourceType = {
  group: "discovery.k8s.io",
  version: "v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
};
const HTTPROUTE: ResourceType = { ...GATEWAY, kind: "HTTPRoute", plural: "httproutes" };

/**
 * The Gateway API's kinds as loose CRDs with a status subresource, as the real ones have (a status
 * write then leaves the generation alone); no controller runs here, the test writes their status.
 */
function gatewayCrd(t: ResourceType): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${t.plural}.${GROUP}`,
      annotations: {
        "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/1538",
      },
    },
    spec: {
      group: GROUP,
      scope: t.namespaced ? "Namespaced" : "Cluster",
      names: { kind: t.kind, plural: t.plural, singular: t.kind.toLowerCase(), listKind: `${t.kind}List` },
      versions: [
        {
          name: t.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

const isWatch = (r: ForwardedRequest) => r.query.get("watch") === "true";
const reconciles = async () =>
  metricSum(await registry.metrics(), "controller_runtime_reconcile_total", { controller: "openbaocluster" });

describe("openbao readiness conditions on the real API server", () => {
  let admin: KubeClient;
  let fwd: ApiForwarder;
  let manager: Manager;
  let ns: string;

  let plane: PrivateOpenBaoPlane | undefined;
  before(async () => {
    plane = await startPrivateOpenBaoPlane("obready");
    ({ admin, fwd, manager, ns } = plane);
  });
  after(async () => {
    await plane?.stop();
  });

  const conditions = async (): Promise<Json[]> =>
    ((await admin.get(OPENBAOCLUSTER, NAME, ns)) as Json)["status"]?.conditions ?? [];
  /** Waits until `type` says `reason` (on a loaded machine a pass can take seconds) and returns it. */
  const becomes = (type: string, reason: string) =>
    eventually(
      async () => (await conditions()).find((c) => c.type === type && c.reason === reason),
      90_000,
      `${type} ${reason}`,
    );

  it("BackupConfigurationReady follows the Secrets; GatewayIntegrationReady follows the Gateway API from absent to a Route its Gateway accepted", {
    timeout: 420_000,
  }, async () => {
    await createOpenBaoCluster(admin, ns, NAME, {
      replicas: 1,
      profile: "Development",
      backup: {
        schedule: "0 3 * * *",
        tokenSecretRef: { name: "backup-token" },
        target: { endpoint: "https://s3.example.test", bucket: "b", credentialsSecretRef: { name: "store" } },
      },
      gateway: { enabled: true, hostname: "bao.example.test", gatewayRef: { name: "gw" } },
    });
    const secret = (name: string) =>
      admin.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ns },
        stringData: { token: "not-a-real-token" },
      } as KubeObject);

    // The backup: its token Secret, then its store's credentials, then ready.
    const tokenMissing = await becomes("BackupConfigurationReady", "TokenSecretMissing");
    assert.equal(tokenMissing["status"], "False");
    assert.match(tokenMissing["message"], /backup-token/);
    assert.doesNotMatch(tokenMissing["message"], /not-a-real-token/);
    await secret("backup-token");
    assert.equal((await becomes("BackupConfigurationReady", "CredentialsSecretMissing"))["status"], "False");
    await secret("store");
    assert.equal((await becomes("BackupConfigurationReady", "Ready"))["status"], "True");

    // Always set: True where the kubernetes EndpointSlice lists the API server's addresses; this bare
    // control plane may have none (no controller mirrors them), then only the Service address is known.
    const slices = await admin.list(ENDPOINT_SLICE, {
      namespace: "default",
      labelSelector: "kubernetes.io/service-name=kubernetes",
    });
    const withEndpoints = slices.items.some((s) => ((s as Json)["endpoints"] ?? []).length > 0);
    const network = await becomes(
      "APIServerNetworkReady",
      withEndpoints ? "APIServerNetworkReady" : "APIServerEndpointIPsRecommended",
    );
    assert.equal(network["status"], withEndpoints ? "True" : "Unknown");
    // Read from the spec alone: no self-init, so no login for people is set up by it.
    assert.equal((await becomes("UserAccessBootstrap", "Disabled"))["status"], "False");
    // Features not configured set nothing.
    const types = (await conditions()).map((c) => c["type"]);
    for (const absent of [
      "AuditFileStorageReady",
      "ACMECacheReady",
      "ACMEIntegrationReady",
      "CloudUnsealIdentityReady",
    ])
      assert.ok(!types.includes(absent), `${absent} is not set without its feature`);

    // The Gateway API: absent, then served with no Gateway, then the Gateway and its class.
    assert.equal((await becomes("GatewayIntegrationReady", "GatewayAPIMissing"))["status"], "False");
    const kinds = [
      GATEWAY,
      GATEWAY_CLASS,
      ...GATEWAY_ROUTE_KINDS.map((k) => ({ ...GATEWAY, kind: k.kind, plural: k.plural, version: k.version })),
    ];
    for (const t of kinds) await admin.create(CUSTOM_RESOURCE_DEFINITION, gatewayCrd(t));
    for (const t of kinds)
      await eventually(
        async () => {
          admin.resources.refresh();
          return (await admin.resources.find(`${GROUP}/${t.version}`, t.kind)) ? true : undefined;
        },
        60_000,
        `${t.kind} to be served`,
      );
    assert.equal((await becomes("GatewayIntegrationReady", "GatewayReferenceMissing"))["status"], "False");
    await admin.create(GATEWAY_CLASS, {
      apiVersion: `${GROUP}/v1`,
      kind: "GatewayClass",
      metadata: { name: `cls-${ns}` },
      spec: { controllerName: "example.test/gateway" },
    } as KubeObject);
    await admin.create(GATEWAY, {
      apiVersion: `${GROUP}/v1`,
      kind: "Gateway",
      metadata: { name: "gw", namespace: ns },
      spec: { gatewayClassName: `cls-${ns}`, listeners: [{ name: "https", protocol: "HTTPS", port: 443 }] },
    } as KubeObject);
    // Its controller has not accepted the class yet.
    assert.equal((await becomes("GatewayIntegrationReady", "GatewayClassPending"))["status"], "Unknown");
    await admin.mergePatch(
      GATEWAY_CLASS,
      `cls-${ns}`,
      undefined,
      {
        status: {
          conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message: "" }],
          supportedFeatures: [{ name: "HTTPRoute" }, { name: "BackendTLSPolicy" }],
        },
      },
      "status",
    );
    await admin.mergePatch(
      GATEWAY,
      "gw",
      ns,
      { status: { conditions: [{ type: "Programmed", status: "True", reason: "Programmed", message: "" }] } },
      "status",
    );
    // The operator wrote its HTTPRoute once the kind was served; no controller has answered it yet.
    const pending = await becomes("GatewayIntegrationReady", "GatewayRoutePending");
    assert.equal(pending["status"], "Unknown");
    const route = await eventually(
      () => admin.getOrUndefined(HTTPROUTE, `${NAME}-httproute`, ns),
      60_000,
      "the cluster's HTTPRoute",
    );
    const parentRef = { group: GROUP, kind: "Gateway", name: "gw" };
    const parentStatus = (resolved: string) => ({
      status: {
        parents: [
          {
            parentRef,
            controllerName: "example.test/gateway",
            conditions: [
              {
                type: "Accepted",
                status: "True",
                reason: "Accepted",
                observedGeneration: route.metadata.generation,
              },
              {
                type: "ResolvedRefs",
                status: resolved,
                reason: resolved === "True" ? "ResolvedRefs" : "BackendNotFound",
                observedGeneration: route.metadata.generation,
              },
            ],
          },
        ],
      },
    });
    await admin.mergePatch(HTTPROUTE, route.metadata.name!, ns, parentStatus("False"), "status");
    assert.equal(
      (await becomes("GatewayIntegrationReady", "GatewayRouteReferencesUnresolved"))["status"],
      "False",
    );
    await admin.mergePatch(HTTPROUTE, route.metadata.name!, ns, parentStatus("True"), "status");
    const ready = await becomes("GatewayIntegrationReady", "GatewayIntegrationReady");
    assert.equal(ready["status"], "True");

    // Settled: passes decide every condition again from the caches, and send nothing.
    await manager.discoverySettled();
    await manager.events.flush();
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
        return now >= passes + 3 ? true : undefined;
      },
      180_000,
      "three passes in a row without a write",
    );
    const from = fwd.requests.length;
    const start = await reconciles();
    await eventually(async () => ((await reconciles()) >= start + 3 ? true : undefined), 60_000, "3 passes");
    const quiet = fwd.requests.slice(from).filter((r) => !isWatch(r));
    assert.deepEqual(
      quiet.map((r) => `${r.method} ${r.path}`),
      [],
      "requests during quiet passes with spec.gateway and spec.backup",
    );
    assert.equal(
      (await conditions()).find((c) => c.type === "GatewayIntegrationReady")?.reason,
      "GatewayIntegrationReady",
    );

    // From here only events wake the cluster: its next pass is ten minutes away. The Route, its
    // Gateway and the class each turn the condition within seconds, from the caches.
    plane!.config.pollMs = 600_000;
    plane!.config.resyncMs = 600_000;
    const before = await reconciles();
    await eventually(
      async () => ((await reconciles()) > before ? true : undefined),
      30_000,
      "a last polled pass",
    );
    const wakeFrom = fwd.requests.length;
    const passesFrom = await reconciles();
    const started = Date.now();
    const within = async (type: string, reason: string) => {
      const t = Date.now();
      const c = await becomes(type, reason);
      // A woken pass, not the poll (10 min) nor the resync (10 min); generous for a loaded machine.
      assert.ok(Date.now() - t < 60_000, `${reason} after ${Date.now() - t} ms`);
      return c;
    };
    await admin.mergePatch(HTTPROUTE, route.metadata.name!, ns, parentStatus("False"), "status");
    assert.equal(
      (await within("GatewayIntegrationReady", "GatewayRouteReferencesUnresolved"))["status"],
      "False",
    );
    await admin.mergePatch(HTTPROUTE, route.metadata.name!, ns, parentStatus("True"), "status");
    await within("GatewayIntegrationReady", "GatewayIntegrationReady");
    const programmed = (status: string) =>
      admin.mergePatch(
        GATEWAY,
        "gw",
        ns,
        { status: { conditions: [{ type: "Programmed", status, reason: "Programmed", message: "" }] } },
        "status",
      );
    await programmed("False");
    assert.equal((await within("GatewayIntegrationReady", "GatewayNotProgrammed"))["status"], "False");
    await programmed("True");
    await within("GatewayIntegrationReady", "GatewayIntegrationReady");
    const classAccepted = (status: string) =>
      admin.mergePatch(
        GATEWAY_CLASS,
        `cls-${ns}`,
        undefined,
        { status: { conditions: [{ type: "Accepted", status, reason: "Accepted", message: "" }] } },
        "status",
      );
    await classAccepted("False");
    assert.equal((await within("GatewayIntegrationReady", "GatewayClassNotAccepted"))["status"], "False");
    await classAccepted("True");
    await within("GatewayIntegrationReady", "GatewayIntegrationReady");
    const woken = (await reconciles()) - passesFrom;
    // The woken passes read nothing: only their status writes (and events) went out.
    const reads = fwd.requests.slice(wakeFrom).filter((r) => r.method === "GET" && !isWatch(r));
    assert.deepEqual(
      reads.map((r) => r.path),
      [],
      "reads by passes woken by Gateway API objects",
    );
    process.stdout.write(
      `woken by Gateway API objects: 6 transitions in ${Date.now() - started} ms, ${woken} passes\n`,
    );

    // A kind that stops being served wakes the cluster too. The Gateway deleted first (its delete
    // event wakes), then the Gateway CRD, which no object is left of: only the kind going can wake
    // the cluster, which says GatewayAPIMissing within seconds, not at its poll ten minutes away.
    await admin.delete(GATEWAY, "gw", ns);
    assert.equal((await within("GatewayIntegrationReady", "GatewayReferenceMissing"))["status"], "False");
    await admin.delete(CUSTOM_RESOURCE_DEFINITION, `${GATEWAY.plural}.${GROUP}`);
    assert.equal((await within("GatewayIntegrationReady", "GatewayAPIMissing"))["status"], "False");
  });
});
