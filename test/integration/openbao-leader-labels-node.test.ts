import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  apiWrites,
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// A converged 3-voter cluster on the local node: status.activeLeader comes from the labels OpenBao's
// Kubernetes service registration keeps on its pods, quiet passes send OpenBao nothing, and a
// leader change reaches the status through the pod label event, not a poll: the second operator
// process resyncs every 10 minutes, so within the deadline only the event can have woken it.

const NAME = "lbao";
const SERVER = `openbao.org/cluster=${NAME},openbao.org/component=server`;
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const baoRequests = (m: string) => metricSum(m, "openbao_api_requests_total");
/** Everything but the Autopilot step's settings check. */
const notAutopilot = (m: string) =>
  baoRequests(m) -
  metricSum(m, "openbao_api_requests_total", { endpoint: "/v1/sys/storage/raft/autopilot/configuration" });
/** The poll this replaced: health and leader, asked of pod 0. */
const polls = (m: string) =>
  metricSum(m, "openbao_api_requests_total", { endpoint: "/v1/sys/health" }) +
  metricSum(m, "openbao_api_requests_total", { endpoint: "/v1/sys/leader" });
const reconciles = (m: string) =>
  metricSum(m, "controller_runtime_reconcile_total", { controller: "openbaocluster" });

describe("openbao target: the leader from OpenBao's pod labels, no OpenBao poll", {
  timeout: 30 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let token = "";

  before(async () => {
    ctx = await nodeNamespace("oblab");
    await installOpenBaoCrd(ctx);
  });
  after(async () => {
    await op?.stop();
    await deleteNamespace(ctx);
  });

  const cluster = (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  /** The pods whose openbao-active label says "true", as the API server holds them. */
  const labelledActive = async (): Promise<string[]> =>
    JSON.parse(
      await ctx.kubectl(["get", "pods", "-l", `${SERVER},openbao-active=true`, "-o", "json"]),
    ).items.map((p: Json) => p.metadata.name as string);
  const bao = (pod: string, command: string) =>
    ctx.kubectl(["exec", pod, "--", "sh", "-c", `BAO_TOKEN=${token} ${command}`]);

  it("forms 3 voters; quiet passes send 0 OpenBao requests and write nothing", async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "3s" });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 3, storage: { size: "128Mi" } },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 900);
    token = Buffer.from((await ctx.getJson(`secret/${NAME}-root-token`)).data.token, "base64").toString();
    // The registration labels every voter; exactly one says active, and status names that pod.
    const leader = await poll(
      async () => {
        const active = await labelledActive();
        const c = await cluster();
        return active.length === 1 && c.status?.activeLeader === active[0] ? active[0] : undefined;
      },
      300_000,
      "status.activeLeader to name the one pod labelled openbao-active=true",
    );
    for (const i of [0, 1, 2]) {
      const labels = (await ctx.getJson(`pod/${NAME}-${i}`)).metadata.labels;
      assert.equal(labels["openbao-sealed"], "false", `${NAME}-${i} openbao-sealed`);
      assert.equal(labels["openbao-initialized"], "true", `${NAME}-${i} openbao-initialized`);
      assert.equal(labels["openbao-version"], BAO_DEFAULT_VERSION, `${NAME}-${i} openbao-version`);
    }
    const c = await cluster();
    assert.equal(c.status.currentVersion, BAO_DEFAULT_VERSION);
    assert.equal(c.status.conditions.find((x: Json) => x.type === "OpenBaoSealed")?.status, "False");
    assert.equal(
      c.status.conditions.find((x: Json) => x.type === "OpenBaoLeader")?.message,
      `${leader} is active`,
    );

    // Converged: two passes in a row without an API write (the last scale-out and status writes).
    let base = await op.metrics();
    await poll(
      async () => {
        const m = await op!.metrics();
        if (apiWrites(m) !== apiWrites(base)) {
          base = m;
          return undefined;
        }
        return reconciles(m) >= reconciles(base) + 2 ? true : undefined;
      },
      300_000,
      "two passes in a row without a write",
    );
    const start = await op.metrics();
    const N = 5;
    const end = await poll(
      async () => {
        const m = await op!.metrics();
        return reconciles(m) >= reconciles(start) + N ? m : undefined;
      },
      120_000,
      `${N} quiet passes`,
    );
    const passes = reconciles(end) - reconciles(start);
    const requests = baoRequests(end) - baoRequests(start);
    const gets =
      metricSum(end, "rest_client_requests_total", { method: "GET" }) -
      metricSum(start, "rest_client_requests_total", { method: "GET" });
    process.stdout.write(
      `# over ${passes} quiet passes: ${requests} OpenBao requests (${baoRequests(start)} before, while forming), ${apiWrites(end) - apiWrites(start)} API writes, ${gets} API GETs (watches included)\n`,
    );
    assert.ok(passes >= N);
    assert.equal(requests, 0, "OpenBao requests during quiet passes");
    assert.equal(apiWrites(end) - apiWrites(start), 0, "API writes during quiet passes");
  });

  it("a leader that steps down, then a deleted leader pod, show in status.activeLeader through the pod event", async () => {
    // A new process resyncing every 10 minutes: its first pass (and one Autopilot check) happen at
    // start; after that only events wake the cluster.
    await op!.stop();
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "10m" });
    let first = await poll(
      async () => {
        const m = await op!.metrics();
        return reconciles(m) >= 1 ? m : undefined;
      },
      120_000,
      "the new process's first pass",
    );
    // Let the first pass's Autopilot check finish before counting.
    first = await poll(
      async () => {
        const m = await op!.metrics();
        return metricSum(m, "workqueue_depth", { name: "openbaocluster" }) === 0 &&
          metricSum(m, "controller_runtime_active_workers", { controller: "openbaocluster" }) === 0
          ? m
          : undefined;
      },
      60_000,
      "the first pass to end",
    );

    // 1. Step-down: no pod goes, no StatefulSet status moves; only the labels change.
    const old = (await cluster()).status.activeLeader as string;
    const stepped = performance.now();
    await bao(old, "bao operator step-down");
    const next = await poll(
      async () => {
        const now = (await cluster()).status?.activeLeader;
        return now && now !== old ? (now as string) : undefined;
      },
      60_000,
      `status.activeLeader to move off ${old} after its step-down`,
      500,
    );
    const afterStepDown = await op.metrics();
    process.stdout.write(
      `# step-down: status.activeLeader ${old} → ${next} in ${((performance.now() - stepped) / 1000).toFixed(1)} s, ${baoRequests(afterStepDown) - baoRequests(first)} OpenBao requests (${polls(afterStepDown) - polls(first)} health/leader), ${reconciles(afterStepDown) - reconciles(first)} passes\n`,
    );
    assert.deepEqual(await labelledActive(), [next]);
    // The labels told the new leader: no health or leader request. A new leader does make the
    // Autopilot step check its settings once (they live in Raft; a restore can replace them).
    assert.equal(polls(afterStepDown) - polls(first), 0, "health/leader requests for the step-down");
    assert.equal(
      notAutopilot(afterStepDown) - notAutopilot(first),
      0,
      "OpenBao requests for the step-down other than the Autopilot check",
    );

    // 2. The active pod deleted: the StatefulSet makes it again; status follows the labels.
    const deleted = performance.now();
    await ctx.kubectl(["delete", "pod", next, "--wait=false"]);
    const third = await poll(
      async () => {
        const now = (await cluster()).status?.activeLeader;
        return now && now !== next ? (now as string) : undefined;
      },
      90_000,
      `status.activeLeader to move off the deleted ${next}`,
      500,
    );
    const afterDelete = await op.metrics();
    process.stdout.write(
      `# leader pod deleted: status.activeLeader ${next} → ${third} in ${((performance.now() - deleted) / 1000).toFixed(1)} s, ${baoRequests(afterDelete) - baoRequests(afterStepDown)} OpenBao requests (${notAutopilot(afterDelete) - notAutopilot(afterStepDown)} besides Autopilot checks: pod 0 asked while the labels did not tell)\n`,
    );
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 300);
    assert.deepEqual(await labelledActive(), [(await cluster()).status.activeLeader]);
  });
});
