import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// IngressIntegrationReady on the real API server with the operator process (no node, no ingress
// controller: the test publishes the load balancer address the way a controller writes it).

const NAME = "ing";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const INGRESS: ResourceType = {
  group: "networking.k8s.io",
  version: "v1",
  kind: "Ingress",
  plural: "ingresses",
  namespaced: true,
};
const INGRESS_CLASS: ResourceType = {
  ...INGRESS,
  kind: "IngressClass",
  plural: "ingressclasses",
  namespaced: false,
};

describe("openbao IngressIntegrationReady on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let className: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "obing");
    className = `test-${ns}`;
    await installOpenBaoClusterCrd(client);
  });
  after(async () => {
    await op?.stop();
    await client.delete(INGRESS_CLASS, className).catch(() => {});
    client.close();
  });

  const condition = async (): Promise<Json | undefined> =>
    ((await client.get(OPENBAOCLUSTER, NAME, ns)) as Json)["status"]?.conditions?.find(
      (c: Json) => c.type === "IngressIntegrationReady",
    );
  const reasonBecomes = (reason: string) =>
    eventually(
      async () => {
        const c = await condition();
        return c?.reason === reason ? c : undefined;
      },
      60_000,
      `IngressIntegrationReady ${reason}`,
    );

  it("missing class → False; class made → waits for the address; address published → True; gone with the Ingress", async () => {
    await createOpenBaoCluster(client, ns, NAME, {
      replicas: 1,
      ingress: { enabled: true, host: "bao.example.test", className },
    });
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
    const missing = await reasonBecomes("IngressClassMissing");
    assert.equal(missing["status"], "False");
    assert.match(missing["message"], new RegExp(className));

    await client.create(INGRESS_CLASS, {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: className },
      spec: { controller: "example.test/none" },
    } as KubeObject);
    const pending = await reasonBecomes("IngressLoadBalancerPending");
    assert.equal(pending["status"], "Unknown");

    // What an ingress controller writes once its load balancer has an address.
    await client.mergePatch(
      INGRESS,
      NAME,
      ns,
      { status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } } },
      "status",
    );
    const ready = await reasonBecomes("IngressIntegrationReady");
    assert.equal(ready["status"], "True");

    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec: { ingress: { enabled: false } } });
    await eventually(async () => ((await condition()) ? undefined : true), 60_000, "the condition gone");
  });
});
