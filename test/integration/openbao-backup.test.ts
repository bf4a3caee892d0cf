import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type ObjectStore, openObjectStore } from "../../src/targets/openbao/objectstore/index.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../../src/testenv/objectstores.js";
import { removeTempDir } from "../../src/testenv/tempdirs.js";
import { type Blackhole, startBlackhole } from "../support/blackhole.js";
import { startCuttingProxy } from "../support/cutting-proxy.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { enableNodeJwtAuth } from "../support/node-jwt-auth.js";
import {
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";
import { block, runShell, toolDir } from "../support/runbook.js";

// Backups end to end on the local node: a 3-voter OpenBao cluster, the real operator process, the
// executor Job running the operator's own image, and a real S3 server inside the node's network.
// One cluster is shared by the cases, which run in order and build on each other. Every wait is on
// status, a Job or the object store; none on time passing.

const NAME = "bao";
const RESTORE_CRD = fileURLToPath(
  new URL("../../../deploy/crds/openbao.org_openbaorestores.yaml", import.meta.url),
);
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao backups on the local node", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> };
  let bucket: ObjectStore;
  const BUCKET = "snapshots";
  let hole: Blackhole | undefined;
  let rootToken = "";
  const firstBackup: { key?: string; size?: number } = {};

  const startOperator = () =>
    startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s", executorImage: OPERATOR_IMAGE });

  before(async () => {
    ctx = await nodeNamespace("obbk");
    await installOpenBaoCrd(ctx);
    await reloadOperatorImage(ctx.node.ctr, ctx.node.containerdSocket);
    // The S3 server runs inside the node's network, where the executor pods reach it.
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
    await hole?.stop();
    await s3?.stop();
    await deleteNamespace(ctx);
  });

  const cluster = async (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const backup = async (): Promise<Json> => (await cluster()).status?.backup ?? {};
  const condition = async (type: string): Promise<Json | undefined> =>
    (await cluster()).status?.conditions?.find((c: Json) => c.type === type);
  const backupJobs = async (): Promise<string[]> =>
    JSON.parse(
      await ctx.kubectl(["get", "jobs", "-l", "openbao.org/component=backup", "-o", "json"]),
    ).items.map((j: Json) => j.metadata.name);
  const bao = (cmd: string) =>
    ctx.kubectl(["exec", `${NAME}-0`, "--", "sh", "-c", `BAO_TOKEN=${rootToken} ${cmd}`]);
  const trigger = (value: string) =>
    ctx.kubectl(["annotate", "--overwrite", `openbaocluster/${NAME}`, `openbao.org/trigger-backup=${value}`]);
  /** The attempt for `trigger` has been recorded (success or failure) and nothing is in flight. */
  const settled = (what: (b: Json) => boolean, label: string) =>
    poll(
      async () => {
        const b = await backup();
        return !b.jobName && what(b) ? b : undefined;
      },
      300_000,
      label,
      2000,
    );
  const patchTarget = (target: Record<string, unknown>) =>
    ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { backup: { target } } }),
    ]);
  const lockHolder = async () => (await cluster()).status?.operationLock?.holder ?? "";
  /**
   * The lock is released after the result is recorded and retention has run (bounded by the
   * controller's retention deadline when the store hangs), so it is waited for, not read once.
   */
  const lockReleased = () =>
    poll(async () => ((await lockHolder()) === "" ? true : undefined), 120_000, "the lock released", 2000);
  /** The Job's pod is running (Ready): the executor is in flight. */
  const jobPodReady = (jobName: string) =>
    poll(
      async () => {
        const pods = JSON.parse(
          await ctx.kubectl(["get", "pods", "-l", `batch.kubernetes.io/job-name=${jobName}`, "-o", "json"]),
        ).items as Json[];
        const ready = pods.find((p) =>
          p.status?.conditions?.some((c: Json) => c.type === "Ready" && c.status === "True"),
        );
        return ready?.metadata.name as string | undefined;
      },
      180_000,
      `the pod of ${jobName} to be Ready`,
    );

  it("3 voters up, known KV data, and a backup that waits for its token Secret", async () => {
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
          replicas: 3,
          storage: { size: "128Mi" },
          configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
          backup: {
            // Far away: the scheduled case below moves it to the next minute.
            schedule: "0 0 1 1 *",
            tokenSecretRef: { name: "backup-token" },
            retention: { maxCount: 10 },
            target: {
              provider: "s3",
              endpoint: s3.endpoint,
              bucket: BUCKET,
              pathPrefix: "e2e",
              usePathStyle: true,
              credentialsSecretRef: { name: "s3-creds" },
            },
          },
        },
      },
    );
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 900);
    const s = await ctx.getJson(`secret/${NAME}-root-token`);
    rootToken = Buffer.from(s.data.token, "base64").toString("utf8");
    await poll(
      async () => ((await bao("bao status -format=json")).includes('"sealed": false') ? true : undefined),
      120_000,
      "pod 0 unsealed",
    );
    await bao("bao secrets enable -path=kv kv-v2");
    await bao("bao kv put kv/app color=blue size=3");
    await bao("bao kv put kv/other keep=me");

    // Asked for before its token exists: a clear reason, no Job.
    await trigger("m0");
    await poll(
      async () => ((await condition("BackingUp"))?.reason === "NoBackupToken" ? true : undefined),
      120_000,
      "BackingUp=False/NoBackupToken",
    );
    assert.deepEqual(await backupJobs(), []);
    // A token that may read snapshots and nothing else.
    await bao(
      `sh -c 'echo "path \\"sys/storage/raft/snapshot\\" { capabilities = [\\"read\\"] }" | bao policy write snapshot -'`,
    );
    const token = JSON.parse(await bao("bao token create -policy=snapshot -format=json")).auth.client_token;
    await ctx.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "backup-token" },
      stringData: { token },
    });
  });

  it("manual trigger: one Job, the snapshot in S3, status and metrics recorded once", async () => {
    const b = await settled(
      (x) => x.lastHandledManualTrigger === "m0" && !!x.lastBackupTime,
      "the m0 backup",
    );
    assert.equal(b.consecutiveFailures ?? 0, 0, JSON.stringify(b));
    assert.match(
      b.lastBackupKey,
      new RegExp(`^e2e/${ctx.namespace}/${NAME}/\\d{8}T\\d{6}Z-[0-9a-f]{8}\\.snap$`),
    );
    const head = await bucket.head(b.lastBackupKey);
    assert.ok(head, `${b.lastBackupKey} is in the bucket`);
    assert.equal(head.size, b.lastBackupSize);
    assert.ok(b.lastBackupSize > 1000, `a Raft snapshot of some size (${b.lastBackupSize})`);
    firstBackup.key = b.lastBackupKey;
    firstBackup.size = b.lastBackupSize;
    assert.equal((await backupJobs()).length, 1);
    await lockReleased();
    const m = await op!.metrics();
    assert.equal(metricSum(m, "openbao_backup_success_total", { name: NAME }), 1);
    assert.equal(metricSum(m, "openbao_backup_size_bytes", { name: NAME }), b.lastBackupSize);
    // Upstream's gauges of the last attempt.
    assert.equal(metricSum(m, "openbao_backup_last_size_bytes", { name: NAME }), b.lastBackupSize);
    assert.equal(metricSum(m, "openbao_backup_consecutive_failures", { name: NAME }), 0);
    assert.equal(metricSum(m, "openbao_backup_in_progress", { name: NAME }), 0);
    assert.ok(metricSum(m, "openbao_backup_last_duration_seconds", { name: NAME }) > 0, b.lastBackupDuration);
    assert.equal(
      metricSum(m, "openbao_backup_last_success_timestamp", { name: NAME }),
      Math.floor(Date.parse(b.lastBackupTime) / 1000),
    );
  });

  it("the same trigger twice and the operator killed mid-backup: still one Job, no stolen lock", async () => {
    await trigger("m1");
    const jobName = await poll(
      async () => (await backup()).jobName as string | undefined,
      120_000,
      "the m1 Job",
    );
    await op!.kill();
    await trigger("m1");
    op = await startOperator();
    const b = await settled(
      (x) => x.lastHandledManualTrigger === "m1" && x.lastBackupKey !== firstBackup.key,
      "the m1 backup",
    );
    const jobs = await backupJobs();
    assert.equal(jobs.filter((j) => j === jobName).length, 1);
    assert.equal(jobs.length, 2, jobs.join(", "));
    await lockReleased();
    assert.equal((await bucket.list(`e2e/${ctx.namespace}/${NAME}/`)).length, 2);
    assert.equal(b.consecutiveFailures ?? 0, 0);
  });

  it("scheduled window: one backup at the window's time", async () => {
    // The next minute boundary at least 20 s ahead.
    const w = new Date(Math.ceil((Date.now() + 20_000) / 60_000) * 60_000);
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { backup: { schedule: `${w.getUTCMinutes()} ${w.getUTCHours()} * * *` } } }),
    ]);
    const stamp = w.toISOString().replace(/\.\d+Z$/, "Z");
    await poll(
      async () => ((await backup()).nextScheduledBackup === stamp ? true : undefined),
      60_000,
      "nextScheduledBackup",
    );
    const b = await settled((x) => x.lastAttemptScheduledTime === stamp, `the ${stamp} window`);
    assert.equal(b.consecutiveFailures ?? 0, 0, JSON.stringify(b));
    // Upstream's name: backup-<cluster>-<UTC yyyymmdd-hhmmss> of the window.
    const utc = `${stamp.slice(0, 10).replace(/-/g, "")}-${stamp.slice(11, 19).replace(/:/g, "")}`;
    assert.ok((await backupJobs()).includes(`backup-${NAME}-${utc}`), (await backupJobs()).join(", "));
    assert.equal((await bucket.list(`e2e/${ctx.namespace}/${NAME}/`)).length, 3);
  });

  it("JWT login: the Job presents its projected ServiceAccount token, no token Secret", async () => {
    await enableNodeJwtAuth(ctx, `${NAME}-0`, rootToken, {
      name: "backup",
      serviceAccount: `${NAME}-backup-serviceaccount`,
      policies: ["snapshot"],
    });
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { backup: { jwtAuthRole: "backup", tokenSecretRef: null } } }),
    ]);
    await ctx.kubectl(["delete", "secret", "backup-token"]);
    const before = await backup();
    await trigger("j1");
    const b = await settled(
      (x) => x.lastHandledManualTrigger === "j1" && x.lastAttemptTime !== before.lastAttemptTime,
      "the j1 backup",
    );
    assert.equal(b.consecutiveFailures ?? 0, 0, JSON.stringify(b));
    assert.notEqual(b.lastBackupKey, before.lastBackupKey);
    assert.ok(await bucket.head(b.lastBackupKey), `${b.lastBackupKey} is in the bucket`);
    // The Job logged in with the projected token: it mounts no token Secret.
    const job = (await ctx.getJson("jobs")).items.find(
      (j: Json) => j.metadata.annotations?.["openbao.org/backup-key"] === b.lastBackupKey,
    );
    assert.ok(job, "the j1 Job");
    const volumes = JSON.stringify(job.spec.template.spec.volumes);
    assert.match(volumes, /"audience":"openbao-internal"/);
    assert.doesNotMatch(volumes, /backup-token/);
    assert.equal((await bucket.list(`e2e/${ctx.namespace}/${NAME}/`)).length, 4);
  });

  it("object store unreachable: the backup fails cleanly, counted, last success kept, lock released; the runbook's fix and trigger back up again", async () => {
    const before = await backup();
    // Nothing listens there: every connection is refused.
    await patchTarget({ endpoint: `http://${ctx.node.addresses.nodeIp}:9` });
    await trigger("m2");
    const jobName = await poll(
      async () => (await backup()).jobName as string | undefined,
      120_000,
      "the m2 Job",
    );
    const b = await settled(
      (x) => x.lastHandledManualTrigger === "m2" && (x.consecutiveFailures ?? 0) > 0,
      "the m2 failure",
    );
    assert.equal(b.consecutiveFailures, 1);
    assert.ok(b.lastFailureReason, JSON.stringify(b));
    assert.equal(b.lastBackupTime, before.lastBackupTime);
    assert.equal(b.lastBackupKey, before.lastBackupKey);
    await lockReleased();
    const job = await ctx.getJson(`job/${jobName}`);
    const key = job.metadata.annotations["openbao.org/backup-key"];
    assert.equal(await bucket.head(key), undefined, `${key} must not exist`);
    assert.equal((await bucket.list(`e2e/${ctx.namespace}/${NAME}/`)).length, 4);
    const m = await op!.metrics();
    assert.ok(metricSum(m, "openbao_backup_failure_total", { name: NAME }) >= 1);
    assert.equal(metricSum(m, "openbao_backup_consecutive_failures", { name: NAME }), 1);
    assert.equal(metricSum(m, "openbao_backup_in_progress", { name: NAME }), 0);
    assert.equal((await condition("BackingUp"))?.reason, "BackupFailed");
    // The runbook's check (docs/runbooks/openbao.md, Backup failing), as a reader runs it: the
    // reason and message, the failed Job among the backup Jobs, and its log saying why.
    const dir = await toolDir(ctx.node.kubectl);
    try {
      const env = {
        NS: ctx.namespace,
        NAME,
        JOB: jobName,
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: ctx.node.kubeconfigPath,
      };
      const seen = await runShell(block("openbao.md", "Backup failing", "lastFailureReason"), env, true);
      assert.ok(seen.startsWith(`${b.lastFailureReason}: ${b.lastFailureMessage.slice(0, 40)}`), seen);
      assert.match(seen, new RegExp(`^${jobName}\\s`, "m"), "the failed Job is listed");
      const log = seen.split("\n").slice(1).join("\n");
      assert.match(log, /ECONNREFUSED/, `and its log names the refused connection:\n${seen}`);

      // Act: the endpoint fixed, then the section's trigger instead of waiting for the schedule.
      await patchTarget({ endpoint: s3.endpoint });
      await runShell(block("openbao.md", "Backup failing", "trigger-backup"), env);
      const asked = (await cluster()).metadata.annotations?.["openbao.org/trigger-backup"];
      assert.ok(asked && asked !== "m2", `the documented annotation set a new value (${asked})`);
      const ok = await settled(
        (x) => x.lastHandledManualTrigger === asked && !!x.lastBackupTime,
        "the backup asked for by the runbook",
      );
      // Outcome: a new snapshot recorded, the failure run over, the alert's metric back to 0.
      assert.equal(ok.consecutiveFailures, 0, JSON.stringify(ok));
      assert.equal(ok.lastFailureReason, undefined);
      assert.notEqual(ok.lastBackupKey, before.lastBackupKey);
      assert.ok(await bucket.head(ok.lastBackupKey), `${ok.lastBackupKey} is in the bucket`);
      const cond = await condition("BackingUp");
      assert.equal(`${cond?.status}/${cond?.reason}`, "False/BackupSucceeded");
      assert.equal(
        metricSum(await op!.metrics(), "openbao_backup_consecutive_failures", { name: NAME }),
        0,
        "OpenBaoBackupsFailing's metric is 0 again",
      );
      const shown = await runShell(block("openbao.md", "Backup failing", "consecutiveFailures"), env, true);
      assert.equal(shown.trim(), `0 ${ok.lastBackupTime} ${ok.lastBackupKey}`);
      await lockReleased();
    } finally {
      removeTempDir(dir);
      await patchTarget({ endpoint: s3.endpoint });
    }
  });

  it("object store gone mid-upload: no object, failure counted, last success kept, lock released", async () => {
    // The snapshot (tens of KiB) goes in one PUT; the proxy resets the connection after its first
    // 8 KiB of body, on every attempt the SDK makes.
    const proxy = await startCuttingProxy(ctx, s3.endpoint, 8 * 1024);
    try {
      const before = await backup();
      await patchTarget({ endpoint: `http://${proxy.address}` });
      await trigger("m2b");
      const jobName = await poll(
        async () => (await backup()).jobName as string | undefined,
        120_000,
        "the m2b Job",
      );
      const b = await settled(
        (x) =>
          x.lastHandledManualTrigger === "m2b" &&
          x.consecutiveFailures === (before.consecutiveFailures ?? 0) + 1,
        "the m2b failure",
      );
      assert.ok(proxy.cuts() >= 1, "the proxy cut the upload");
      assert.equal(b.lastFailureReason, "UploadFailed", JSON.stringify(b));
      assert.equal(b.lastBackupTime, before.lastBackupTime);
      assert.equal(b.lastBackupKey, before.lastBackupKey);
      await lockReleased();
      const job = await ctx.getJson(`job/${jobName}`);
      const key = job.metadata.annotations["openbao.org/backup-key"];
      // Nothing of it in the real store behind the proxy (the 5th is the runbook's backup above).
      assert.equal(await bucket.head(key), undefined, `${key} must not exist`);
      assert.equal((await bucket.list(`e2e/${ctx.namespace}/${NAME}/`)).length, 5);
    } finally {
      await patchTarget({ endpoint: s3.endpoint });
      await proxy.stop();
    }
  });

  it("Job pod killed mid-backup: the failure is recorded once and the lock released", async () => {
    // An endpoint that accepts and never answers keeps the Job in flight, holding the lock.
    hole = await startBlackhole(ctx);
    await patchTarget({ endpoint: `http://${hole.address}` });
    const before = await backup();
    await trigger("m3");
    const jobName = await poll(
      async () => (await backup()).jobName as string | undefined,
      120_000,
      "the m3 Job",
    );
    await jobPodReady(jobName);
    assert.match(await lockHolder(), new RegExp(`^backup/${NAME}/${jobName}$`));
    assert.equal(metricSum(await op!.metrics(), "openbao_backup_in_progress", { name: NAME }), 1);
    await ctx.kubectl(["delete", "pod", "-l", `batch.kubernetes.io/job-name=${jobName}`, "--wait=false"]);
    const b = await settled(
      (x) =>
        x.lastHandledManualTrigger === "m3" &&
        x.consecutiveFailures === (before.consecutiveFailures ?? 0) + 1,
      "the m3 failure",
    );
    assert.equal(b.lastBackupTime, before.lastBackupTime);
    await lockReleased();
  });

  it("restore: waits while a backup holds the lock, takes it with override, reads the original back", async () => {
    await ctx.kubectl(["apply", "--server-side", "-f", RESTORE_CRD]);
    await ctx.waitFor("crd/openbaorestores.openbao.org", "condition=Established", 120);
    // Change and delete what the first backup holds.
    await bao("bao kv put kv/app color=red size=9");
    await bao("bao kv metadata delete kv/other");
    assert.match(await bao("bao kv get -format=json kv/app"), /"color": "red"/);
    // A backup that hangs on its endpoint holds the lock (the target still points at the black hole).
    await trigger("m4");
    const jobName = await poll(
      async () => (await backup()).jobName as string | undefined,
      120_000,
      "the m4 Job",
    );
    await jobPodReady(jobName);
    const backupHolder = `backup/${NAME}/${jobName}`;
    assert.equal(await lockHolder(), backupHolder);
    const restore = (name: string, extra: Record<string, unknown>) => ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name },
      spec: {
        cluster: NAME,
        // The root token (a restore replaces every token anyway).
        tokenSecretRef: { name: `${NAME}-root-token` },
        source: {
          key: firstBackup.key,
          target: {
            provider: "s3",
            endpoint: s3.endpoint,
            bucket: BUCKET,
            usePathStyle: true,
            credentialsSecretRef: { name: "s3-creds" },
          },
        },
        ...extra,
      },
    });
    await ctx.apply(restore("r-wait", {}));
    const waiting = await poll(
      async () => {
        const r = await ctx.getJson("openbaorestore/r-wait");
        const c = r.status?.conditions?.find((x: Json) => x.type === "LockAcquired");
        return c?.reason === "OperationLockHeld" ? { r, c } : undefined;
      },
      180_000,
      "r-wait to report OperationLockHeld",
    );
    assert.match(waiting.c.message, new RegExp(backupHolder));
    assert.notEqual(waiting.r.status.phase, "Running");
    assert.equal(await lockHolder(), backupHolder, "a waiting restore does not take the lock");
    await ctx.kubectl(["delete", "openbaorestore/r-wait", "--wait=false"]);

    await ctx.apply(restore("r-force", { overrideOperationLock: true, force: true }));
    await ctx.waitFor("openbaorestore/r-force", "jsonpath={.status.phase}=Completed", 600);
    const r = await ctx.getJson("openbaorestore/r-force");
    assert.ok(
      r.status.conditions.some((x: Json) => x.type === "OperationLockOverride" && x.status === "True"),
    );
    // The original data is back (OpenBao may change leader after a restore: ask until it answers).
    const app = await poll(
      async () => {
        const out = await bao("bao kv get -format=json kv/app").catch(() => "");
        return out.includes('"color"') ? out : undefined;
      },
      180_000,
      "kv/app readable after the restore",
      3000,
    );
    assert.match(app, /"color": "blue"/);
    assert.match(await bao("bao kv get -format=json kv/other"), /"keep": "me"/);

    // The hanging backup ends as a failure; it never takes the lock back from the restore.
    await ctx.kubectl(["delete", "pod", "-l", `batch.kubernetes.io/job-name=${jobName}`, "--wait=false"]);
    await settled((x) => x.lastHandledManualTrigger === "m4", "the m4 attempt recorded");
    // Not even for its renewal or its retention pass after the restore let the lock go.
    assert.equal(await lockHolder(), "");
    await patchTarget({ endpoint: s3.endpoint });
  });
});
