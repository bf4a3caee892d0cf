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

// A restore test (spec.backup.restoreTest) of a backup this cluster's seal cannot open, on the local
// node: two OpenBao clusters in one namespace, each with its own static seal key, back up to one
// bucket; the other cluster's snapshot then lies under the key the source last recorded (a copy
// over it, as a shared path or a misdirected key would leave it). The throwaway holds the source's
// seal, OpenBao refuses the snapshot (its sealed hash file does not open), and the test fails with
// RestoreTestSealMismatch; nothing of the throwaway is left and neither cluster is touched. Only
// real pods show it: whether OpenBao itself refuses another seal's snapshot before applying it.

const NAME = "src";
const OTHER = "other";
const DRILL = `${NAME}-restore-test`;
const BUCKET = "snapshots";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao restore test of another seal's snapshot on the local node", {
  timeout: 60 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> };
  let bucket: ObjectStore;

  before(
    async () => {
      ctx = await nodeNamespace("obrs");
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

  const cluster = (name: string): Promise<Json> => ctx.getJson(`openbaocluster/${name}`);
  const token = async (name: string) =>
    Buffer.from((await ctx.getJson(`secret/${name}-root-token`)).data.token, "base64").toString("utf8");
  const bao = async (name: string, cmd: string) =>
    ctx.kubectl(["exec", `${name}-0`, "--", "sh", "-c", `BAO_TOKEN=${await token(name)} ${cmd}`]);
  const names = async (kind: string, selector: string): Promise<string[]> =>
    JSON.parse(await ctx.kubectl(["get", kind, "-l", selector, "-o", "json"])).items.map(
      (o: Json) => o.metadata.name as string,
    );
  const spec = (name: string, restoreTest?: Json): Json => ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name },
    spec: {
      version: BAO_DEFAULT_VERSION,
      replicas: 1,
      storage: { size: "128Mi" },
      backup: {
        schedule: "0 0 1 1 *",
        tokenSecretRef: { name: `${name}-root-token` },
        target: {
          provider: "s3",
          endpoint: s3.endpoint,
          bucket: BUCKET,
          pathPrefix: "e2e",
          usePathStyle: true,
          credentialsSecretRef: { name: "s3-creds" },
        },
        ...(restoreTest ? { restoreTest } : {}),
      },
    },
  });
  const backupOnce = async (name: string, trigger: string): Promise<string> => {
    await ctx.kubectl([
      "annotate",
      "--overwrite",
      `openbaocluster/${name}`,
      `openbao.org/trigger-backup=${trigger}`,
    ]);
    const b = await poll(
      async () => {
        const s = (await cluster(name)).status?.backup ?? {};
        return s.lastHandledManualTrigger === trigger && !s.jobName ? s : undefined;
      },
      300_000,
      `backup ${trigger} of ${name}`,
      2000,
    );
    assert.equal(b.consecutiveFailures ?? 0, 0, JSON.stringify(b));
    return b.lastBackupKey as string;
  };
  const read = async (key: string): Promise<Buffer> => {
    const { body } = await bucket.download(key);
    const chunks: Buffer[] = [];
    for await (const ch of body) chunks.push(Buffer.from(ch as Buffer));
    return Buffer.concat(chunks);
  };

  it("another cluster's snapshot under the source's key fails as RestoreTestSealMismatch; nothing left, neither cluster touched", async () => {
    await ctx.apply(
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s3-creds" },
        stringData: { ...S3_TEST_CREDENTIALS },
      },
      // Off until the foreign snapshot is in place: each new backup is tested once when on.
      spec(NAME, { enabled: false, canary: { path: "kv/data/canary" }, timeout: "25m" }),
      spec(OTHER),
    );
    for (const n of [NAME, OTHER]) {
      await ctx.waitFor(`openbaocluster/${n}`, "jsonpath={.status.initialized}=true", 600);
      await ctx.waitFor(`openbaocluster/${n}`, "jsonpath={.status.readyReplicas}=1", 900);
      await poll(
        async () =>
          (await bao(n, "bao status -format=json")).includes('"sealed": false') ? true : undefined,
        120_000,
        `${n}-0 unsealed`,
      );
      await bao(n, "bao secrets enable -path=kv kv-v2");
      await bao(n, `bao kv put kv/canary written=${n}`);
    }
    // Two seals: the operator made each cluster its own static key.
    const sealKey = async (n: string) => (await ctx.getJson(`secret/${n}-unseal-key`)).data.key as string;
    assert.notEqual(await sealKey(NAME), await sealKey(OTHER));
    const sourcePodUid = (await ctx.getJson(`pod/${NAME}-0`)).metadata.uid;
    const otherPodUid = (await ctx.getJson(`pod/${OTHER}-0`)).metadata.uid;

    const key = await backupOnce(NAME, "s1");
    const foreign = await read(await backupOnce(OTHER, "o1"));
    assert.notDeepEqual(await read(key), foreign);
    await bucket.upload(key, Readable.from([foreign]));

    const started = Date.now();
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { backup: { restoreTest: { enabled: true } } } }),
    ]);
    const c = await poll(
      async () =>
        ((await cluster(NAME)).status?.conditions ?? []).find(
          (x: Json) => x.type === "BackupVerified" && x.status === "False",
        ) as Json | undefined,
      30 * 60_000,
      "BackupVerified=False",
      3000,
    ).catch(async (e: unknown) => {
      const dump = await ctx
        .kubectl(["get", "openbaoclusters,openbaorestores,pods,pvc,jobs", "-o", "wide"])
        .catch(() => "");
      throw new Error(`${String(e)}\n${dump}\n${op?.output().slice(-6000)}`);
    });
    console.log(
      `another seal's snapshot: ${c.reason} after ${((Date.now() - started) / 1000).toFixed(0)} s: ${c.message}`,
    );
    assert.equal(c.reason, "RestoreTestSealMismatch", JSON.stringify(c));
    assert.ok(c.message.includes(key), c.message);
    // OpenBao's own refusal, and what it means for the source rather than how to force the throwaway.
    assert.match(c.message, /SealMismatch: .*could not verify hash file/, c.message);
    assert.match(c.message, /another cluster's backup, or src's seal key changed/, c.message);
    assert.doesNotMatch(c.message, /spec\.force/, c.message);
    const b = (await cluster(NAME)).status.backup;
    assert.equal(b.lastVerificationBackupKey, key);
    assert.equal(b.lastVerificationFailureReason, "RestoreTestSealMismatch");
    assert.equal(b.lastVerifiedBackupKey, undefined, "no test ever passed");
    assert.match(
      await op!.metrics(),
      new RegExp(`openbao_backup_verification_failed\\{namespace="${ctx.namespace}",name="${NAME}"\\} 1`),
    );

    // Nothing of the throwaway left: cluster, restore, volumes, pods, Secrets.
    await poll(
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
    // Neither cluster was touched: the same pods, no lock, each still serving its own data.
    for (const [n, uid] of [
      [NAME, sourcePodUid],
      [OTHER, otherPodUid],
    ] as const) {
      assert.equal((await ctx.getJson(`pod/${n}-0`)).metadata.uid, uid, `${n}-0 not restarted`);
      assert.equal((await cluster(n)).status?.operationLock?.holder ?? "", "", `no lock on ${n}`);
      assert.match(await bao(n, "bao kv get -field=written kv/canary"), new RegExp(`^${n}\\s*$`));
    }
  });
});
