import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  dryRunWrites,
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
  storedWrites,
} from "../support/openbao-operator.js";

// Observe-only on the local node: the real operator process reconciles an OpenBaoCluster fully and
// stores nothing but the cluster's status report; switched to a normal run, the same operator
// builds the cluster. Writes are counted by the operator's own client metrics, dry runs apart.

const NAME = "bao";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

/** Kinds the workload controller creates; none may carry the cluster's name in observe-only mode. */
const CHILD_KINDS = [
  "statefulsets",
  "services",
  "configmaps",
  "secrets",
  "poddisruptionbudgets",
  "networkpolicies",
  "serviceaccounts",
  "roles",
  "rolebindings",
  "persistentvolumeclaims",
  "pods",
];

describe("openbao target: observe-only on the local node", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("obo");
    await installOpenBaoCrd(ctx);
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "3s", observeOnly: "true" });
  });
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await deleteNamespace(ctx);
  });

  const cluster = async (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const condition = (c: Json, type: string): Json | undefined =>
    (c["status"]?.conditions ?? []).find((x: Json) => x.type === type);
  const children = async (): Promise<string[]> => {
    const list = await ctx.getJson(CHILD_KINDS.join(","));
    return (list["items"] as Json[])
      .filter((o) => o.metadata.name.startsWith(NAME))
      .map((o) => `${o.kind}/${o.metadata.name}`);
  };
  const reconciles = (m: string) =>
    metricSum(m, "controller_runtime_reconcile_total", { controller: "openbaocluster" });

  it("reconciles fully, stores no child object, and says in Drifted what a real run would do", async () => {
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 3, storage: { size: "128Mi" } },
    });
    const drifted = await poll(
      async () => {
        const d = condition(await cluster(), "Drifted");
        return d?.status === "True" ? d : undefined;
      },
      180_000,
      "the Drifted condition",
    );
    assert.equal(drifted["reason"], "ObserveOnly");
    const msg: string = drifted["message"];
    // What a real first pass makes, by name, and the init that would follow once pod 0 runs.
    for (const object of [
      "StatefulSet/bao",
      "ConfigMap/bao-config",
      "Secret/bao-tls-ca",
      "Secret/bao-tls-server",
      "Secret/bao-unseal-key",
      "Service/bao-public",
      "NetworkPolicy/bao-network-policy",
      "ServiceAccount/bao-serviceaccount",
      "PodDisruptionBudget/bao-pdb",
    ])
      assert.ok(msg.includes(object), `Drifted names ${object}: ${msg}`);
    assert.match(msg, /^a real run would: \d+ create \(/);
    assert.match(msg, /1 initialize \(bao-0\)/);
    assert.doesNotMatch(msg, /\d+ (update|delete) /, "nothing exists, so nothing is updated or deleted");

    const c = await cluster();
    assert.deepEqual(await children(), [], "objects stored for the cluster in observe-only mode");
    assert.deepEqual(c["metadata"].finalizers ?? [], [], "no finalizer in observe-only mode");
    assert.notEqual(c["status"].initialized, true);
    // No event claims an action that did not happen.
    const events = await ctx.getJson("events");
    const reasons = (events["items"] as Json[])
      .filter((e) => e.involvedObject?.uid === c["metadata"].uid || e.regarding?.uid === c["metadata"].uid)
      .map((e) => e.reason);
    for (const r of ["CAIssued", "CertificateIssued", "UnsealKeyCreated", "Initialized", "RaftPeerRemoved"])
      assert.ok(!reasons.includes(r), `event ${r} in observe-only mode: ${reasons.join()}`);

    const m = await op!.metrics();
    assert.ok(metricSum(m, "openbao_cluster_planned_changes", { name: NAME, action: "create" }) >= 10);
    assert.equal(metricSum(m, "openbao_cluster_planned_changes", { name: NAME, action: "initialize" }), 1);
  });

  it("an observe-only resync stores nothing", async () => {
    // Let the status report settle: two passes in a row without a stored write.
    let base = await op!.metrics();
    await poll(
      async () => {
        const now = await op!.metrics();
        if (storedWrites(now) !== storedWrites(base)) {
          base = now;
          return undefined;
        }
        return reconciles(now) >= reconciles(base) + 2 ? true : undefined;
      },
      180_000,
      "two observe-only passes in a row without a stored write",
    );
    const start = await op!.metrics();
    const before = await cluster();
    await poll(
      async () => (reconciles(await op!.metrics()) >= reconciles(start) + 3 ? true : undefined),
      120_000,
      "three more resync passes",
    );
    const end = await op!.metrics();
    const passes = reconciles(end) - reconciles(start);
    const stored = storedWrites(end) - storedWrites(start);
    const dry = dryRunWrites(end) - dryRunWrites(start);
    console.log(
      `observe-only: ${passes} passes, ${stored} stored writes, ${(dry / passes).toFixed(1)} dry-run requests per pass; ` +
        `${storedWrites(end)} stored writes since the operator started (status report and its events)`,
    );
    assert.equal(stored, 0, "stored writes during observe-only resyncs");
    assert.ok(dry > 0, "the passes did run their dry-run applies");
    assert.equal((await cluster())["metadata"].resourceVersion, before["metadata"].resourceVersion);
    assert.deepEqual(await children(), []);
  });

  it("switched to a normal run, the same cluster is built and Drifted goes", async () => {
    await op!.stop();
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "3s" });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    const c = await cluster();
    assert.equal(condition(c, "Drifted"), undefined, "a real run leaves no Drifted condition");
    assert.ok(c["metadata"].finalizers.includes("openbao.org/openbaocluster-finalizer"));
    const made = await children();
    for (const object of [
      "StatefulSet/bao",
      "ConfigMap/bao-config",
      "Secret/bao-unseal-key",
      "Secret/bao-root-token",
    ])
      assert.ok(made.includes(object), `${object} after the normal run: ${made.join(", ")}`);
    const m = await op!.metrics();
    assert.equal(metricSum(m, "openbao_cluster_planned_changes", { name: NAME }), 0);
  });
});
