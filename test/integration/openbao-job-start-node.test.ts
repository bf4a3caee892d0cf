import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../../src/testenv/objectstores.js";
import { clientFor } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// Issue 41 on the real node: a backup whose executor image cannot be pulled (a registry on a closed
// loopback port: the pull fails at once and nothing leaves the node) is reported by its pod's
// reason within a minute, fails and frees the operation lock within the start bound, and the next
// backup, with the operator's own image, runs and uploads.

const NAME = "jobstart";
const BUCKET = "snapshots";
const UNPULLABLE = "127.0.0.1:1/openbao/backup-executor:0.5.3";
/** The bound this test gives the operator (targets.openbao.jobStartTimeout). */
const BOUND_MS = 45_000;
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao on the node: a backup Job that cannot start frees the lock", {
  timeout: 40 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let client: KubeClient;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> } | undefined;

  before(
    async () => {
      ctx = await nodeNamespace("objstartn");
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
        jobStartTimeout: `${BOUND_MS / 1000}s`,
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
  const backingUp = async (): Promise<Json | undefined> =>
    (await cluster()).status?.conditions?.find((c: Json) => c.type === "BackingUp");
  const secret = (name: string, data: Record<string, string>) =>
    client.apply(
      SECRET,
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ctx.namespace },
        stringData: data,
      } as KubeObject,
      { fieldManager: "test-user", force: true },
    );
  const trigger = (value: string) =>
    ctx.kubectl(["annotate", "--overwrite", `openbaocluster/${NAME}`, `openbao.org/trigger-backup=${value}`]);

  it("a cluster with a backup whose executor image cannot be pulled", { timeout: 20 * 60_000 }, async () => {
    await secret("s3-creds", { ...S3_TEST_CREDENTIALS });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: {
        version: BAO_DEFAULT_VERSION,
        replicas: 1,
        storage: { size: "128Mi" },
        backup: {
          schedule: "0 0 1 1 *",
          image: UNPULLABLE,
          tokenSecretRef: { name: "backup-token" },
          target: {
            provider: "s3",
            endpoint: s3!.endpoint,
            bucket: BUCKET,
            pathPrefix: "jobstart",
            usePathStyle: true,
            credentialsSecretRef: { name: "s3-creds" },
          },
        },
      },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 900);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 900);
    const root = Buffer.from(
      (await ctx.getJson(`secret/${NAME}-root-token`)).data.token,
      "base64",
    ).toString();
    const bao = (cmd: string, stdin?: string) =>
      ctx.kubectl(["exec", "-i", `${NAME}-0`, "--", "sh", "-c", `BAO_TOKEN=${root} ${cmd}`], stdin);
    await poll(
      async () =>
        (await bao("bao status -format=json").catch(() => "")).includes('"sealed": false') ? true : undefined,
      120_000,
      "pod 0 unsealed",
    );
    await bao("bao policy write snapshot -", 'path "sys/storage/raft/snapshot" { capabilities = ["read"] }');
    const token = JSON.parse(await bao("bao token create -policy=snapshot -format=json")).auth.client_token;
    await secret("backup-token", { token });
  });

  it("reports the pull failure within a minute, fails within the bound and frees the lock", {
    timeout: 10 * 60_000,
  }, async () => {
    const t0 = Date.now();
    await trigger("pull-1");
    const stuck = await poll(
      async () => {
        const c = await backingUp();
        return c?.reason === "JobNotStarted" ? c : undefined;
      },
      60_000,
      "BackingUp JobNotStarted",
      1000,
    );
    const reportedMs = Date.now() - t0;
    assert.match(stuck.message, /\((ErrImagePull|ImagePullBackOff): pod backup-jobstart-manual-/);
    assert.ok((await cluster()).status?.operationLock?.holder?.startsWith(`backup/${NAME}/`));
    const jobName: string = (await cluster()).status.backup.jobName;

    const failed = await poll(
      async () => {
        const b = (await cluster()).status?.backup ?? {};
        return !b.jobName && b.lastFailureReason ? b : undefined;
      },
      BOUND_MS + 90_000,
      "the backup failed",
      1000,
    );
    const failedMs = Date.now() - t0;
    assert.equal(failed.lastFailureReason, "JobStartTimeout", JSON.stringify(failed));
    assert.match(failed.lastFailureMessage, /(ErrImagePull|ImagePullBackOff)/);
    assert.equal((await cluster()).status?.operationLock?.holder ?? "", "");
    assert.equal((await backingUp())?.reason, "BackupFailed");
    // The Job controller ends it like a run that failed: Failed, its pod gone.
    await poll(
      async () => {
        const job = await ctx.getJson(`job/${jobName}`);
        return job.status?.conditions?.some((c: Json) => c.type === "Failed" && c.status === "True")
          ? true
          : undefined;
      },
      120_000,
      "the Job failed by the Job controller",
      1000,
    );
    await poll(
      async () => {
        const pods = JSON.parse(
          await ctx.kubectl(["get", "pods", "-l", `batch.kubernetes.io/job-name=${jobName}`, "-o", "json"]),
        ).items as Json[];
        return pods.every(
          (p) => p.metadata.deletionTimestamp || ["Failed", "Succeeded"].includes(p.status?.phase),
        )
          ? true
          : undefined;
      },
      120_000,
      "the Job's pod stopped",
      1000,
    );
    console.log(
      `# pull failure reported after ${reportedMs} ms; backup failed, lock freed after ${failedMs} ms (bound ${BOUND_MS} ms)`,
    );
    assert.ok(reportedMs < 60_000);
    assert.ok(failedMs < BOUND_MS + 60_000);
  });

  it("the next backup, with the operator's own image, runs and uploads", {
    timeout: 10 * 60_000,
  }, async () => {
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=json",
      "-p",
      '[{"op":"remove","path":"/spec/backup/image"}]',
    ]);
    await trigger("pull-2");
    const ok = await poll(
      async () => {
        const b = (await cluster()).status?.backup ?? {};
        return b.lastHandledManualTrigger === "pull-2" && !b.jobName && b.lastBackupKey ? b : undefined;
      },
      300_000,
      "the pull-2 backup",
      2000,
    );
    assert.equal(ok.consecutiveFailures ?? 0, 0, JSON.stringify(ok));
    await poll(
      async () => (((await cluster()).status?.operationLock?.holder ?? "") === "" ? true : undefined),
      60_000,
      "the operation lock released",
      1000,
    );
  });
});
