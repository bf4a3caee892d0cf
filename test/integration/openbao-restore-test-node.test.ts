import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { type ObjectStore, openObjectStore } from "../../src/targets/openbao/objectstore/index.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../../src/testenv/objectstores.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// Restore tests (spec.backup.restoreTest) on the local node, with the backup test's setup: a real
// OpenBao cluster, the operator process, executor Jobs on the operator's image and an S3 server in
// the node's network. A backup is taken; the operator restores it into a throwaway one-pod cluster
// with the source's seal, reads the canary back, records BackupVerified=True with the key, and
// deletes the throwaway and its volumes. Then a snapshot corrupted in the bucket fails the next test
// with the restore's reason, and again nothing is left. Only a real restore into real pods can show
// either: whether the data opens with the copied seal, and whether OpenBao refuses the broken bytes.

const NAME = "src";
const DRILL = `${NAME}-restore-test`;
const BUCKET = "snapshots";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao restore tests on the local node", { timeout: 60 * 60_000 }, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> };
  let bucket: ObjectStore;
  let rootToken = "";
  let sourcePodUid = "";
  let firstKey = "";

  before(
    async () => {
      ctx = await nodeNamespace("obrt");
      await installOpenBaoCrd(ctx);
      await reloadOperatorImage(ctx.node.ctr, ctx.node.containerdSocket);
      s3 = await startS3Server({
        buckets: [BUCKET],
        host: ctx.node.addresses.nodeIp,
        wrap: ctx.node.inCluster,
      });
      bucket = await openObjectStore({
        provider: "s3",
        bucket: BUCKET,
        endpoint: s3.endpoint,
        region: "us-east-1",
        usePathStyle: true,
        partSize: 5 * 1024 * 1024,
        concurrency: 2,
        credentials: { s3: { ...S3_TEST_CREDENTIALS } },
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

  const cluster = (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const verified = async (): Promise<Json | undefined> =>
    (await cluster()).status?.conditions?.find((c: Json) => c.type === "BackupVerified");
  const bao = (cmd: string) =>
    ctx.kubectl(["exec", `${NAME}-0`, "--", "sh", "-c", `BAO_TOKEN=${rootToken} ${cmd}`]);
  const names = async (kind: string, selector: string): Promise<string[]> =>
    JSON.parse(await ctx.kubectl(["get", kind, "-l", selector, "-o", "json"])).items.map(
      (o: Json) => o.metadata.name as string,
    );
  /** Nothing of the throwaway left: cluster, restore, volumes, its Secrets. */
  const nothingLeft = () =>
    poll(
      async () => {
        const left = [
          ...(await names("openbaoclusters", `openbao.org/restore-test-of=${NAME}`)),
          ...(await names("openbaorestores", `openbao.org/restore-test-of=${NAME}`)),
          ...(await names("pvc", `openbao.org/cluster=${DRILL}`)),
          ...(await names("pods", `openbao.org/cluster=${DRILL}`)),
          ...(await names("secrets", `openbao.org/cluster=${DRILL}`)),
        ];
        return left.length === 0 ? true : undefined;
      },
      300_000,
      "nothing of the throwaway cluster left",
      3000,
    );
  const backupOnce = async (trigger: string): Promise<string> => {
    await ctx.kubectl([
      "annotate",
      "--overwrite",
      `openbaocluster/${NAME}`,
      `openbao.org/trigger-backup=${trigger}`,
    ]);
    const b = await poll(
      async () => {
        const s = (await cluster()).status?.backup ?? {};
        return s.lastHandledManualTrigger === trigger && !s.jobName ? s : undefined;
      },
      300_000,
      `backup ${trigger}`,
      2000,
    );
    assert.equal(b.consecutiveFailures ?? 0, 0, JSON.stringify(b));
    return b.lastBackupKey as string;
  };

  it("a backup of a cluster holding a canary is restored into a throwaway, verified, and the throwaway removed", async () => {
    await ctx.apply(
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s3-creds" },
        stringData: { ...S3_TEST_CREDENTIALS },
      },
      {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: NAME },
        spec: {
          version: BAO_DEFAULT_VERSION,
          replicas: 1,
          storage: { size: "128Mi" },
          backup: {
            schedule: "0 0 1 1 *",
            tokenSecretRef: { name: `${NAME}-root-token` },
            target: {
              provider: "s3",
              endpoint: s3.endpoint,
              bucket: BUCKET,
              pathPrefix: "e2e",
              usePathStyle: true,
              credentialsSecretRef: { name: "s3-creds" },
            },
            // Off until the canary is written: each new backup is tested once when on.
            restoreTest: { enabled: false, canary: { path: "kv/data/canary" }, timeout: "25m" },
          },
        },
      },
    );
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 900);
    rootToken = Buffer.from((await ctx.getJson(`secret/${NAME}-root-token`)).data.token, "base64").toString(
      "utf8",
    );
    await poll(
      async () => ((await bao("bao status -format=json")).includes('"sealed": false') ? true : undefined),
      120_000,
      "pod 0 unsealed",
    );
    await bao("bao secrets enable -path=kv kv-v2");
    await bao("bao kv put kv/canary written=before-backup");
    sourcePodUid = (await ctx.getJson(`pod/${NAME}-0`)).metadata.uid;
    firstKey = await backupOnce("b1");

    const started = Date.now();
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { backup: { restoreTest: { enabled: true } } } }),
    ]);
    // The throwaway is made with the source's seal key and a single voter.
    const made = await poll(
      async () => (await ctx.getJson(`openbaocluster/${DRILL}`).catch(() => undefined)) as Json | undefined,
      120_000,
      "the throwaway cluster",
      2000,
    );
    assert.equal(made.spec.replicas, 1);
    assert.equal(made.metadata.annotations["openbao.org/restore-test-key"], firstKey);
    const key = (s: string) =>
      (ctx.getJson(`secret/${s}`) as Promise<Json>).then((x) => x.data.key as string);
    assert.equal(await key(`${DRILL}-unseal-key`), await key(`${NAME}-unseal-key`));

    const c = await poll(
      async () => {
        const v = await verified();
        return v && v.status !== "Unknown" ? v : undefined;
      },
      30 * 60_000,
      "BackupVerified to be decided",
      3000,
    ).catch(async (e: unknown) => {
      const dump = await ctx
        .kubectl(["get", "openbaoclusters,openbaorestores,pods,pvc,jobs", "-o", "wide"])
        .catch(() => "");
      throw new Error(`${String(e)}\n${dump}\n${op?.output().slice(-6000)}`);
    });
    const seconds = (Date.now() - started) / 1000;
    console.log(`restore test passed in ${seconds.toFixed(0)} s (throwaway formed, restored, probed)`);
    assert.equal(c.status, "True", JSON.stringify(c));
    assert.equal(c.reason, "BackupVerified");
    assert.match(c.message, /canary read back/);
    const b = (await cluster()).status.backup;
    assert.equal(b.lastVerifiedBackupKey, firstKey);
    assert.ok(b.lastVerifiedTime, JSON.stringify(b));
    assert.equal(b.lastVerificationFailureReason, undefined);
    await nothingLeft();
    // The source was never touched: the same pod, no lock taken on it.
    assert.equal((await ctx.getJson(`pod/${NAME}-0`)).metadata.uid, sourcePodUid);
    assert.equal((await cluster()).status?.operationLock?.holder ?? "", "");
    const metrics = await op!.metrics();
    assert.match(
      metrics,
      new RegExp(
        `openbao_backup_last_verified_timestamp_seconds\\{namespace="${ctx.namespace}",name="${NAME}"\\} \\d`,
      ),
    );
    assert.match(
      metrics,
      new RegExp(`openbao_backup_verification_failed\\{namespace="${ctx.namespace}",name="${NAME}"\\} 0`),
    );
  });

  it("a snapshot corrupted in the bucket fails the next test with the restore's reason, and nothing is left", async () => {
    // Off while the next backup is taken and broken, so the test cannot read it before it is.
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { backup: { restoreTest: { enabled: false } } } }),
    ]);
    await bao("bao kv put kv/canary written=second");
    const second = await backupOnce("b2");
    assert.notEqual(second, firstKey);
    const { body } = await bucket.download(second);
    const chunks: Buffer[] = [];
    for await (const ch of body) chunks.push(Buffer.from(ch as Buffer));
    const bytes = Buffer.concat(chunks);
    // Flip a run of bytes in the middle: the archive's checksums no longer hold.
    const mid = Math.floor(bytes.length / 2);
    for (let i = mid; i < Math.min(bytes.length, mid + 256); i++) bytes[i] = (bytes[i] ?? 0) ^ 0xff;
    await bucket.upload(second, Readable.from([bytes]));

    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { backup: { restoreTest: { enabled: true } } } }),
    ]);
    const c = await poll(
      async () => {
        const v = await verified();
        return v?.status === "False" ? v : undefined;
      },
      30 * 60_000,
      "BackupVerified=False",
      3000,
    ).catch(async (e: unknown) => {
      const dump = await ctx
        .kubectl(["get", "openbaoclusters,openbaorestores,pods,pvc,jobs", "-o", "wide"])
        .catch(() => "");
      throw new Error(`${String(e)}\n${dump}\n${op?.output().slice(-6000)}`);
    });
    console.log(`corrupted snapshot: ${c.reason}: ${c.message}`);
    assert.equal(c.reason, "RestoreTestRestoreFailed", JSON.stringify(c));
    assert.ok(c.message.includes(second), c.message);
    // OpenBao itself refused the bytes: its integrity check, not a transport error.
    assert.match(c.message, /hash check failed|integrity/, c.message);
    const b = (await cluster()).status.backup;
    assert.equal(b.lastVerificationBackupKey, second);
    assert.equal(b.lastVerificationFailureReason, "RestoreTestRestoreFailed");
    assert.equal(b.lastVerifiedBackupKey, firstKey, "the last pass stands");
    await nothingLeft();
    assert.equal((await ctx.getJson(`pod/${NAME}-0`)).metadata.uid, sourcePodUid);
    assert.match(
      await op!.metrics(),
      new RegExp(`openbao_backup_verification_failed\\{namespace="${ctx.namespace}",name="${NAME}"\\} 1`),
    );
  });
});
