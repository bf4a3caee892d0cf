import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../../src/testenv/objectstores.js";
import { clientFor } from "../support/kube.js";
import { addProcess, assertEnvFromSecretsOnly, LeakSearch } from "../support/leak-search.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// The canary test on the real local node, for what only running pods produce: the root token and
// the unseal key from the operator's own initialization, and the executor Jobs (a backup, a backup
// refused for its token, the pre-upgrade snapshot of a rolling upgrade 2.6.2 → 2.7.2, a restore
// refused for its token, a restore).
// Every secret value (generated, or given in a Secret) is a canary; once the cluster has been
// through all of it, each is searched for byte for byte in events, ConfigMaps, labels and
// annotations, workload and Job specs, every pod's log (OpenBao's and the executors'), the custom
// resources' status, the operator's debug log and /metrics. Env values must come from Secret refs.

const NAME = "leak";
const FROM = "2.6.2";
const TO = "2.7.2";
const BUCKET = "snapshots";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao on the node: no secret value outside a Secret", { timeout: 60 * 60_000 }, () => {
  let ctx: NodeNamespace;
  let client: KubeClient;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> } | undefined;
  let rootToken = "";
  const canaries: Record<string, string> = {};

  before(
    async () => {
      ctx = await nodeNamespace("obleak");
      client = clientFor(ctx.node.kubeconfigPath);
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
    { timeout: 20 * 60_000 },
  );
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await s3?.stop();
    client?.close();
    await deleteNamespace(ctx);
  });

  const cluster = async (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const backup = async (): Promise<Json> => (await cluster()).status?.backup ?? {};
  const bao = (cmd: string) =>
    ctx.kubectl(["exec", `${NAME}-0`, "--", "sh", "-c", `BAO_TOKEN=${rootToken} ${cmd}`]);
  const secretValue = async (name: string, key: string) =>
    Buffer.from((await ctx.getJson(`secret/${name}`)).data[key], "base64").toString("utf8");
  const patch = (spec: Json) =>
    ctx.kubectl(["patch", `openbaocluster/${NAME}`, "--type=merge", "-p", JSON.stringify({ spec })]);
  const trigger = (value: string) =>
    ctx.kubectl(["annotate", "--overwrite", `openbaocluster/${NAME}`, `openbao.org/trigger-backup=${value}`]);
  const settled = (what: (b: Json) => boolean, label: string) =>
    poll(
      async () => {
        const b = await backup();
        return !b.jobName && what(b) ? b : undefined;
      },
      600_000,
      label,
      2000,
    );
  const lockReleased = () =>
    poll(
      async () => (((await cluster()).status?.operationLock?.holder ?? "") === "" ? true : undefined),
      180_000,
      "the operation lock released",
      2000,
    );
  // Server-side apply: kubectl's client-side apply would copy the values into the Secret's
  // last-applied-configuration annotation, a leak of the test's own making.
  const secret = (name: string, data: Record<string, string>, labels?: Record<string, string>) =>
    client.apply(
      SECRET,
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ctx.namespace, ...(labels ? { labels } : {}) },
        stringData: data,
      } as KubeObject,
      { fieldManager: "test-user", force: true },
    );
  const tokenWith = async (policy: string, rules: string[]): Promise<string> => {
    await ctx.kubectl(
      ["exec", "-i", `${NAME}-0`, "--", "sh", "-c", `BAO_TOKEN=${rootToken} bao policy write ${policy} -`],
      rules.join("\n"),
    );
    return JSON.parse(await bao(`bao token create -policy=${policy} -format=json`)).auth.client_token;
  };

  it(`3 voters at ${FROM}, initialized by the operator: its root token and seal key are canaries`, {
    timeout: 30 * 60_000,
  }, async () => {
    await secret("s3-creds", { ...S3_TEST_CREDENTIALS });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: {
        version: FROM,
        replicas: 3,
        storage: { size: "128Mi" },
        configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
        backup: {
          schedule: "0 0 1 1 *",
          tokenSecretRef: { name: "backup-token" },
          target: {
            provider: "s3",
            endpoint: s3!.endpoint,
            bucket: BUCKET,
            pathPrefix: "leak",
            usePathStyle: true,
            credentialsSecretRef: { name: "s3-creds" },
          },
        },
      },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 900);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 900);
    rootToken = await secretValue(`${NAME}-root-token`, "token");
    canaries["root token"] = rootToken;
    // The static seal key as stored (base64): the form a copy of the Secret's data would carry.
    canaries["unseal key"] = (await ctx.getJson(`secret/${NAME}-unseal-key`)).data.key;
    canaries["s3 access key"] = S3_TEST_CREDENTIALS.accessKeyId;
    canaries["s3 secret key"] = S3_TEST_CREDENTIALS.secretAccessKey;
    assert.ok(rootToken.length >= 20 && canaries["unseal key"]!.length >= 40);
    await poll(
      async () =>
        (await bao("bao status -format=json").catch(() => "")).includes('"sealed": false') ? true : undefined,
      120_000,
      "pod 0 unsealed",
    );
    await bao("bao secrets enable -path=kv kv-v2");
    await poll(
      async () => ((await bao("bao kv put kv/app color=blue").catch(() => "")) ? true : undefined),
      120_000,
      "the KV v2 mount to accept writes",
    );
    const backupToken = await tokenWith("snapshot", [
      'path "sys/storage/raft/snapshot" { capabilities = ["read"] }',
    ]);
    const upgradeToken = await tokenWith("upgrade", [
      'path "sys/step-down" { capabilities = ["update", "sudo"] }',
      'path "sys/storage/raft/*" { capabilities = ["read", "list", "sudo"] }',
    ]);
    canaries["backup token"] = backupToken;
    canaries["upgrade token"] = upgradeToken;
    // A token OpenBao never issued: the backup that presents it fails.
    canaries["refused token"] = `s.canary-refused-${Date.now().toString(36)}`;
    await secret("backup-token", { token: backupToken });
    await secret("upgrade-token", { token: upgradeToken });
    // Also a restore's static token below: labelled as upstream asks of one.
    await secret(
      "refused-token",
      { token: canaries["refused token"]! },
      { "openbao.org/cluster": NAME, "openbao.org/credential-purpose": "restore-token" },
    );
  });

  let firstKey = "";

  it("a backup Job, then one whose token OpenBao refuses: recorded as a failure", {
    timeout: 20 * 60_000,
  }, async () => {
    await trigger("b1");
    // Settled either way: a failed b1 is not retried, so waiting on for a key would only hide why.
    const ok = await settled(
      (b) => b.lastHandledManualTrigger === "b1" && (!!b.lastBackupKey || (b.consecutiveFailures ?? 0) > 0),
      "the b1 backup",
    );
    assert.equal(ok.consecutiveFailures ?? 0, 0, JSON.stringify(ok));
    firstKey = ok.lastBackupKey;
    await lockReleased();

    await patch({ backup: { tokenSecretRef: { name: "refused-token" } } });
    await trigger("b2");
    const failed = await settled(
      (b) => b.lastHandledManualTrigger === "b2" && (b.consecutiveFailures ?? 0) > 0,
      "the b2 failure",
    );
    assert.ok(failed.lastFailureReason, JSON.stringify(failed));
    assert.equal(failed.lastBackupKey, firstKey);
    await lockReleased();
    await patch({ backup: { tokenSecretRef: { name: "backup-token" } } });
  });

  it(`a rolling upgrade to ${TO} with its pre-upgrade snapshot Job`, { timeout: 30 * 60_000 }, async () => {
    await patch({
      version: TO,
      // No spec.upgrade.tokenSecretRef (refused by the CRD, as upstream refuses it): step-down uses
      // the root-token Secret, the snapshot spec.backup's token.
      upgrade: { strategy: "RollingUpdate", preUpgradeSnapshot: true },
    });
    await poll(
      async () => {
        const c = await cluster();
        return c.status?.currentVersion === TO && !c.status?.upgrade ? true : undefined;
      },
      1_500_000,
      `every voter at ${TO}`,
      3000,
    );
    // Upstream's rolling pre-upgrade backup: a backup Job, told apart by its backup-type label.
    const jobs = JSON.parse(
      await ctx.kubectl(["get", "jobs", "-l", "openbao.org/backup-type=pre-upgrade", "-o", "json"]),
    ).items as Json[];
    assert.equal(jobs.length, 1, "one pre-upgrade snapshot Job");
    assert.match(jobs[0].metadata.name, new RegExp(`^pre-upgrade-backup-${NAME}-gen\\d+$`));
    assert.equal(jobs[0].metadata.labels["openbao.org/component"], "backup");
    await lockReleased();
  });

  const restore = (name: string, tokenSecret: string) =>
    ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name },
      spec: {
        cluster: NAME,
        tokenSecretRef: { name: tokenSecret },
        force: true,
        source: {
          key: firstKey,
          target: {
            provider: "s3",
            endpoint: s3!.endpoint,
            bucket: BUCKET,
            usePathStyle: true,
            credentialsSecretRef: { name: "s3-creds" },
          },
        },
      },
    });

  it("a restore Job whose token OpenBao refuses fails; one with the root token by reference completes", {
    timeout: 20 * 60_000,
  }, async () => {
    await restore("r0", "refused-token");
    await ctx.waitFor("openbaorestore/r0", "jsonpath={.status.phase}=Failed", 900);
    await lockReleased();
    await restore("r1", `${NAME}-root-token`);
    await ctx.waitFor("openbaorestore/r1", "jsonpath={.status.phase}=Completed", 900);
    await lockReleased();
  });

  it("finds no canary anywhere but in Secrets", { timeout: 10 * 60_000 }, async () => {
    const search = new LeakSearch();
    const podSpecs = await search.addNamespace(client, ctx.namespace, [OPENBAOCLUSTER, OPENBAORESTORE]);
    const pods = JSON.parse(await ctx.kubectl(["get", "pods", "-o", "json"])).items as Json[];
    const executorPods = pods.filter((p) => p.metadata.labels?.["batch.kubernetes.io/job-name"]);
    // Backups b1 and b2, the pre-upgrade snapshot, restores r0 and r1: each ran in a pod of its own.
    assert.ok(
      executorPods.length >= 5,
      `executor pods: ${executorPods.map((p) => p.metadata.name).join(", ")}`,
    );
    for (const p of pods) {
      const name = p.metadata.name as string;
      search.add(`pod ${name} log`, await ctx.kubectl(["logs", name, "--all-containers"]).catch(() => ""));
      for (const s of [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? [])])
        search.add(
          `pod ${name} termination message`,
          JSON.stringify(s.state?.terminated ?? s.lastState?.terminated ?? {}),
        );
    }
    assert.ok(search.text("log").length > 1000, "the pods logged");
    addProcess(search, op!.output(), await op!.metrics());
    assert.ok(search.text("operator log").includes('"level":"debug"'), "the log is at debug level");
    // The sample holds what it should: the Jobs' specs, the failure recorded in the status.
    assert.ok(search.text("Job/").includes("OPENBAO_EXECUTOR_OPERATION"), "the executor Jobs are searched");
    assert.match(search.text("OpenBaoCluster/"), /lastFailureReason/);
    assert.match(search.text("OpenBaoRestore/r0"), /RestoreFailed/);
    const envChecked = assertEnvFromSecretsOnly(podSpecs, Object.values(canaries));
    assert.ok(envChecked > 0);
    const report = search.assertNone(Object.values(canaries), "openbao on the node");
    assert.ok(report.bytes > 50_000, `searched ${report.bytes} bytes`);
  });
});
