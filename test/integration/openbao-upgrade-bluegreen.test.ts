import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type LineWatch, watchLines } from "../support/kube-watch.js";
import { summarizeLoad } from "../support/kv-load.js";
import { type NodeKvLoad, startNodeKvLoad } from "../support/kv-load-node.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { clusterProbe } from "../support/openbao-node-cluster.js";
import {
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// The node proof of the BlueGreen strategy (issue 12), on one 3-voter cluster that starts at 2.6.2:
//
// 1. Break-glass: an upgrade to 2.7.2 whose operator is killed once green votes (Promoting). While it
//    is down, two blue pods are deleted and a ResourceQuota keeps them from coming back, and a rollback
//    is requested. The next operator enters RollingBack, finds blue without a ready majority and Raft
//    without a leader, and enters break-glass (nonce, reason, steps). It stays halted after blue is
//    back, until spec.breakGlassAck echoes the nonce; then the rollback finishes and green is deleted.
// 2. A retry request with a pre-promotion hook that exits 3: green syncs, the hook Job fails, the
//    attempt rolls back before green ever votes.
// 3. A retry request starts the upgrade again, with a hook that passes (`bao status` against green
//    through the Job's BAO_ADDR/BAO_CACERT), under the KV load client (test/support/kv-load.ts)
//    through the client Service, and the operator is SIGKILLed in every phase it is seen in; each new
//    process resumes from status alone. Green comes up as a second StatefulSet, joins Raft as
//    non-voters, is promoted, takes leadership; blue is demoted, removed and deleted with its claims;
//    the serving set is then `<name>-<revision>`. No acknowledged write lost.
// 4. A second upgrade from that revision to 2.8.0, an image the node does not have: green cannot run,
//    the attempt rolls back and green is deleted with its claims; the serving revision is untouched.

const NAME = "gbao";
const FROM = "2.6.2";
const TO = "2.7.2";
const SELECTOR = `openbao.org/cluster=${NAME},openbao.org/component=server`;
const FORWARD = ["DeployingGreen", "JoiningMesh", "Syncing", "Promoting", "DemotingBlue", "Cleanup"];
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao upgrade: BlueGreen on the local node", { timeout: 60 * 60_000 }, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  const outputs: string[] = [];
  const watches: LineWatch[] = [];
  let token = "";
  let load: NodeKvLoad | undefined;

  const start = async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
  };
  const { cluster, condition, voterPods, bao, waitCondition } = clusterProbe(
    () => ctx,
    NAME,
    () => token,
  );
  const killOperator = async () => {
    if (!op) return;
    await op.kill();
    outputs.push(op.output());
    op = undefined;
  };
  const patchSpec = (spec: Json) =>
    ctx.kubectl(["patch", `openbaocluster/${NAME}`, "--type=merge", "-p", JSON.stringify({ spec })]);
  /** Waits until the Raft configuration, read on `pod`, is exactly `ids`, all voting. */
  const waitPeers = (pod: string, ids: string[]) =>
    poll(
      async () => {
        const out = await bao("bao operator raft list-peers -format=json", pod).catch(() => "");
        const servers: Json[] = out ? JSON.parse(out).data.config.servers : [];
        const names = servers.map((s) => s.node_id as string).sort();
        return JSON.stringify(names) === JSON.stringify([...ids].sort()) && servers.every((s) => s.voter)
          ? true
          : undefined;
      },
      600_000,
      `Raft voters ${ids.join(", ")}`,
      2000,
    );
  const phaseWatch = (onPhase: (phase: string) => void) =>
    watches.push(
      watchLines(
        ctx,
        ["get", `openbaocluster/${NAME}`, "-o", 'jsonpath={.status.blueGreen.phase}{"\\n"}'],
        (text) => {
          const p = text.trim();
          if (p) onPhase(p);
        },
      ),
    );
  before(
    async () => {
      ctx = await nodeNamespace("obbg");
      await installOpenBaoCrd(ctx);
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
          upgrade: { strategy: "BlueGreen", blueGreen: { verification: { minSyncDuration: "10s" } } },
        },
      });
      await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 900);
      await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 900);
      await ctx.waitFor(`openbaocluster/${NAME}`, `jsonpath={.status.currentVersion}=${FROM}`, 300);
      const secret = await ctx.getJson(`secret/${NAME}-root-token`);
      token = Buffer.from(secret.data.token, "base64").toString("utf8");
      await waitPeers(
        `${NAME}-0`,
        [0, 1, 2].map((i) => `${NAME}-${i}`),
      );
      await bao("bao secrets enable -path=load kv-v2");
      await poll(
        async () => ((await bao("bao kv put -mount=load probe v=1").catch(() => "")) ? true : undefined),
        120_000,
        "the KV v2 mount to accept writes",
        1000,
      );
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

  it(`break-glass: a rollback after green voted, with blue's majority kept down, halts until spec.breakGlassAck`, {
    timeout: 20 * 60_000,
  }, async () => {
    // Killed as soon as green votes, so the rollback below starts from a voting phase.
    let killedIn = "";
    let killed: () => void = () => {};
    const down = new Promise<void>((r) => {
      killed = r;
    });
    let once = false;
    phaseWatch((p) => {
      if (once || !["Promoting", "DemotingBlue"].includes(p)) return;
      once = true;
      void killOperator().then(async () => {
        killedIn = (await cluster()).status?.blueGreen?.phase ?? "none";
        killed();
      });
    });
    await patchSpec({ version: TO });
    await down;
    assert.ok(["Promoting", "DemotingBlue"].includes(killedIn), `killed in a voting phase (${killedIn})`);

    // Blue loses its majority and cannot get it back: no new pod may be created in the namespace.
    await ctx.apply({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "no-new-pods" },
      spec: { hard: { pods: "0" } },
    });
    await ctx.waitFor("resourcequota/no-new-pods", "jsonpath={.status.hard.pods}=0", 120);
    await ctx.kubectl(["delete", "pod", `${NAME}-0`, `${NAME}-1`, "--grace-period=0", "--force", "--wait"]);
    const blueLeft = async () =>
      (await voterPods()).filter((p) => /^gbao-[0-9]+$/.test(p.metadata.name)).map((p) => p.metadata.name);
    assert.deepEqual(await blueLeft(), [`${NAME}-2`], "the deleted blue pods were not recreated");
    await patchSpec({ upgrade: { requests: { rollback: "break-glass-test" } } });
    await start();

    const entered = await waitCondition("Upgrading", "BreakGlassRequired", 600_000);
    const glass = (await cluster()).status.breakGlass;
    console.log(`[break-glass] ${entered.message}`);
    assert.equal(glass.active, true);
    assert.equal(glass.reason, "RollbackConsensusRepairFailed");
    assert.match(glass.nonce, /^\S{8,}$/);
    assert.ok(glass.steps.length >= 3, "recovery steps are listed");
    assert.equal((await cluster()).status.blueGreen.phase, "RollingBack");
    const events = await ctx.kubectl(["get", "events", "-o", "json"]);
    assert.ok(
      JSON.parse(events).items.some((e: Json) => e.reason === "BreakGlassRequired"),
      "a BreakGlassRequired event",
    );

    // Blue comes back; automation stays halted, pass after pass, until the nonce is acknowledged.
    await ctx.kubectl(["delete", "resourcequota", "no-new-pods", "--wait"]);
    await ctx.kubectl(["annotate", "statefulset", NAME, `test.openbao.org/quota-lifted=${Date.now()}`]);
    await poll(
      async () =>
        (await voterPods()).filter((p) => /^gbao-[0-9]+$/.test(p.metadata.name)).length === 3
          ? true
          : undefined,
      300_000,
      "blue's pods recreated",
      2000,
    );
    await ctx.waitFor(`pod/${NAME}-0`, "condition=Ready", 300);
    await ctx.waitFor(`pod/${NAME}-1`, "condition=Ready", 300);
    const passes = async () =>
      metricSum(await op!.metrics(), "controller_runtime_reconcile_total", {
        controller: "openbaocluster-adminops",
      });
    // Nothing polls a halted cluster (no requeue, no periodic pass): wake AdminOps three times with
    // the trigger annotation, which it watches, and which asks for nothing without spec.backup.
    for (let i = 0; i < 3; i++) {
      const from = await passes();
      await ctx.kubectl([
        "annotate",
        "--overwrite",
        `openbaocluster/${NAME}`,
        `openbao.org/trigger-backup=wake-${i}`,
      ]);
      await poll(
        async () => ((await passes()) > from ? true : undefined),
        120_000,
        `AdminOps pass ${i + 1} of 3 while halted`,
        1000,
      );
    }
    const halted = (await cluster()).status;
    assert.equal(halted.breakGlass.active, true, "still halted");
    assert.equal(halted.breakGlass.nonce, glass.nonce);
    assert.equal(halted.blueGreen.phase, "RollingBack", "no phase moved while halted");

    await patchSpec({ breakGlassAck: glass.nonce });
    const done = await poll(
      async () => {
        const u = await condition("Upgrading").catch(() => undefined);
        return u?.reason === "UpgradeRollback" && u.status === "False" ? u : undefined;
      },
      600_000,
      "Upgrading False UpgradeRollback",
      1000,
    );
    console.log(`[break-glass] after the acknowledgement: ${done.message}`);
    const after = (await cluster()).status;
    assert.equal(after.breakGlass.active, false);
    assert.ok(after.breakGlass.acknowledgedAt, "the acknowledgement is recorded");
    assert.equal(after.blueGreen.phase, "Idle");
    assert.equal(after.operationLock?.holder, undefined, "the lock was released");
    await poll(
      async () => {
        const sets = JSON.parse(
          await ctx.kubectl(["get", "statefulsets", "-l", SELECTOR, "-o", "json"]),
        ).items;
        return sets.length === 1 && sets[0].metadata.name === NAME ? true : undefined;
      },
      300_000,
      "green's StatefulSet deleted",
      2000,
    );
    await waitPeers(
      `${NAME}-0`,
      [0, 1, 2].map((i) => `${NAME}-${i}`),
    );
    for (const p of await voterPods()) assert.equal(p.spec.containers[0].image, `openbao/openbao:${FROM}`);
    assert.equal(
      (await bao("bao kv get -mount=load -field=v probe")).trim(),
      "1",
      "the data written before is there",
    );
  });

  it("a pre-promotion hook that fails rolls back before green votes", { timeout: 15 * 60_000 }, async () => {
    const phases: string[] = [];
    phaseWatch((p) => {
      if (phases.at(-1) !== p) phases.push(p);
    });
    await patchSpec({
      upgrade: {
        requests: { retry: "hook-fails" },
        blueGreen: {
          verification: {
            prePromotionHook: { image: `openbao/openbao:${TO}`, command: ["sh", "-c", "exit 3"] },
          },
        },
      },
    });
    // The previous attempt also ended in UpgradeRollback: wait for this attempt's own end, named by
    // its rollback reason, not for the condition alone.
    const c = await poll(
      async () => {
        const u = await condition("Upgrading").catch(() => undefined);
        const bg = (await cluster()).status?.blueGreen;
        return u?.reason === "UpgradeRollback" &&
          u.status === "False" &&
          bg?.phase === "Idle" &&
          /pre-promotion hook/.test(bg.rollbackReason ?? "")
          ? u
          : undefined;
      },
      600_000,
      "the hook's failure rolled the attempt back",
      1000,
    );
    console.log(`[hook] ${phases.join(" → ")}; ${c.message}`);
    const st = (await cluster()).status;
    assert.match(st.blueGreen.rollbackReason, /^Syncing: pre-promotion hook Job \S+ exited with status 3/);
    assert.ok(phases.includes("Syncing") && !phases.includes("Promoting"), "green never voted");
    const jobs = JSON.parse(await ctx.kubectl(["get", "jobs", "-o", "json"])).items as Json[];
    const hookJobs = jobs.filter((j) => j.metadata.labels?.["openbao.org/component"] === "validation-hook");
    assert.equal(hookJobs.length, 1, "one hook Job for the attempt");
    assert.equal(hookJobs[0].metadata.name, `${NAME}-validation-hook`, "upstream's name");
    assert.ok(hookJobs[0].status.conditions.some((x: Json) => x.type === "Failed" && x.status === "True"));
    await waitPeers(
      `${NAME}-0`,
      [0, 1, 2].map((i) => `${NAME}-${i}`),
    );
  });

  it(`3 voters ${FROM} → ${TO} on retry, under KV load and an operator killed in every phase: green takes over, blue removed, no acknowledged write lost`, {
    timeout: 30 * 60_000,
  }, async () => {
    // The load client, inside the node's network, through the client Service.
    load = await startNodeKvLoad(ctx, NAME, token);

    // Every phase status.blueGreen passed through, as the API server reports them; the operator is
    // SIGKILLed as soon as each forward phase is seen, and the phase stored at that moment is recorded.
    const phases: string[] = [];
    const killedIn: string[] = [];
    let killing = Promise.resolve();
    phaseWatch((p) => {
      if (phases.at(-1) === p) return;
      phases.push(p);
      if (!FORWARD.includes(p)) return;
      killing = killing.then(async () => {
        await killOperator();
        killedIn.push((await cluster()).status?.blueGreen?.phase ?? "none");
        await start();
      });
    });

    const started = Date.now();
    // This time the hook checks green through its own environment (BAO_ADDR, BAO_CACERT) and passes.
    await patchSpec({
      upgrade: {
        requests: { retry: "after-hook-rollback" },
        blueGreen: {
          verification: {
            prePromotionHook: { image: `openbao/openbao:${TO}`, command: ["sh", "-c", "bao status"] },
          },
        },
      },
    });

    await waitCondition("Upgrading", "UpgradeComplete", 1_800_000);
    const finished = Date.now();
    await killing;
    const report = await load.finish();
    console.log(`[phases] ${phases.join(" → ")}; operator killed while status said: ${killedIn.join(", ")}`);
    for (const p of [...FORWARD, "Idle"])
      assert.ok(phases.includes(p), `phase ${p} was passed through (${phases.join(", ")})`);
    for (const p of FORWARD)
      assert.ok(killedIn.includes(p), `the operator was killed in ${p} (killed in: ${killedIn.join(", ")})`);

    console.log(`[numbers] upgrade ${Math.round((finished - started) / 1000)} s; ${summarizeLoad(report)}`);
    assert.equal(report.lostWrites, 0, `acknowledged writes lost: ${report.lostSequences.join(", ")}`);
    assert.equal(report.readsMismatched, 0, "a read returned another value");
    assert.equal(report.unverified, 0, "acknowledged writes that could not be read back");
    assert.ok(report.leaderChanges >= 1, "leadership moved to green");

    // Converged: green serves as <name>-<revision>, blue's set and claims are gone.
    await ctx.waitFor(`openbaocluster/${NAME}`, `jsonpath={.status.currentVersion}=${TO}`, 300);
    const c = await cluster();
    const revision: string = c.status.blueGreen.blueRevision;
    assert.ok(revision, "status.blueGreen.blueRevision names the serving revision");
    assert.equal(c.status.blueGreen.phase, "Idle");
    assert.equal(c.status.operationLock?.holder, undefined, "the lock was released");
    const serving = `${NAME}-${revision}`;
    await poll(
      async () => {
        const sets = JSON.parse(
          await ctx.kubectl(["get", "statefulsets", "-l", SELECTOR, "-o", "json"]),
        ).items;
        return sets.length === 1 && sets[0].metadata.name === serving ? true : undefined;
      },
      300_000,
      `only StatefulSet ${serving} left`,
      2000,
    );
    await poll(
      async () => {
        const claims = JSON.parse(
          await ctx.kubectl(["get", "pvc", "-l", `openbao.org/cluster=${NAME}`, "-o", "json"]),
        ).items.map((p: Json) => p.metadata.name as string);
        return claims.every((n: string) => n.startsWith(`data-${serving}-`)) && claims.length === 3
          ? true
          : undefined;
      },
      300_000,
      "only the serving revision's claims left",
      2000,
    );
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 600);
    const pods = await voterPods();
    assert.deepEqual(
      pods.map((p) => p.metadata.name).sort(),
      [0, 1, 2].map((i) => `${serving}-${i}`),
    );
    for (const p of pods) assert.equal(p.spec.containers[0].image, `openbao/openbao:${TO}`);
    const peers = JSON.parse(await bao("bao operator raft list-peers -format=json", `${serving}-0`)).data
      .config.servers as Json[];
    assert.deepEqual(
      peers.map((s) => s.node_id).sort(),
      [0, 1, 2].map((i) => `${serving}-${i}`),
    );
    assert.ok(peers.every((s) => s.voter));
    const svc = await ctx.getJson(`service/${NAME}-public`);
    assert.equal(
      svc.spec.selector["openbao.org/revision"],
      revision,
      "the client Service selects the serving revision",
    );
    const hookJob = JSON.parse(await ctx.kubectl(["get", "jobs", "-o", "json"])).items.find(
      (j: Json) => j.metadata.annotations?.["openbao.org/upgrade-run-id"] === c.status.blueGreen.operationID,
    );
    assert.ok(
      hookJob?.status.conditions.some((x: Json) => x.type === "Complete" && x.status === "True"),
      "the pre-promotion hook ran and passed",
    );
    const metrics = await op!.metrics();
    assert.equal(metricSum(metrics, "openbao_upgrade_success_total", { name: NAME }), 1);
    outputs.push(op!.output());
    assert.ok(!outputs.some((o) => o.includes(token)), "the root token appeared in the operator's output");
  });
  it("a green that cannot run (2.8.0 is not on the node) rolls back and cleans up; the serving revision is untouched", {
    timeout: 20 * 60_000,
  }, async () => {
    const before = await cluster();
    const revision: string = before.status.blueGreen.blueRevision;
    const serving = `${NAME}-${revision}`;
    const podsBefore = new Map(
      (await voterPods()).map((p) => [p.metadata.name as string, p.metadata.uid as string]),
    );
    const phases: string[] = [];
    phaseWatch((p) => {
      if (phases.at(-1) !== p) phases.push(p);
    });
    await patchSpec({ version: "2.8.0" });
    // UpgradeRollback is True while the rollback runs and False once it finished.
    const c = await poll(
      async () => {
        const u = await condition("Upgrading").catch(() => undefined);
        return u?.reason === "UpgradeRollback" && u.status === "False" ? u : undefined;
      },
      900_000,
      "Upgrading False UpgradeRollback",
      1000,
    );
    console.log(`[phases] ${phases.join(" → ")}; ${c.message}`);
    const after = (await cluster()).status;
    assert.equal(after.blueGreen.phase, "Idle");
    assert.equal(after.blueGreen.blueRevision, revision, "the serving revision did not move");
    assert.match(after.blueGreen.rollbackReason, /ErrImagePull|ImagePullBackOff/);
    assert.equal(after.operationLock?.holder, undefined, "the lock was released");
    const green = after.blueGreen.greenRevision ?? "";
    await poll(
      async () => {
        const sets = JSON.parse(
          await ctx.kubectl(["get", "statefulsets", "-l", SELECTOR, "-o", "json"]),
        ).items;
        const claims = JSON.parse(
          await ctx.kubectl(["get", "pvc", "-l", `openbao.org/cluster=${NAME}`, "-o", "json"]),
        ).items.map((p: Json) => p.metadata.name as string);
        return sets.length === 1 &&
          sets[0].metadata.name === serving &&
          claims.every((n: string) => n.startsWith(`data-${serving}-`))
          ? true
          : undefined;
      },
      300_000,
      `green${green ? ` ${green}` : ""} deleted with its claims`,
      2000,
    );
    // Blue never restarted, and still runs 2.7.2 with three voters.
    assert.deepEqual(
      new Map((await voterPods()).map((p) => [p.metadata.name as string, p.metadata.uid as string])),
      podsBefore,
    );
    for (const p of await voterPods()) assert.equal(p.spec.containers[0].image, `openbao/openbao:${TO}`);
    const peers = JSON.parse(await bao("bao operator raft list-peers -format=json", `${serving}-0`)).data
      .config.servers as Json[];
    assert.deepEqual(
      peers.map((s) => s.node_id).sort(),
      [0, 1, 2].map((i) => `${serving}-${i}`),
    );
  });
});
