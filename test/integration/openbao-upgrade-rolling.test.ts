import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type LineWatch, watchLines } from "../support/kube-watch.js";
import { summarizeLoad } from "../support/kv-load.js";
import { type NodeKvLoad, startNodeKvLoad } from "../support/kv-load-node.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { enableNodeJwtAuth } from "../support/node-jwt-auth.js";
import { clusterProbe } from "../support/openbao-node-cluster.js";
import {
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// A 3-voter OpenBao cluster on the local node upgraded 2.6.2 → 2.7.2 by the rolling strategy while
// a KV client writes and reads through the client Service, with the operator SIGKILLed once the
// first pod was replaced and again while the last one is replaced. The order proofs read
// `kubectl --watch` streams as they arrive; every wait is on the status, event or metric that
// proves the step happened. Then a downgrade is refused.

const NAME = "ubao";
const FROM = "2.6.2";
const TO = "2.7.2";
const SELECTOR = `openbao.org/cluster=${NAME},openbao.org/component=server`;
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao rolling upgrade 2.6.2 → 2.7.2 under load, the operator killed twice mid-roll", {
  timeout: 60 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  const outputs: string[] = [];
  const watches: LineWatch[] = [];
  let token = "";
  let load: NodeKvLoad | undefined;

  const start = async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
  };
  const { cluster, voterPods, bao, waitCondition } = clusterProbe(
    () => ctx,
    NAME,
    () => token,
  );
  const uids = async () =>
    new Map((await voterPods()).map((p) => [p.metadata.name as string, p.metadata.uid as string]));
  const events = async (reason: string): Promise<Json[]> =>
    (await ctx.getJson("events.events.k8s.io")).items.filter((e: Json) => e.reason === reason);

  before(
    async () => {
      ctx = await nodeNamespace("obup");
      await installOpenBaoCrd(ctx);
    },
    { timeout: 45 * 60_000 },
  );
  after(async () => {
    for (const w of watches) w.stop();
    load?.kill();
    if (op) {
      outputs.push(op.output());
      if (process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
      await op.stop();
    }
    await deleteNamespace(ctx);
  });

  it(`forms 3 voters at ${FROM}`, { timeout: 30 * 60_000 }, async () => {
    await start();
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: {
        version: FROM,
        replicas: 3,
        storage: { size: "128Mi" },
        configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
      },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 900);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 900);
    await ctx.waitFor(`openbaocluster/${NAME}`, `jsonpath={.status.currentVersion}=${FROM}`, 300);
    const secret = await ctx.getJson(`secret/${NAME}-root-token`);
    token = Buffer.from(secret.data.token, "base64").toString("utf8");
    await poll(
      async () => {
        const out = await bao("bao operator raft list-peers -format=json").catch(() => "");
        const servers = out ? JSON.parse(out).data.config.servers : [];
        return servers.length === 3 && servers.every((s: Json) => s.voter) ? true : undefined;
      },
      600_000,
      "3 Raft voters",
      2000,
    );
    await bao("bao secrets enable -path=load kv-v2");
    // A new KV v2 mount refuses writes while it upgrades its layout; a written probe means it is done.
    await poll(
      async () => ((await bao("bao kv put -mount=load probe v=1").catch(() => "")) ? true : undefined),
      120_000,
      "the KV v2 mount to accept writes",
      1000,
    );
    // The upgrade logs in with spec.upgrade.jwtAuthRole: OpenBao's JWT auth trusts the node API
    // server's signing key, the role admits the cluster's upgrade ServiceAccount only and grants just
    // what a roll needs. The root-token Secret is deleted, so the roll cannot have used it.
    await ctx.kubectl(
      ["exec", "-i", `${NAME}-0`, "--", "sh", "-c", `BAO_TOKEN=${token} bao policy write upgrade -`],
      [
        'path "sys/step-down" { capabilities = ["update", "sudo"] }',
        'path "sys/storage/raft/*" { capabilities = ["read", "list", "sudo"] }',
      ].join("\n"),
    );
    await enableNodeJwtAuth(ctx, `${NAME}-0`, token, {
      name: "upgrade",
      serviceAccount: `${NAME}-upgrade-serviceaccount`,
      policies: ["upgrade"],
    });
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { upgrade: { jwtAuthRole: "upgrade" } } }),
    ]);
    await ctx.kubectl(["delete", "secret", `${NAME}-root-token`]);

    // No upgrade is pending: the StatefulSet holds no partition.
    const sts = await ctx.getJson(`statefulset/${NAME}`);
    assert.equal(sts.spec.updateStrategy.rollingUpdate?.partition ?? 0, 0);
  });

  it(`rolls 2 → 1 → 0 to ${TO}, the leader stepped down first, no acknowledged write lost; the operator killed after the first pod and during the last resumes`, {
    timeout: 40 * 60_000,
  }, async () => {
    // The load client, inside the node's network, through the client Service.
    load = await startNodeKvLoad(ctx, NAME, token);

    // The pods' deletions as the API server reports them: the replacement order.
    const deletions: string[] = [];
    watches.push(
      watchLines(
        ctx,
        [
          "get",
          "pods",
          "-l",
          SELECTOR,
          "-o",
          'jsonpath={.metadata.name} {.metadata.uid} {.metadata.deletionTimestamp}{"\\n"}',
        ],
        (text) => {
          const [name, uid, deleting] = text.trim().split(" ");
          if (name && deleting && !deletions.includes(`${name} ${uid}`)) deletions.push(`${name} ${uid}`);
        },
      ),
    );
    // What status.upgrade said along the way (it is cleared at the end).
    const stepDowns = new Set<string>();
    const partitions: number[] = [];
    watches.push(
      watchLines(
        ctx,
        [
          "get",
          `openbaocluster/${NAME}`,
          "-o",
          'jsonpath={.status.upgrade.currentPartition} {.status.upgrade.lastStepDownTime}{"\\n"}',
        ],
        (text) => {
          const [p, sd] = text.trim().split(" ");
          if (p !== undefined && p !== "" && partitions.at(-1) !== Number(p)) partitions.push(Number(p));
          if (sd) stepDowns.add(sd);
        },
      ),
    );

    const before = await uids();
    const started = Date.now();
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { version: TO } }),
    ]);

    // Pod 2 done (status says so), then the operator dies without a goodbye.
    await poll(
      async () => ((await cluster()).status?.upgrade?.completedPods?.includes(2) ? true : undefined),
      900_000,
      "pod 2 recorded as upgraded",
      1000,
    );
    // Mid-roll, upstream's progress metrics: in progress, 3 pods, pod 2's replacement timed.
    const mid = await poll(
      async () => {
        const m = await op!.metrics();
        return metricSum(m, "openbao_upgrade_pods_completed", { name: NAME }) >= 1 ? m : undefined;
      },
      60_000,
      "openbao_upgrade_pods_completed to count pod 2",
    );
    assert.equal(metricSum(mid, "openbao_upgrade_in_progress", { name: NAME }), 1);
    assert.equal(metricSum(mid, "openbao_upgrade_status", { name: NAME }), 1);
    assert.equal(metricSum(mid, "openbao_upgrade_pods_total", { name: NAME }), 3);
    assert.ok(metricSum(mid, "openbao_upgrade_partition", { name: NAME }) <= 2);
    assert.equal(
      metricSum(mid, "openbao_upgrade_pod_duration_seconds_count", { name: NAME, pod: `${NAME}-2` }),
      1,
    );
    const atKill = await cluster();
    await op!.kill();
    outputs.push(op!.output());
    op = undefined;
    const pod2AtKill = (await uids()).get(`${NAME}-2`);
    console.log(`[kill] status.upgrade at the kill: ${JSON.stringify(atKill.status.upgrade)}`);
    assert.notEqual(pod2AtKill, before.get(`${NAME}-2`), "pod 2 was replaced before the kill");
    await start();

    // Killed again while the last pod (0) is being replaced: the next process waits for it.
    // Read from the API server with a deadline rather than from the watch alone: a test waiting on a
    // watch line that never came (kubectl's watch ended) hung until its 40 minutes were up.
    await poll(
      async () => ((await cluster()).status?.upgrade?.currentPartition === 0 ? true : undefined),
      900_000,
      "partition 0 (the last pod being replaced)",
      250,
    );
    await op!.kill();
    outputs.push(op!.output());
    op = undefined;
    console.log(
      `[kill] status.upgrade at the second kill: ${JSON.stringify((await cluster()).status.upgrade)}`,
    );
    await start();

    await waitCondition("Upgrading", "UpgradeComplete", 1_200_000);
    const finished = Date.now();
    const report = await load.finish();

    // Reverse ordinal order, each pod exactly once: the restarted operator did not replace pod 2 again.
    const order = deletions.map((d) => d.split(" ")[0]);
    console.log(`[order] deletions: ${deletions.join(", ")}; partitions: ${partitions.join(" → ")}`);
    assert.deepEqual(order, [`${NAME}-2`, `${NAME}-1`, `${NAME}-0`]);
    const after = await uids();
    assert.equal(after.get(`${NAME}-2`), pod2AtKill, "pod 2 replaced again after the restart");
    for (const [name, uid] of before) assert.notEqual(after.get(name), uid, `${name} was not replaced`);
    assert.deepEqual(
      partitions.filter((p) => p <= 3),
      [...new Set(partitions)].sort((a, b) => b - a),
      "the partition only went down",
    );

    // The leader was asked to step down before its pod went.
    assert.ok(stepDowns.size >= 1, "status.upgrade.lastStepDownTime was set");
    assert.ok((await events("LeaderSteppedDown")).length >= 1, "a LeaderSteppedDown event");
    // With the root-token Secret gone, that step-down ran on the JWT login's token.
    assert.equal(
      await ctx.kubectl(["get", "secret", `${NAME}-root-token`, "--ignore-not-found", "-o", "name"]),
      "",
    );
    await ctx.getJson(`serviceaccount/${NAME}-upgrade-serviceaccount`);

    // The load stops and reads every acknowledged write back.
    console.log(`[numbers] upgrade ${Math.round((finished - started) / 1000)} s; ${summarizeLoad(report)}`);
    console.log(
      `[numbers] outages: ${report.outages.length}, failures by kind: ${report.errors
        .slice(0, 6)
        .map((e) => `${e.error} ×${e.count}`)
        .join(" | ")}`,
    );
    assert.equal(report.lostWrites, 0, `acknowledged writes lost: ${report.lostSequences.join(", ")}`);
    assert.equal(report.readsMismatched, 0, "a read returned another value");
    assert.equal(report.unverified, 0, "acknowledged writes that could not be read back");
    assert.ok(report.writesAcknowledged >= 20);
    assert.ok(report.leaderChanges >= 1, "leadership moved at least once");

    // Converged: version, status cleared, lock released, one success counted.
    await ctx.waitFor(`openbaocluster/${NAME}`, `jsonpath={.status.currentVersion}=${TO}`, 300);
    const c = await cluster();
    assert.equal(c.status.upgrade, undefined);
    assert.equal(c.status.operationLock?.holder, undefined, "the lock was released");
    for (const p of await voterPods()) assert.equal(p.spec.containers[0].image, `openbao/openbao:${TO}`);
    for (const i of [0, 1, 2])
      assert.match(
        await bao("bao status -format=json", `${NAME}-${i}`),
        new RegExp(`"version": "${TO.replace(/\./g, "\\.")}`),
      );
    const metrics = await op!.metrics();
    // The earlier processes died before the end: only the last one counted the success.
    assert.equal(metricSum(metrics, "openbao_upgrade_success_total", { name: NAME }), 1);
    // Upstream's progress metrics at the end: status 2 (succeeded), every pod done, partition 0.
    assert.equal(metricSum(metrics, "openbao_upgrade_status", { name: NAME }), 2);
    assert.equal(metricSum(metrics, "openbao_upgrade_in_progress", { name: NAME }), 0);
    assert.equal(metricSum(metrics, "openbao_upgrade_pods_completed", { name: NAME }), 3);
    assert.equal(metricSum(metrics, "openbao_upgrade_pods_total", { name: NAME }), 3);
    assert.equal(metricSum(metrics, "openbao_upgrade_partition", { name: NAME }), 0);
    const sts = await ctx.getJson(`statefulset/${NAME}`);
    assert.equal(sts.status.currentRevision, sts.status.updateRevision);
  });

  it(`a downgrade ${TO} → ${FROM} is refused with DowngradeBlocked and changes no pod`, {
    timeout: 10 * 60_000,
  }, async () => {
    const before = await uids();
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { version: FROM } }),
    ]);
    const c = await waitCondition("Upgrading", "DowngradeBlocked", 120_000);
    assert.equal(c.status, "False");
    assert.match(c.message, /spec\.version 2\.6\.2 is older than the running 2\.7\.2/);
    // The workload took the new template up and holds every pod: nothing rolls.
    await ctx.waitFor(
      `statefulset/${NAME}`,
      "jsonpath={.spec.updateStrategy.rollingUpdate.partition}=3",
      120,
    );
    const sts = await ctx.getJson(`statefulset/${NAME}`);
    assert.equal(sts.spec.template.spec.containers[0].image, `openbao/openbao:${FROM}`);
    assert.deepEqual(await uids(), before);
    for (const p of await voterPods()) {
      assert.equal(p.metadata.deletionTimestamp, undefined);
      assert.equal(p.spec.containers[0].image, `openbao/openbao:${TO}`);
    }
    assert.ok((await events("DowngradeBlocked")).length >= 1, "a DowngradeBlocked event");
    assert.equal((await cluster()).status.operationLock?.holder, undefined);
    // Nothing secret in anything the operator printed.
    outputs.push(op!.output());
    assert.ok(!outputs.some((o) => o.includes(token)), "the root token appeared in the operator's output");
  });
});
