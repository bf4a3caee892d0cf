import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { CUSTOM_RESOURCE_DEFINITION, SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { registry } from "../../src/runtime/metrics.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { openbaoTarget } from "../../src/targets/openbao/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { ApiForwarder, type ForwardedRequest } from "../support/api-forwarder.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { metricSum } from "../support/openbao-operator.js";

// The openbao target on the real API server, every request it sends seen by a loopback forwarder:
// once a cluster's passes stop changing anything, a pass must read nothing from the API server
// (its reads come from the informers' caches) and write nothing. Watches are the caches' own and
// are not a pass's; on a bare API server (no node) a pass goes as far as it can without pods:
// certificates, config, networking, identity, StatefulSet, PDB, then waits for pod 0.

const NAME = "bao";

const isWatch = (r: ForwardedRequest) => r.query.get("watch") === "true";
const line = (r: ForwardedRequest) => `${r.method} ${r.path}${r.query.size ? `?${r.query}` : ""}`;
const reconciles = async () =>
  metricSum(await registry.metrics(), "controller_runtime_reconcile_total", { controller: "openbaocluster" });

describe("openbao target: a quiet pass sends no request", () => {
  let admin: KubeClient;
  let fwd: ApiForwarder;
  let client: KubeClient;
  let manager: Manager;
  let ns: string;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    ns = await freshNamespace(admin, "obquiet");
    fwd = await ApiForwarder.start(sharedEnv().kubeconfigPath, {});
    client = fwd.client();
    manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
    const config = parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao");
    await openbaoTarget().setup(manager, config);
    await manager.start();
  });
  after(async () => {
    await manager?.stop();
    client?.close();
    await fwd?.close();
    await admin.delete(NAMESPACE, ns).catch(() => {});
    admin.close();
  });

  it("makes 0 reads and 0 writes per pass once converged", { timeout: 240_000 }, async () => {
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
    const from = fwd.requests.length;
    const start = await reconciles();
    await eventually(
      async () => ((await reconciles()) >= start + 5 ? true : undefined),
      60_000,
      "5 quiet passes",
    );
    const quiet = fwd.requests.slice(from).filter((r) => !isWatch(r));
    const count = (await reconciles()) - start;
    const reads = quiet.filter((r) => r.method === "GET");
    process.stdout.write(
      `# API requests per quiet pass per OpenBaoCluster: ${(quiet.length / count).toFixed(1)} (${reads.length} reads, ${quiet.length - reads.length} writes over ${count} passes)\n`,
    );
    // Left (issue 21's note): the Gateway API kinds are not watched, so where the Gateway API is
    // installed (the shared API server has it once another suite installed its CRDs) a pass still
    // reads the cluster's own routes live — at most one GET per route kind per pass. Everything
    // else must be 0.
    const gateway = quiet.filter((r) => line(r).includes("/apis/gateway.networking.k8s.io/"));
    if (gateway.length)
      process.stdout.write(`# of them Gateway API route reads (kinds not watched yet): ${gateway.length}\n`);
    assert.ok(
      gateway.every((r) => r.method === "GET"),
      "only reads of the routes",
    );
    assert.ok(gateway.length <= 3 * count, `${gateway.length} Gateway API reads over ${count} passes`);
    assert.deepEqual(quiet.filter((r) => !gateway.includes(r)).map(line), [], "requests during quiet passes");

    // The pass got as far as pods: everything before them exists.
    const status = (await admin.get(OPENBAOCLUSTER, NAME, ns)) as {
      status?: { conditions?: { type: string }[] };
    };
    assert.ok(status.status?.conditions?.length, "the cluster has a status");
    assert.ok(await admin.getOrUndefined(SECRET, `${NAME}-unseal-key`, ns), "the seal key was created");
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
