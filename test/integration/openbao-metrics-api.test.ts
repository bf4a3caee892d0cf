import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { looseCrd } from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// spec.observability.metrics on the real API server with the operator process (no node): the metrics
// Service comes at once; the ServiceMonitor only once the Prometheus Operator's CRD is served (and
// then without a restart); turning metrics off removes both.

const NAME = "mon";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const SERVICE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
const MONITOR: ResourceType = {
  group: "monitoring.coreos.com",
  version: "v1",
  kind: "ServiceMonitor",
  plural: "servicemonitors",
  namespaced: true,
};
const CRD_NAME = "servicemonitors.monitoring.coreos.com";

describe("openbao observability.metrics: Service and ServiceMonitor on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "obmon");
    await installOpenBaoClusterCrd(client);
  });
  after(async () => {
    await op?.stop();
    await client.delete(CUSTOM_RESOURCE_DEFINITION, CRD_NAME).catch(() => {});
    client.close();
  });

  const get = (t: ResourceType, name: string) =>
    client.get(t, name, ns).then(
      (o) => o as Json,
      () => undefined,
    );

  it("writes the metrics Service; the ServiceMonitor once its CRD is served; removes both when turned off", async () => {
    await createOpenBaoCluster(client, ns, NAME, {
      replicas: 1,
      observability: {
        metrics: {
          enabled: true,
          serviceMonitor: {
            enabled: true,
            labels: { release: "kube-prometheus-stack" },
            authorization: { credentialsSecret: { name: "metrics-token" } },
          },
        },
      },
    });
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
    const svc = await eventually(() => get(SERVICE, `${NAME}-metrics`), 60_000, "the metrics Service");
    assert.equal(svc["spec"].selector["openbao-active"], "true");
    assert.equal(svc["metadata"].ownerReferences?.[0]?.kind, "OpenBaoCluster");

    // The Prometheus Operator installed afterwards: the running operator notices, no restart.
    await client.apply(
      CUSTOM_RESOURCE_DEFINITION,
      {
        ...looseCrd("monitoring.coreos.com", "ServiceMonitor", "servicemonitors", "Namespaced"),
        metadata: { name: CRD_NAME },
      },
      { fieldManager: "test-setup", force: true },
    );
    const sm = await eventually(() => get(MONITOR, `${NAME}-metrics`), 90_000, "the ServiceMonitor");
    assert.equal(sm["metadata"].labels.release, "kube-prometheus-stack");
    assert.equal(sm["metadata"].ownerReferences?.[0]?.kind, "OpenBaoCluster");
    for (const [k, v] of Object.entries(sm["spec"].selector.matchLabels))
      assert.equal(svc["metadata"].labels[k], v, `the ServiceMonitor selects the Service by ${k}`);
    assert.deepEqual(sm["spec"].endpoints[0].authorization, {
      type: "Bearer",
      credentials: { name: "metrics-token", key: "token" },
    });

    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      spec: { observability: { metrics: { enabled: false } } },
    });
    await eventually(
      async () =>
        (await get(SERVICE, `${NAME}-metrics`)) || (await get(MONITOR, `${NAME}-metrics`)) ? undefined : true,
      60_000,
      "the metrics Service and ServiceMonitor gone",
    );
  });
});
