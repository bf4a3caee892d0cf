import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { CONTROLLER_NAME } from "../../src/targets/openbao/target.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../../src/testenv/objectstores.js";
import { removeTempDir } from "../../src/testenv/tempdirs.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";
import { block, runShell, toolDir } from "../support/runbook.js";
import {
  type Json,
  upstreamCluster,
  upstreamDocuments,
  upstreamSamplesMissing,
} from "../support/upstream-samples.js";

// Part (c) of the proof that upstream openbao-operator's manifests work here: the basic sample is
// backed up, its snapshot restored into a fresh cluster with upstream's OpenBaoRestore sample, the
// value read back, and the restored cluster scaled to 3 voters. The samples are read where the
// workspace keeps them; every change to them is listed below, so a new one shows up in review.
//
// What it proves about a restore into another cluster:
// - the target's running seal cannot open the snapshot (another static key): the plain restore is
//   refused before anything changes, with reason SealMismatch naming the Secret to fill;
// - with the source's key copied and `force: true` (snapshot-force), the restore completes, the
//   operator restarts the pods so they open the restored data with that key, and the value is back;
// - the target's own root token is dead afterwards (the data has the source's tokens): one event,
//   Degraded=True RootTokenRefused, and no call with it pass after pass; the source's token in the
//   Secret gives the operator its access back;
// - the read replica restarts after the voters are back (status.restore.restartCompletedAt; the phase
//   RestoringReadReplicas when a pass sees that window) and serves the restored value itself;
// - the read replica stays a non-voter through the restore and the scale: the restored data's
//   Autopilot non-voter list is the source's, without it, and the operator puts it back (issue 41);
// - scaling 1 → 3 forms three voters in OpenBao's own peer list within minutes (it took 11 and more
//   when the leader kept its pre-restore Raft TLS key: `tls: unrecognized name`), the value readable
//   on each of them.

const CHANGES = {
  source: [
    `spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}, the image the node holds`,
    "spec.backup added (the basic sample has none): the in-node S3 server, the sample's bucket and credentials Secret names, the root-token Secret as the backup token",
  ],
  target: [
    "metadata.name: <basic>-restored (a second cluster beside the source)",
    `spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}`,
    "spec.replicas: 3 → 1, scaled to 3 after the restore",
    "spec.readReplicas.replicas: 1 (a read replica restored with the voters)",
  ],
  restore: [
    "metadata.name per attempt, spec.cluster: the target",
    "spec.source.key: the backup's key; spec.source.target.endpoint: the in-node S3 server, usePathStyle: true (it serves path-style only)",
    "spec.tokenSecretRef: the target's root-token Secret (the sample leaves it commented out)",
    "spec.force: true on the second attempt",
  ],
};

const skip = upstreamSamplesMissing();
const BUCKET = "openbao-backups";

describe(`upstream basic sample: backup, restore into a fresh cluster, scale to 3 (changes: ${JSON.stringify(CHANGES)})`, {
  skip,
  timeout: 60 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> };
  const source = skip ? {} : upstreamCluster("basic");
  const restoreSample = skip ? {} : upstreamDocuments().find((d) => d.doc["kind"] === "OpenBaoRestore")!.doc;
  const SRC = String((source["metadata"] as Json | undefined)?.["name"] ?? "");
  const DST = `${SRC}-restored`;
  let sourceToken = "";
  let backupKey = "";

  const kv = (pod: string, token: string, cmd: string) =>
    ctx.kubectl(["exec", pod, "--", "sh", "-c", `BAO_TOKEN=${token} ${cmd}`]);
  const secretText = async (name: string, key: string) =>
    Buffer.from((await ctx.getJson(`secret/${name}`))["data"][key], "base64").toString("utf8");
  const cluster = (name: string) => ctx.getJson(`openbaocluster/${name}`);
  const condition = async (name: string, type: string): Promise<Json | undefined> =>
    (await cluster(name)).status?.conditions?.find((c: Json) => c["type"] === type);
  const available = (name: string, replicas: number, ms: number) =>
    poll(
      async () => {
        const c = await cluster(name);
        const a = c.status?.conditions?.find((x: Json) => x.type === "Available");
        return a?.status === "True" && c.status?.readyReplicas === replicas ? c : undefined;
      },
      ms,
      `${name}: Available with ${replicas} ready voters`,
      3000,
    ).catch(async (e: unknown) => {
      const c: Json = await cluster(name).catch(() => ({}));
      const pods = await ctx.kubectl(["get", "pods", "-o", "wide"]).catch(() => "");
      throw new Error(`${String(e)}\nstatus: ${JSON.stringify(c["status"])}\n${pods}`);
    });
  /** Events of `reason` about `name`, counting each series' repetitions. */
  const eventCount = async (name: string, reason: string) => {
    const list = JSON.parse(
      await ctx.kubectl([
        "get",
        "events",
        "--field-selector",
        `reason=${reason},involvedObject.name=${name}`,
        "-o",
        "json",
      ]),
    ).items as Json[];
    return list.reduce(
      (n, e) => n + Number((e["series"] as Json | undefined)?.["count"] ?? e["count"] ?? 1),
      0,
    );
  };
  /**
   * What decides the read replica's suffrage, as seen from inside: its rendered config, the node id
   * it runs under, Raft's configuration and Autopilot's intent for it (node_type "non-voter" only
   * while OpenBao keeps it in its permanent non-voter list, which lives in the replicated data).
   */
  const REPLICA = () => `${DST}-read-0`;
  const replicaFacts = async (step: string, token: string) => {
    const say = (pod: string, cmd: string) => kv(pod, token, cmd).catch((e: Error) => e.message);
    const config = await ctx
      .kubectl(["exec", REPLICA(), "--", "cat", "/openbao/config/config.hcl"])
      .catch((e: Error) => e.message);
    const nodeId = (
      await ctx.kubectl(["exec", REPLICA(), "--", "sh", "-c", "echo $BAO_RAFT_NODE_ID"])
    ).trim();
    const raft = JSON.parse(await say(`${DST}-0`, "bao read -format=json sys/storage/raft/configuration"));
    const autopilot = JSON.parse(
      await say(`${DST}-0`, "bao read -format=json sys/storage/raft/autopilot/state"),
    );
    const servers = raft.data.config.servers as { node_id: string; voter: boolean }[];
    const facts = {
      step,
      configNonVoter: /retry_join_as_non_voter\s*=\s*true/.test(config),
      nodeId,
      raft: servers.map((x) => `${x.node_id}=${x.voter ? "voter" : "non-voter"}`).join(" "),
      replicaVoter: servers.find((x) => x.node_id === REPLICA())?.voter,
      replicaNodeType: autopilot.data.servers?.[REPLICA()]?.node_type as string | undefined,
    };
    console.log(`read replica facts: ${JSON.stringify(facts)}`);
    return facts;
  };
  const restore = (name: string, extra: Json): Json => {
    const doc = structuredClone(restoreSample) as Json;
    const spec = doc["spec"] as Json;
    const src = spec["source"] as Json;
    const target = src["target"] as Json;
    (doc["metadata"] as Json)["name"] = name;
    spec["cluster"] = DST;
    src["key"] = backupKey;
    target["endpoint"] = s3.endpoint;
    target["usePathStyle"] = true;
    spec["tokenSecretRef"] = { name: `${DST}-root-token` };
    Object.assign(spec, extra);
    return doc;
  };
  const finished = (name: string) =>
    poll(
      async () => {
        const r = await ctx.getJson(`openbaorestore/${name}`);
        return r.status?.phase === "Completed" || r.status?.phase === "Failed" ? r : undefined;
      },
      10 * 60_000,
      `${name} to end`,
      3000,
    );

  before(
    async () => {
      ctx = await nodeNamespace("upstream-restore");
      await installOpenBaoCrd(ctx);
      await reloadOperatorImage(ctx.node.ctr, ctx.node.containerdSocket);
      s3 = await startS3Server({
        buckets: [BUCKET],
        host: ctx.node.addresses.nodeIp,
        wrap: ctx.node.inCluster,
      });
      op = await startOpenBaoOperator(ctx, {
        pollInterval: "2s",
        resyncInterval: "5s",
        executorImage: OPERATOR_IMAGE,
      });
    },
    { timeout: 45 * 60_000 },
  );
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await s3?.stop();
    await deleteNamespace(ctx);
  });

  it("the basic sample forms its 3 voters, holds a value and is backed up", async () => {
    const doc = structuredClone(source);
    const spec = doc["spec"] as Json;
    spec["version"] = BAO_DEFAULT_VERSION;
    spec["backup"] = {
      schedule: "0 0 1 1 *",
      tokenSecretRef: { name: `${SRC}-root-token` },
      target: {
        endpoint: s3.endpoint,
        bucket: BUCKET,
        pathPrefix: "clusters",
        usePathStyle: true,
        credentialsSecretRef: { name: "s3-credentials" },
      },
    };
    await ctx.apply(
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s3-credentials" },
        stringData: { ...S3_TEST_CREDENTIALS },
      },
      doc,
    );
    await available(SRC, 3, 20 * 60_000);
    sourceToken = await secretText(`${SRC}-root-token`, "token");
    await kv(`${SRC}-0`, sourceToken, "bao secrets enable -path=kv kv-v2");
    await kv(`${SRC}-0`, sourceToken, "bao kv put kv/app color=blue");
    await ctx.kubectl(["annotate", "--overwrite", `openbaocluster/${SRC}`, "openbao.org/trigger-backup=c1"]);
    const b = await poll(
      async () => {
        const s = (await cluster(SRC)).status?.backup ?? {};
        return s.lastHandledManualTrigger === "c1" && !s.jobName ? s : undefined;
      },
      5 * 60_000,
      "the backup of the source",
      2000,
    );
    assert.equal(b.consecutiveFailures ?? 0, 0, JSON.stringify(b));
    backupKey = b.lastBackupKey;
    assert.ok(backupKey, JSON.stringify(b));
  });

  it("a fresh cluster refuses the snapshot of another seal key before changing anything, and says which Secret", async () => {
    const doc = structuredClone(source);
    (doc["metadata"] as Json)["name"] = DST;
    const spec = doc["spec"] as Json;
    spec["version"] = BAO_DEFAULT_VERSION;
    spec["replicas"] = 1;
    spec["readReplicas"] = { replicas: 1 };
    await ctx.apply(doc);
    await available(DST, 1, 15 * 60_000);
    const own0 = await secretText(`${DST}-root-token`, "token");
    await poll(
      async () => ((await replicaFacts("before the restore", own0)).replicaNodeType ? true : undefined),
      5 * 60_000,
      "the read replica in Autopilot's state",
      3000,
    );
    await ctx.apply(restore("restore-plain", {}));
    const r = await finished("restore-plain");
    assert.equal(r.status.phase, "Failed", JSON.stringify(r.status));
    const c = r.status.conditions.find((x: Json) => x.type === "RestoreComplete");
    assert.match(c.message, /^SealMismatch: /);
    assert.match(r.status.message, /could not verify hash file/);
    assert.match(r.status.message, new RegExp(`Secret ${DST}-unseal-key`));
    assert.match(r.status.message, /the cluster was not changed$/);
    // Not changed indeed: the target still answers with its own token and has no kv mount.
    const own = await secretText(`${DST}-root-token`, "token");
    assert.doesNotMatch(await kv(`${DST}-0`, own, "bao secrets list -format=json"), /"kv\/"/);
  });

  it("with the source's key and force: restored, pods restarted, the value back, the dead root token said once", async () => {
    const key = (await ctx.getJson(`secret/${SRC}-unseal-key`))["data"].key;
    await ctx.kubectl([
      "patch",
      `secret/${DST}-unseal-key`,
      "--type=merge",
      "-p",
      JSON.stringify({ data: { key } }),
    ]);
    const podUid = (await ctx.getJson(`pod/${DST}-0`)).metadata.uid;
    const readUid = (await ctx.getJson(`pod/${DST}-read-0`)).metadata.uid;
    // The cluster's phases while the restore runs, from a watch: every status write is seen (sampling
    // by polling missed the read replicas' phase, which lasts seconds, on a loaded machine).
    const phases = new Set<string>();
    const watch = spawn(
      ctx.node.kubectl,
      [
        "--kubeconfig",
        ctx.node.kubeconfigPath,
        "-n",
        ctx.namespace,
        "get",
        `openbaocluster/${DST}`,
        "-w",
        "-o",
        'jsonpath={.status.phase}{"\\n"}',
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    watch.stdout.setEncoding("utf8");
    watch.stdout.on("data", (chunk: string) => {
      for (const p of chunk.split("\n")) if (p.trim()) phases.add(p.trim());
    });
    await ctx.apply(restore("restore-force", { force: true }));
    const r = await finished("restore-force").finally(() => watch.kill());
    assert.equal(r.status.phase, "Completed", JSON.stringify(r.status));
    assert.equal(await eventCount("restore-force", "PodsRestarted"), 1);
    assert.equal(await eventCount("restore-force", "ReadReplicasRestarted"), 1);
    // Upstream's record of the restart on the cluster, and the read replicas' phase while it lasted.
    const record = (await cluster(DST)).status?.restore;
    assert.equal(record?.name, "restore-force");
    assert.equal(record?.uid, r.metadata.uid);
    assert.ok(
      Date.parse(record?.restartCompletedAt) <= Date.parse(r.status.completionTime),
      JSON.stringify(record),
    );
    // RestoringReadReplicas is written only by a cluster pass that runs while the replicas restart
    // with the lock held; a fast replica (or a busy machine that runs no pass in that window) never
    // shows it. What it stood for is asserted above (ReadReplicasRestarted, restartCompletedAt).
    console.log(`# cluster phases seen during the restore: ${[...phases].join(", ")}`);
    await available(DST, 1, 10 * 60_000);
    assert.equal((await cluster(DST)).status?.phase, "Running");
    assert.notEqual((await ctx.getJson(`pod/${DST}-0`)).metadata.uid, podUid, "pod 0 was restarted");
    const replica = await ctx.getJson(`pod/${DST}-read-0`);
    assert.notEqual(replica.metadata.uid, readUid, "the read replica was restarted");
    // After the voters: the replica is newer than the record of their restart.
    assert.ok(Date.parse(replica.metadata.creationTimestamp) >= Date.parse(record.restartCompletedAt));
    const app = await poll(
      async () => {
        const out = await kv(`${DST}-0`, sourceToken, "bao kv get -format=json kv/app").catch(() => "");
        return out.includes('"color"') ? out : undefined;
      },
      180_000,
      "kv/app readable on the restored cluster",
      3000,
    );
    assert.match(app, /"color": "blue"/);
    // The read replica is unsealed, a non-voter of the restored cluster, and answers the value.
    const replicaStatus = JSON.parse(
      await kv(`${DST}-read-0`, sourceToken, "bao status -format=json").catch((e: Error) => e.message),
    );
    assert.equal(replicaStatus.sealed, false, JSON.stringify(replicaStatus));
    assert.match(await kv(`${DST}-read-0`, sourceToken, "bao kv get -format=json kv/app"), /"color": "blue"/);
    const peers = JSON.parse(await kv(`${DST}-0`, sourceToken, "bao operator raft list-peers -format=json"));
    const suffrage = (peers.data.config.servers as { node_id: string; voter: boolean }[]).map(
      (x) => `${x.node_id}=${x.voter ? "voter" : "non-voter"}`,
    );
    console.log(`after the restore: ${suffrage.join(", ")}`);
    await replicaFacts("after the restore and the replica's restart", sourceToken);

    // The target's own token died with its data: said once, on the condition, and not used again.
    const refused = await poll(
      async () => {
        const d = await condition(DST, "Degraded");
        return d?.["status"] === "True" && d["reason"] === "RootTokenRefused" ? d : undefined;
      },
      180_000,
      "Degraded=True RootTokenRefused on the restored cluster",
      2000,
    );
    assert.match(String(refused["message"]), new RegExp(`Secret ${DST}-root-token`));
    const passes = () =>
      op!
        .metrics()
        .then((m) => metricSum(m, "controller_runtime_reconcile_total", { controller: CONTROLLER_NAME }));
    const from = await passes();
    await poll(async () => ((await passes()) >= from + 5 ? true : undefined), 120_000, "5 more passes", 2000);
    assert.equal(await eventCount(DST, "RootTokenRefused"), 1, "one event, not one per pass");
    assert.doesNotMatch(op!.output(), /Autopilot configuration not applied yet[^\n]*403/);

    // docs/runbooks/openbao.md "Reconciles failing", as a reader runs it: the check names the reason
    // and the Secret; the act puts the source's root token, valid for the restored data, into it.
    const dir = await toolDir(ctx.node.kubectl);
    try {
      const env = {
        NS: ctx.namespace,
        NAME: DST,
        SOURCE: SRC,
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: ctx.node.kubeconfigPath,
      };
      const seen = await runShell(block("openbao.md", "Reconciles failing", "Degraded"), env, true);
      assert.match(
        seen,
        new RegExp(`^True RootTokenRefused: OpenBao refuses the token in Secret ${DST}-root-token`, "m"),
        seen,
      );
      await runShell(block("openbao.md", "Reconciles failing", "patch-file"), env);
      assert.equal(
        await secretText(`${DST}-root-token`, "token"),
        sourceToken,
        "the source's token, as it was",
      );
    } finally {
      removeTempDir(dir);
    }
    await poll(
      async () => ((await condition(DST, "Degraded"))?.["status"] === "False" ? true : undefined),
      180_000,
      "Degraded=False once the Secret holds a valid token",
      2000,
    );
    // The restored data's Autopilot non-voter list came from the source, which had no read replica:
    // with its access back, the operator puts the replica back on it (issue 41), and Raft has it as
    // a non-voter. On the old code Autopilot typed it a voter here and promoted it during the scale.
    await poll(
      async () => {
        const f = await replicaFacts("once the operator's token works again", sourceToken);
        return f.replicaNodeType === "non-voter" && f.replicaVoter === false ? f : undefined;
      },
      120_000,
      `${DST}-read-0 on Autopilot's non-voter list and a Raft non-voter`,
      3000,
    );
  });

  it("the restored cluster scales to 3 voters, all in OpenBao's own peer list, within minutes", async () => {
    const started = Date.now();
    // The replica's suffrage sampled through the scale: every change, with the second it was seen.
    const seen: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      let last = "";
      while (sampling) {
        const out = await kv(
          `${DST}-0`,
          sourceToken,
          "bao read -format=json sys/storage/raft/configuration",
        ).catch(() => "");
        const servers = out
          ? (JSON.parse(out).data.config.servers as { node_id: string; voter: boolean }[])
          : [];
        const r = servers.find((x) => x.node_id === REPLICA());
        const now = r ? (r.voter ? "voter" : "non-voter") : "absent";
        if (out && now !== last) {
          seen.push(`${((Date.now() - started) / 1000).toFixed(0)}s:${now}`);
          last = now;
        }
        await new Promise((res) => setTimeout(res, 2000));
      }
    })();
    await ctx.kubectl(["patch", `openbaocluster/${DST}`, "--type=merge", "-p", '{"spec":{"replicas":3}}']);
    await available(DST, 3, 6 * 60_000).catch((e: unknown) => {
      sampling = false;
      throw e;
    });
    const want = [0, 1, 2].map((i) => `${DST}-${i}`);
    const servers = await poll(
      async () => {
        const out = await kv(`${DST}-0`, sourceToken, "bao operator raft list-peers -format=json").catch(
          () => "",
        );
        if (!out) return undefined;
        const list = JSON.parse(out).data.config.servers as { node_id: string; voter: boolean }[];
        const voters = new Set(list.filter((s) => s.voter).map((s) => s.node_id));
        return want.every((id) => voters.has(id)) ? list : undefined;
      },
      120_000,
      "the 3 voter pods as voters in the restored cluster's Raft peer list",
      2000,
    ).catch(async (e: unknown) => {
      // What OpenBao says instead: its peer list, Autopilot's view, and the new voters' last words.
      const say = (p: string, cmd: string) => kv(p, sourceToken, cmd).catch((x: Error) => x.message);
      const peers = await say(`${DST}-0`, "bao operator raft list-peers");
      const autopilot = await say(`${DST}-0`, "bao operator raft autopilot state");
      const logs = await Promise.all(
        want.map((p) => ctx.kubectl(["logs", p, "--tail=15"]).catch((x: Error) => x.message)),
      );
      sampling = false;
      throw new Error(`${String(e)}\n${peers}\n${autopilot}\n${logs.join("\n---\n")}`);
    });
    // Three voters, and the read replica beside them, a non-voter all along: on Autopilot's
    // non-voter list, a non-voter in Raft, and never seen voting while the voters joined.
    assert.deepEqual(servers.map((s) => s.node_id).sort(), [...want, REPLICA()].sort());
    const facts = await replicaFacts("after the scale to 3", sourceToken).finally(() => {
      sampling = false;
    });
    await sampler;
    console.log(`read replica suffrage through the scale: ${seen.join(" ")}`);
    assert.equal(facts.configNonVoter, true, "retry_join_as_non_voter in the replica's config");
    assert.equal(facts.nodeId, REPLICA());
    assert.equal(facts.replicaNodeType, "non-voter", JSON.stringify(facts));
    assert.equal(facts.replicaVoter, false, JSON.stringify(facts));
    assert.ok(
      !seen.some((x) => x.endsWith(":voter")),
      `the replica voted during the scale: ${seen.join(" ")}`,
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(`restored cluster 1 → 3 voters in ${seconds.toFixed(1)} s`);
    // The data was kept: the value reads back on every voter, the new ones included.
    for (const p of want)
      assert.match(await kv(p, sourceToken, "bao kv get -format=json kv/app"), /"color": "blue"/, p);
    // Every pod follows the one leader over Raft TLS: no heartbeat refused by a server name.
    const logs = await Promise.all(want.map((p) => ctx.kubectl(["logs", p]).catch(() => "")));
    assert.doesNotMatch(logs.join("\n"), /unrecognized name/);
  });
});
