import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// spec.observability.metrics with scrapeProfile AllNodes on the local node, with the real OpenBao:
// the metrics-only listener answers /v1/sys/metrics without a token, the API listener no longer
// serves metrics at all, and the metrics Service lists the pod on that port.

const NAME = "mbao";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao observability.metrics on the node: the metrics-only listener (and podMetadata on the pod)", {
  timeout: 20 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("obmet");
    await installOpenBaoCrd(ctx);
  });
  after(async () => {
    await op?.stop();
    await deleteNamespace(ctx);
  });

  /** `bao read` of the Prometheus metrics at `port` inside the pod, with no token; OpenBao's answer or its refusal. */
  const scrape = (port: number) =>
    ctx
      .exec(`${NAME}-0`, [
        "sh",
        "-c",
        `unset BAO_TOKEN; BAO_ADDR=https://127.0.0.1:${port} BAO_SKIP_VERIFY=true bao read -format=raw sys/metrics format=prometheus 2>&1 || echo "exit $?"`,
      ])
      .catch((e: Error) => `exit: ${e.message}`);

  it("serves metrics without a token on 8202 only; the Service selects the pod there", async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s" });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: {
        version: BAO_DEFAULT_VERSION,
        replicas: 1,
        storage: { size: "128Mi" },
        observability: { metrics: { enabled: true, scrapeProfile: "AllNodes" } },
        // 0.5's podMetadata, seen on the running pod (the API-server test sees the template only).
        podMetadata: {
          labels: { "team.example.com/owner": "payments", "openbao.org/cluster": "spoof" },
          annotations: { "example.com/scrape": "yes" },
        },
      },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 900);

    const text = await scrape(8202);
    assert.match(
      text,
      /^# TYPE \S+ (gauge|counter|summary)/m,
      `Prometheus text from 8202: ${text.slice(0, 300)}`,
    );
    assert.doesNotMatch(text, /^exit/m);
    // OpenBao's telemetry without the host name prefix, as the config asks.
    assert.match(text, /^vault_core_unsealed\b/m);
    assert.doesNotMatch(text, new RegExp(`^vault_${NAME}_0_`, "m"), "no host name in metric names");

    const refused = await scrape(8200);
    assert.match(
      refused,
      /exit|Code: 40[03]/,
      `the API listener must not serve metrics: ${refused.slice(0, 300)}`,
    );
    assert.doesNotMatch(refused, /^# TYPE/m);

    const svc: Json = await ctx.getJson(`service/${NAME}-metrics`);
    assert.equal(svc.spec.clusterIP, "None");
    assert.deepEqual(
      svc.spec.ports.map((p: Json) => [p.name, p.port, p.targetPort]),
      [["https-metrics", 8202, "metrics"]],
    );
    const pod: Json = await ctx.getJson(`pod/${NAME}-0`);
    assert.equal(pod.metadata.labels["team.example.com/owner"], "payments", "podMetadata label on the pod");
    assert.equal(pod.metadata.labels["openbao.org/cluster"], NAME, "the operator's selector label wins");
    assert.equal(pod.metadata.annotations["example.com/scrape"], "yes", "podMetadata annotation on the pod");
    const port = pod.spec.containers[0].ports.find((p: Json) => p.name === "metrics");
    assert.equal(port?.containerPort, 8202);
    const slices: Json = JSON.parse(
      await ctx.kubectl([
        "get",
        "endpointslices",
        "-l",
        `kubernetes.io/service-name=${NAME}-metrics`,
        "-o",
        "json",
      ]),
    );
    const addresses = slices.items.flatMap((s: Json) =>
      (s.endpoints ?? []).flatMap((e: Json) => e.addresses),
    );
    assert.deepEqual(addresses, [pod.status.podIP]);
  });
});
