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

// The openbao target end to end on the local node: the real operator process, real OpenBao pods.
// Every wait is on state the operator or OpenBao reports (status, Raft peers, metrics), with
// generous timeouts: the machine is small and shared.

const NAME = "bao";
// biome-ignore lint/suspicious/noExplicitAny: API objects and trees are read loosely in tests
type Json = Record<string, any>;

describe("openbao target: workload on the local node", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("obw");
    await installOpenBaoCrd(ctx);
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "3s" });
  });
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await deleteNamespace(ctx);
  });

  const cluster = async (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const rootToken = async (): Promise<string> => {
    const s = await ctx.getJson(`secret/${NAME}-root-token`);
    return Buffer.from(s.data.token, "base64").toString("utf8");
  };
  /** Raft configuration as OpenBao lists it, asked inside pod 0. */
  const raftPeers = async (
    token: string,
  ): Promise<Array<{ node_id: string; voter: boolean; leader: boolean }>> => {
    const out = await ctx.kubectl([
      "exec",
      `${NAME}-0`,
      "--",
      "sh",
      "-c",
      `BAO_TOKEN=${token} bao operator raft list-peers -format=json`,
    ]);
    return JSON.parse(out).data.config.servers;
  };

  it("starts one pod, initializes it through the API, then scales to 3 voters in one Raft cluster", async () => {
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: {
        version: BAO_DEFAULT_VERSION,
        replicas: 3,
        storage: { size: "128Mi" },
        configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
      },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 900);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.phase}=Running", 120);

    const c = await cluster();
    const initializedAt = Date.parse(
      c.status.conditions.find((x: Json) => x.type === "OpenBaoInitialized").lastTransitionTime,
    );
    // One pod first: pods 1 and 2 were created only once initialization was recorded.
    for (const i of [1, 2]) {
      const pod = await ctx.getJson(`pod/${NAME}-${i}`);
      assert.ok(
        Date.parse(pod.metadata.creationTimestamp) >= initializedAt,
        `${NAME}-${i} created ${pod.metadata.creationTimestamp}, before initialization at ${new Date(initializedAt).toISOString()}`,
      );
    }
    assert.equal(c.status.selfInitialized ?? false, false);
    assert.ok(c.metadata.finalizers.includes("openbao.org/openbaocluster-finalizer"));

    const token = await rootToken();
    assert.match(token, /^s\./);
    const peers = await poll(
      async () => {
        const p = await raftPeers(token);
        return p.length === 3 && p.every((s) => s.voter) ? p : undefined;
      },
      300_000,
      "3 Raft voters",
    );
    assert.deepEqual(peers.map((p) => p.node_id).sort(), [`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
    const leader = peers.find((p) => p.leader)!.node_id;
    await poll(
      async () => ((await cluster()).status.activeLeader === leader ? true : undefined),
      120_000,
      `status.activeLeader to name ${leader}`,
    );
    const conds = Object.fromEntries((await cluster()).status.conditions.map((x: Json) => [x.type, x]));
    assert.equal(conds["Available"].status, "True");
    assert.equal(conds["OpenBaoInitialized"].status, "True");
    assert.equal(conds["OpenBaoSealed"].status, "False");
    assert.equal(conds["OpenBaoLeader"].status, "True");
    for (const x of Object.values(conds) as Json[]) assert.equal(x.observedGeneration, c.metadata.generation);

    // Autopilot got the spec's setting (first attempt at init, retried each pass).
    const ap = JSON.parse(
      await ctx.kubectl([
        "exec",
        `${NAME}-0`,
        "--",
        "sh",
        "-c",
        `BAO_TOKEN=${token} bao read -format=json sys/storage/raft/autopilot/configuration`,
      ]),
    ).data;
    assert.equal(ap.server_stabilization_time, "5s");
    assert.equal(ap.cleanup_dead_servers, true);
    // Upstream's floor for three voters without a profile, and its defaults OpenBao took.
    assert.equal(ap.min_quorum, 3);
    assert.equal(ap.last_contact_threshold, "10s");

    // Nothing secret in the operator's output.
    assert.ok(!op!.output().includes(token), "the root token appears in the operator's log");
    const metrics = await op!.metrics();
    assert.equal(metricSum(metrics, "openbao_cluster_ready_replicas", { name: NAME }), 3);
    assert.equal(metricSum(metrics, "openbao_cluster_phase", { name: NAME, phase: "Running" }), 1);
  });

  it("a quiet pass writes nothing to the API server", async () => {
    const reconciles = (m: string) =>
      metricSum(m, "controller_runtime_reconcile_total", { controller: "openbaocluster" });
    // Let the last writes of scale-out settle: two passes in a row with no write in between.
    let base = await op!.metrics();
    await poll(
      async () => {
        const now = await op!.metrics();
        if (apiWrites(now) !== apiWrites(base)) {
          base = now;
          return undefined;
        }
        return reconciles(now) >= reconciles(base) + 2 ? true : undefined;
      },
      180_000,
      "two reconciles in a row without writes",
    );
    const start = await op!.metrics();
    await poll(
      async () => (reconciles(await op!.metrics()) >= reconciles(start) + 3 ? true : undefined),
      120_000,
      "three more resync passes",
    );
    const end = await op!.metrics();
    assert.equal(apiWrites(end) - apiWrites(start), 0, "API writes during quiet passes");
    // Reads: every read of a pass goes through the cached reader, which counts those it could not
    // answer from an informer. A converged cluster's passes (initialization, root token, Autopilot
    // included: steps the bare-API test never reaches) read nothing from the API server.
    const liveReads = (m: string) => metricSum(m, "cached_reader_live_reads_total", {});
    const liveLines = (m: string) =>
      m.split("\n").filter((l) => l.startsWith("cached_reader_live_reads_total{"));
    assert.equal(
      liveReads(end) - liveReads(start),
      0,
      `reads sent to the API server during quiet passes; before:\n${liveLines(start).join("\n")}\nafter:\n${liveLines(end).join("\n")}`,
    );
    // GETs include watches (one the server ended after its timeout is opened again, rarely within
    // these few seconds), so this line informs rather than asserts.
    const gets = (m: string) => metricSum(m, "rest_client_requests_total", { method: "GET" });
    const passes = reconciles(end) - reconciles(start);
    process.stdout.write(
      `# converged cluster on the node: ${gets(end) - gets(start)} GETs (watches included) over ${passes} quiet passes\n`,
    );
  });

  it("a read replica joins as a non-voter, and leaves Raft before its pod goes", async () => {
    const token = await rootToken();
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      '{"spec":{"readReplicas":{"replicas":1}}}',
    ]);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readReplicas.readyReplicas}=1", 600);
    const joined = await poll(
      async () => {
        const p = await raftPeers(token);
        return p.find((s) => s.node_id === `${NAME}-read-0`) ? p : undefined;
      },
      300_000,
      "the read replica in Raft",
    );
    assert.equal(
      joined.find((s) => s.node_id === `${NAME}-read-0`)!.voter,
      false,
      "read replica is a non-voter",
    );
    assert.equal(joined.filter((s) => s.voter).length, 3);
    const cond = (await cluster()).status.conditions.find((x: Json) => x.type === "ReadReplicasReady");
    assert.equal(cond.status, "True");

    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      '{"spec":{"readReplicas":{"replicas":0}}}',
    ]);
    await ctx.waitFor(`statefulset/${NAME}-read`, "jsonpath={.spec.replicas}=0", 300);
    const peers = await raftPeers(token);
    assert.ok(!peers.some((s) => s.node_id === `${NAME}-read-0`), "the read replica left Raft");
    assert.match(op!.output(), /removed read-replica Raft peer/);
  });

  it("pod 0 deleted by hand comes back and rejoins", async () => {
    const token = await rootToken();
    const oldUid = (await ctx.getJson(`pod/${NAME}-0`)).metadata.uid;
    await ctx.kubectl(["delete", "pod", `${NAME}-0`, "--wait=true", "--timeout=120s"]);
    await poll(
      async () => {
        const p = await ctx.getJson(`pod/${NAME}-0`).catch(() => undefined);
        return p && p.metadata.uid !== oldUid ? true : undefined;
      },
      180_000,
      "pod 0 recreated",
    );
    await ctx.waitFor(`pod/${NAME}-0`, "condition=Ready", 300);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 300);
    const peers = await raftPeers(token);
    assert.deepEqual(peers.map((p) => p.node_id).sort(), [`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
    assert.ok(peers.every((p) => p.voter));
  });

  it("3 → 1 removes the Raft peers before the pods go", async () => {
    const token = await rootToken();
    await ctx.kubectl(["patch", `openbaocluster/${NAME}`, "--type=merge", "-p", '{"spec":{"replicas":1}}']);
    await ctx.waitFor(`statefulset/${NAME}`, "jsonpath={.spec.replicas}=1", 300);
    await poll(
      async () => {
        const pods = await ctx.getJson("pods");
        return pods.items.filter((p: Json) => p.metadata.name.startsWith(`${NAME}-`)).length === 1
          ? true
          : undefined;
      },
      300_000,
      "pods 1 and 2 gone",
    );
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    const peers = await poll(
      async () => {
        const p = await raftPeers(token);
        return p.length === 1 ? p : undefined;
      },
      180_000,
      "one Raft peer",
    );
    assert.equal(peers[0]!.node_id, `${NAME}-0`);
    // The operator's own order: each peer removal is logged before the pass that shrinks the set.
    const lines = op!.output().split("\n");
    const removed = lines.flatMap((l, i) => (l.includes("removed Raft peer") ? [i] : []));
    assert.equal(removed.length, 2, "two peers removed");
    const shrink = lines.findIndex(
      (l, i) => i > removed[0]! && l.includes('"applied"') && l.includes("StatefulSet/"),
    );
    assert.ok(shrink > Math.max(...removed), "the StatefulSet was applied after both removals");
    const events = await ctx.getJson("events.events.k8s.io");
    const removals = events.items.filter((e: Json) => e.reason === "RaftPeerRemoved");
    assert.equal(removals.length >= 1, true);
  });
});
