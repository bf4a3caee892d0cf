import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
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

// Issue 41 on the local node for a self-initialized cluster, which keeps no root token: its read
// replicas stay non-voters after a restore because the operator logs in as the operator role
// selfInit.oidc bootstrapped (whose policy grants sys/storage/raft/demote when the cluster has read
// replicas) and puts them back on Autopilot's permanent non-voter list.
//
// The snapshot is taken with one read replica; the second joins after it. Restoring it brings back
// Autopilot's non-voter list without the second replica, which Autopilot then types (and promotes
// to) a voter; the operator's demotion makes it a non-voter again. The operator runs outside a pod,
// so it is told its ServiceAccount (operatorServiceAccount); the test reads Raft and Autopilot
// through the same role, with a token of that ServiceAccount.

const NAME = "rrsi";
const OPERATOR_SA = "op";
const BUCKET = "snapshots";
const SECOND = `${NAME}-read-1`;
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao selfInit.oidc: a read replica restored without its non-voter entry is demoted by the operator role", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> };
  let backupKey = "";

  before(async () => {
    ctx = await nodeNamespace("obrrsi");
    await installOpenBaoCrd(ctx);
    await reloadOperatorImage(ctx.node.ctr, ctx.node.containerdSocket);
    s3 = await startS3Server({
      buckets: [BUCKET],
      host: ctx.node.addresses.nodeIp,
      wrap: ctx.node.inCluster,
    });
    await ctx.apply(
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: OPERATOR_SA } },
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s3-creds" },
        stringData: { ...S3_TEST_CREDENTIALS },
      },
    );
    op = await startOpenBaoOperator(ctx, {
      pollInterval: "2s",
      resyncInterval: "5s",
      executorImage: OPERATOR_IMAGE,
      operatorServiceAccount: `${ctx.namespace}/${OPERATOR_SA}`,
    });
  });
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await s3?.stop();
    await deleteNamespace(ctx);
  });

  const cluster = async (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  /** Raft's and Autopilot's view of `id`, read in pod 0 as the operator role. */
  const suffrage = async (id: string) => {
    const jwt = (
      await ctx.kubectl(["create", "token", OPERATOR_SA, "--audience=openbao-internal", "--duration=10m"])
    ).trim();
    const out = await ctx.kubectl(
      [
        "exec",
        "-i",
        `${NAME}-0`,
        "--",
        "sh",
        "-c",
        'T=$(bao write -field=token auth/jwt-operator/login role=openbao-operator jwt=-) && export BAO_TOKEN="$T" && bao read -format=json sys/storage/raft/configuration && echo ---- && bao read -format=json sys/storage/raft/autopilot/state',
      ],
      jwt,
    );
    const [raft, autopilot] = out.split("----").map((p) => JSON.parse(p) as Json);
    const server = (raft!.data.config.servers as { node_id: string; voter: boolean }[]).find(
      (s) => s.node_id === id,
    );
    return {
      member: server !== undefined,
      voter: server?.voter,
      nodeType: autopilot!.data.servers?.[id]?.node_type as string | undefined,
    };
  };
  const waitSuffrage = (id: string, what: string, ok: (s: Awaited<ReturnType<typeof suffrage>>) => boolean) =>
    poll(
      async () => {
        const s = await suffrage(id).catch(() => undefined);
        return s && ok(s) ? s : undefined;
      },
      300_000,
      what,
      3000,
    );
  const eventNotes = async (reason: string): Promise<string[]> =>
    (
      JSON.parse(
        await ctx.kubectl([
          "get",
          "events",
          "--field-selector",
          `reason=${reason},involvedObject.name=${NAME}`,
          "-o",
          "json",
        ]),
      ).items as Json[]
    ).map((e) => String(e["message"] ?? e["note"] ?? ""));

  it("comes up self-initialized with selfInit.oidc and one read replica, a non-voter", async () => {
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: {
        version: BAO_DEFAULT_VERSION,
        replicas: 1,
        readReplicas: { replicas: 1 },
        storage: { size: "128Mi" },
        tls: { enabled: false },
        deletionPolicy: "DeletePVCs",
        selfInit: { enabled: true, oidc: { enabled: true }, requests: [] },
        backup: {
          schedule: "0 0 1 1 *",
          target: {
            provider: "s3",
            endpoint: s3.endpoint,
            bucket: BUCKET,
            pathPrefix: "rrsi",
            usePathStyle: true,
            credentialsSecretRef: { name: "s3-creds" },
          },
        },
      },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 420);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    const secrets = (await ctx.getJson("secrets")).items.map((s: Json) => s.metadata.name);
    assert.ok(!secrets.includes(`${NAME}-root-token`), "no root token kept");
    await waitSuffrage(`${NAME}-read-0`, `${NAME}-read-0 a non-voter member`, (s) => s.voter === false);
  });

  it("a backup is taken while only the first read replica exists", async () => {
    await ctx.kubectl(["annotate", "--overwrite", `openbaocluster/${NAME}`, "openbao.org/trigger-backup=b1"]);
    const b = await poll(
      async () => {
        const x = (await cluster()).status?.backup ?? {};
        return !x.jobName && x.lastHandledManualTrigger === "b1" ? x : undefined;
      },
      420_000,
      "the b1 backup to be recorded",
      2000,
    );
    assert.ok(b.lastBackupKey, `a successful backup: ${JSON.stringify(b)}`);
    backupKey = b.lastBackupKey;
  });

  it("a second read replica joins after the snapshot, as a non-voter", async () => {
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      '{"spec":{"readReplicas":{"replicas":2}}}',
    ]);
    const s = await waitSuffrage(
      SECOND,
      `${SECOND} a non-voter member on Autopilot's list`,
      (x) => x.voter === false && x.nodeType === "non-voter",
    );
    assert.equal(s.member, true);
  });

  it("restored from that snapshot, the second read replica ends a non-voter in Raft and Autopilot, put back by the operator role", async () => {
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name: "r1" },
      spec: {
        cluster: NAME,
        source: {
          key: backupKey,
          target: {
            provider: "s3",
            endpoint: s3.endpoint,
            bucket: BUCKET,
            usePathStyle: true,
            credentialsSecretRef: { name: "s3-creds" },
          },
        },
      },
    });
    const r = await poll(
      async () => {
        const x = await ctx.getJson("openbaorestore/r1");
        return ["Completed", "Failed", "Unknown"].includes(x.status?.phase) ? x : undefined;
      },
      10 * 60_000,
      "r1 to end",
      2000,
    );
    assert.equal(r.status.phase, "Completed", JSON.stringify(r.status));
    // The operator's demotion: its event names the second replica (the restored list lacks it).
    await poll(
      async () =>
        (await eventNotes("AutopilotConfigured")).some((n) => n.includes(SECOND)) ? true : undefined,
      300_000,
      `the operator's AutopilotConfigured event for ${SECOND}`,
      3000,
    ).catch(async (e) => {
      const c = await cluster().catch(() => ({}));
      const s = await suffrage(SECOND).catch((x: Error) => x.message);
      const log = (op?.output() ?? "").split("\n").filter((l) => /suffrage|demote|operator role/.test(l));
      throw new Error(
        `${(e as Error).message}\n${JSON.stringify((c as Json).status?.conditions)}\n${JSON.stringify(s)}\n${log.slice(-20).join("\n")}`,
      );
    });
    const s = await waitSuffrage(
      SECOND,
      `${SECOND} a non-voter on Autopilot's list again`,
      (x) => x.voter === false && x.nodeType === "non-voter",
    );
    assert.equal(s.member, true);
    assert.deepEqual(await eventNotes("DemoteRefused"), []);
    const rr = ((await cluster()).status?.conditions ?? []).find((c: Json) => c.type === "ReadReplicasReady");
    assert.notEqual(rr?.reason, "DemoteRefused", JSON.stringify(rr));
  });
});
