import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ObjectStore, openObjectStore } from "../../src/targets/openbao/objectstore/index.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../../src/testenv/objectstores.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// spec.selfInit.oidc on the local node: OpenBao initializes itself with the operator's JWT bootstrap
// (auth/jwt-operator trusting the node API server's ServiceAccount keys, upstream's roles), its root
// token is revoked, and a backup that names no login of its own runs as the bootstrapped `backup`
// role. Nothing about JWT is configured by hand here.

const NAME = "oidcbao";
const BUCKET = "snapshots";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao selfInit.oidc on the local node", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> };
  let bucket: ObjectStore;

  const startOperator = () =>
    startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s", executorImage: OPERATOR_IMAGE });

  before(async () => {
    ctx = await nodeNamespace("oboidc");
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
    op = await startOperator();
  });
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await s3?.stop();
    await deleteNamespace(ctx);
  });

  const cluster = async (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const selfInitFile = async (): Promise<{ text: string; version: string }> => {
    const s = await ctx.getJson(`secret/${NAME}-self-init`);
    return {
      text: Buffer.from(s.data["self-init.hcl"], "base64").toString("utf8"),
      version: s.metadata.resourceVersion,
    };
  };

  it("comes up self-initialized with selfInit.oidc, not reported unsupported, and no root token kept", async () => {
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
          tls: { enabled: false },
          deletionPolicy: "DeletePVCs",
          selfInit: {
            enabled: true,
            oidc: { enabled: true },
            requests: [{ name: "kv", operation: "update", path: "sys/mounts/kv", data: { type: "kv" } }],
          },
          backup: {
            // Far away: the case below asks for a manual backup.
            schedule: "0 0 1 1 *",
            target: {
              provider: "s3",
              endpoint: s3.endpoint,
              bucket: BUCKET,
              pathPrefix: "oidc",
              usePathStyle: true,
              credentialsSecretRef: { name: "s3-creds" },
            },
          },
        },
      },
    );
    await ctx
      .waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 420)
      .catch(async (e) => {
        // Say where it stopped: the cluster's conditions and OpenBao's own last words.
        const c = await cluster().catch(() => ({}));
        const logs = await ctx.kubectl(["logs", `${NAME}-0`, "--tail=40"]).catch((x: Error) => x.message);
        throw new Error(
          `${(e as Error).message}\n${JSON.stringify((c as Json).status?.conditions)}\n${logs}`,
        );
      });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    const c = await cluster();
    assert.equal(c.status.selfInitialized, true);
    assert.ok(
      !(c.status.conditions ?? []).some(
        (x: Json) => x.type === "UnsupportedFields" && x.status === "True" && /selfInit/.test(x.message),
      ),
      "selfInit.oidc is not reported as unsupported",
    );
    const secrets = (await ctx.getJson("secrets")).items.map((s: Json) => s.metadata.name);
    assert.ok(!secrets.includes(`${NAME}-root-token`), "no root token kept");
  });

  it("a backup with no login of its own logs in at auth/jwt-operator as the bootstrapped role", async () => {
    await ctx.kubectl(["annotate", "--overwrite", `openbaocluster/${NAME}`, "openbao.org/trigger-backup=o1"]);
    const b = await poll(
      async () => {
        const x = (await cluster()).status?.backup ?? {};
        return !x.jobName && x.lastHandledManualTrigger === "o1" ? x : undefined;
      },
      420_000,
      "the o1 backup to be recorded",
      2000,
    );
    assert.ok(b.lastBackupKey, `a successful backup: ${JSON.stringify(b)}`);
    assert.equal(b.consecutiveFailures ?? 0, 0, JSON.stringify(b));
    const head = await bucket.head(b.lastBackupKey);
    assert.ok(head && head.size > 1000, `${b.lastBackupKey} is a Raft snapshot in the bucket`);
    const jobs = JSON.parse(
      await ctx.kubectl(["get", "jobs", "-l", "openbao.org/component=backup", "-o", "json"]),
    ).items as Json[];
    assert.equal(jobs.length, 1);
    const env = jobs[0]!.spec.template.spec.containers[0].env as { name: string; value: string }[];
    const get = (n: string) => env.find((e) => e.name === n)?.value;
    assert.equal(get("OPENBAO_EXECUTOR_AUTH_METHOD"), "jwt");
    assert.equal(get("OPENBAO_EXECUTOR_JWT_ROLE"), "backup");
  });

  it("after initialization the request file stays inert across passes and a restarted operator", async () => {
    const before1 = await selfInitFile();
    assert.ok(!before1.text.includes("initialize"), before1.text);
    await op!.stop();
    op = await startOperator();
    // The restarted operator has made passes over the cluster (a few resync periods of them).
    await poll(
      async () =>
        metricSum(await op!.metrics(), "controller_runtime_reconcile_total", {
          controller: "openbaocluster",
        }) >= 3
          ? true
          : undefined,
      180_000,
      "three passes of the restarted operator",
    );
    const after1 = await selfInitFile();
    assert.equal(after1.version, before1.version, "the self-init Secret was not written again");
  });
});
