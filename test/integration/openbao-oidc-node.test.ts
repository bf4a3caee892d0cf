import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse, stringify } from "yaml";
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
import { startTransitOpenBao, type TransitOpenBao } from "../support/transit-node.js";

// spec.selfInit.oidc on the local node: OpenBao initializes itself with the operator's JWT bootstrap
// (auth/jwt-operator trusting the node API server's ServiceAccount keys, upstream's roles), its root
// token is revoked, and a backup that names no login of its own runs as the bootstrapped `backup`
// role. Nothing about JWT is configured by hand here.
//
// Then the cross-cluster restore upstream documents: the source seals with a transit key and its
// self-init bootstrap already accepts the target's executor ServiceAccounts
// (selfInit.oidc.additionalSubjects); a fresh target on the same transit key restores the source's
// snapshot without force (OpenBao accepts it: the seal can open it), and a second restore, whose
// Job logs in against the source's roles that came with the snapshot, completes only because its
// restore ServiceAccount is one of those additional subjects.
//
// Last, upstream's restore page followed as written on the source itself: its OpenBaoRestore (naming
// jwtAuthRole openbao-operator-restore) applied from a file with kubectl, and its monitor commands
// read until the request ends.

const NAME = "oidcbao";
/** The restore target: a second cluster on the same transit key. */
const TARGET = "oidcbao-b";
const TRANSIT_KEY = "openbao-unseal-key";
/** A login the source's self-init sets up, so the restored data can be read in the target. */
const READER = { user: "reader", password: "test-only-reader" };
const BUCKET = "snapshots";

/**
 * The OpenBaoRestore of upstream's restore page (operate/restore.md, "Restore an S3 snapshot"), field
 * for field; only what names the local set-up is a parameter. Kept as a fixture: the test below
 * follows that page on a selfInit.oidc cluster, so the role it names must be one the bootstrap writes.
 */
const upstreamPageRestore = (p: {
  name: string;
  namespace: string;
  cluster: string;
  endpoint: string;
  bucket: string;
  credentialsSecret: string;
  key: string;
}) => ({
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoRestore",
  metadata: { name: p.name, namespace: p.namespace },
  spec: {
    cluster: p.cluster,
    source: {
      target: {
        provider: "s3",
        endpoint: p.endpoint,
        bucket: p.bucket,
        region: "us-east-1",
        credentialsSecretRef: { name: p.credentialsSecret },
      },
      key: p.key,
    },
    jwtAuthRole: "openbao-operator-restore",
  },
});
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao selfInit.oidc on the local node", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let s3: { endpoint: string; stop(): Promise<void> };
  let bucket: ObjectStore;
  let transit: TransitOpenBao;
  /** The source's snapshot (the o1 backup). */
  let snapshotKey = "";

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
    transit = await startTransitOpenBao(ctx, { keyName: TRANSIT_KEY, mountPath: "transit/" });
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

  /** The spec both clusters share: no TLS, one voter, the same transit seal. */
  const transitSpec = () => ({
    version: BAO_DEFAULT_VERSION,
    replicas: 1,
    storage: { size: "128Mi" },
    tls: { enabled: false },
    deletionPolicy: "DeletePVCs",
    unseal: {
      type: "transit",
      transit: {
        address: transit.address,
        mountPath: "transit/",
        keyName: TRANSIT_KEY,
        tlsCACert: "/etc/bao/seal-creds/ca.crt",
      },
      credentialsSecretRef: { name: transit.credentialsSecret },
    },
  });
  const subject = (sa: string) => `system:serviceaccount:${ctx.namespace}:${TARGET}-${sa}-serviceaccount`;

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
          ...transitSpec(),
          selfInit: {
            enabled: true,
            oidc: {
              enabled: true,
              // The restore target's executors, for the cross-cluster restore below.
              additionalSubjects: { backup: [subject("backup")], restore: [subject("restore")] },
            },
            requests: [
              { name: "kv", operation: "update", path: "sys/mounts/kv", data: { type: "kv" } },
              { name: "app", operation: "update", path: "kv/app", data: { color: "blue" } },
              {
                name: "readerPolicy",
                operation: "update",
                path: "sys/policies/acl/reader",
                data: { policy: 'path "kv/*" { capabilities = ["read"] }' },
              },
              {
                name: "userpass",
                operation: "update",
                path: "sys/auth/userpass",
                data: { type: "userpass" },
              },
              {
                name: "readerLogin",
                operation: "update",
                path: `auth/userpass/users/${READER.user}`,
                data: { password: READER.password, token_policies: "reader" },
              },
            ],
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
    snapshotKey = b.lastBackupKey;
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
    assert.equal(get("OPENBAO_EXECUTOR_JWT_ROLE"), "openbao-operator-backup");
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
  /** An OpenBaoRestore of the source's snapshot into the target, logging in as selfInit.oidc says. */
  const restoreIntoTarget = (name: string) =>
    ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name },
      spec: {
        cluster: TARGET,
        source: {
          key: snapshotKey,
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
  const finished = (name: string) =>
    poll(
      async () => {
        const r = await ctx.getJson(`openbaorestore/${name}`);
        return ["Completed", "Failed", "Unknown"].includes(r.status?.phase) ? r : undefined;
      },
      10 * 60_000,
      `${name} to end`,
      2000,
    );
  const restoreJobs = async (): Promise<Json[]> =>
    JSON.parse(await ctx.kubectl(["get", "jobs", "-l", "openbao.org/component=restore", "-o", "json"])).items;
  const events = async (name: string, reason: string) =>
    (
      JSON.parse(
        await ctx.kubectl([
          "get",
          "events",
          "--field-selector",
          `reason=${reason},involvedObject.name=${name}`,
          "-o",
          "json",
        ]),
      ).items as Json[]
    ).reduce((n, e) => n + Number(e["series"]?.["count"] ?? e["count"] ?? 1), 0);
  /** kv/app read in the target through the source's userpass login (none such exists in the target's own data). */
  const readInTarget = () =>
    ctx.kubectl([
      "exec",
      `${TARGET}-0`,
      "--",
      "sh",
      "-c",
      `export BAO_TOKEN=$(bao login -token-only -method=userpass username=${READER.user} password=${READER.password}) && bao read -format=json kv/app`,
    ]);

  it("a fresh cluster on the same transit key restores the source's snapshot without force: its data and logins, one Job", async () => {
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: TARGET },
      spec: {
        ...transitSpec(),
        selfInit: {
          enabled: true,
          oidc: { enabled: true },
          requests: [
            { name: "scratch", operation: "update", path: "sys/mounts/scratch", data: { type: "kv" } },
          ],
        },
      },
    });
    await ctx.waitFor(`openbaocluster/${TARGET}`, "jsonpath={.status.initialized}=true", 420);
    await ctx.waitFor(`openbaocluster/${TARGET}`, "jsonpath={.status.readyReplicas}=1", 300);
    // Before: the target's own data, without the source's login.
    assert.ok(
      !(await readInTarget().then(
        () => true,
        () => false,
      )),
      "the source's login is not in the target yet",
    );

    await restoreIntoTarget("cross-1");
    const r = await finished("cross-1");
    assert.equal(r.status.phase, "Completed", JSON.stringify(r.status));
    const config = r.status.conditions.find((c: Json) => c.type === "RestoreConfigurationReady");
    assert.deepEqual([config?.status, config?.reason], ["True", "Ready"], JSON.stringify(config));
    assert.match(
      config.message,
      /JWT role openbao-operator-restore as ServiceAccount oidcbao-b-restore-serviceaccount/,
    );
    const app = await poll(
      async () => readInTarget().catch(() => undefined),
      300_000,
      "kv/app through the source's login in the restored target",
      3000,
    );
    assert.equal(JSON.parse(app).data.color, "blue");
    // Once: one Job for the request, one restart of the target's pods.
    const jobs = await restoreJobs();
    assert.deepEqual(
      jobs.map((j) => j.metadata.ownerReferences?.[0]?.name),
      ["cross-1"],
    );
    assert.equal(jobs[0]!.status?.succeeded, 1, JSON.stringify(jobs[0]!.status));
    assert.equal(await events("cross-1", "PodsRestarted"), 1);
  });

  it("the target's restore ServiceAccount logs in to the source's restored roles through additionalSubjects", async () => {
    // The target now holds the source's JWT roles: this Job's login is accepted only because the
    // source listed the target's restore ServiceAccount among the restore role's subjects.
    await restoreIntoTarget("cross-2");
    const r = await finished("cross-2");
    assert.equal(r.status.phase, "Completed", JSON.stringify(r.status));
    const jobs = await restoreJobs();
    assert.deepEqual(jobs.map((j) => j.metadata.ownerReferences?.[0]?.name).sort(), ["cross-1", "cross-2"]);
    const env = jobs.find((j) => j.metadata.ownerReferences?.[0]?.name === "cross-2")!.spec.template.spec
      .containers[0].env as { name: string; value: string }[];
    assert.equal(env.find((e) => e.name === "OPENBAO_EXECUTOR_JWT_ROLE")?.value, "openbao-operator-restore");
    assert.equal(await events("cross-1", "PodsRestarted"), 1, "the first restore did not run again");
    const app = await poll(async () => readInTarget().catch(() => undefined), 300_000, "kv/app again", 3000);
    assert.equal(JSON.parse(app).data.color, "blue");
  });
  it("upstream's restore page as written: a same-cluster restore naming jwtAuthRole openbao-operator-restore completes", async (t) => {
    const name = "page-restore";
    // Data written (by self-init) before the o1 backup, readable before the restore.
    const readInSource = () =>
      ctx.kubectl([
        "exec",
        `${NAME}-0`,
        "--",
        "sh",
        "-c",
        `export BAO_TOKEN=$(bao login -token-only -method=userpass username=${READER.user} password=${READER.password}) && bao read -format=json kv/app`,
      ]);
    assert.equal(JSON.parse(await readInSource()).data.color, "blue");
    const podBefore = (await ctx.getJson(`pod/${NAME}-0`)).metadata.uid;

    // `kubectl apply -f restore.yaml`, the page's manifest with the local names.
    const dir = await mkdtemp(join(tmpdir(), "restore-page-"));
    const file = join(dir, "restore.yaml");
    await writeFile(
      file,
      stringify(
        upstreamPageRestore({
          name,
          namespace: ctx.namespace,
          cluster: NAME,
          endpoint: s3.endpoint,
          bucket: BUCKET,
          credentialsSecret: "s3-creds",
          key: snapshotKey,
        }),
      ),
    );
    try {
      await ctx.kubectl(["apply", "-f", file]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // `kubectl -n <namespace> get openbaorestore <name> -w`, its rows kept until the request ends.
    const watch = spawn(
      ctx.node.kubectl,
      ["--kubeconfig", ctx.node.kubeconfigPath, "-n", ctx.namespace, "get", "openbaorestore", name, "-w"],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    let watched = "";
    watch.stdout.on("data", (b: Buffer) => {
      watched += b.toString("utf8");
    });
    let r: Json;
    try {
      // `kubectl -n <namespace> get openbaorestore <name> -o yaml` until it ends.
      r = await poll(
        async () => {
          const x = parse(await ctx.kubectl(["get", "openbaorestore", name, "-o", "yaml"])) as Json;
          return ["Completed", "Failed"].includes(x.status?.phase) ? x : undefined;
        },
        10 * 60_000,
        `${name} to end`,
        2000,
      );
      // The watch's last row may trail the read that saw the end.
      await poll(
        async () => (/Completed|Failed/.test(watched) ? true : undefined),
        30_000,
        "the watch's last row",
      );
    } finally {
      watch.kill();
    }
    assert.equal(r.status.phase, "Completed", JSON.stringify(r.status));
    const config = r.status.conditions.find((c: Json) => c.type === "RestoreConfigurationReady");
    assert.equal(config?.status, "True", JSON.stringify(config));
    assert.match(
      config.message,
      /JWT role openbao-operator-restore as ServiceAccount oidcbao-restore-serviceaccount/,
    );

    // The watch's Phase column (empty before the operator writes one: Pending) moves forward only.
    const [header, ...rows] = watched.split("\n").filter((l) => l.trim() !== "");
    const from = header!.indexOf("PHASE");
    const to = header!.indexOf("AGE");
    assert.ok(from > 0 && to > from, header);
    const seen = rows
      .map((l) => l.slice(from, to).trim() || "Pending")
      .filter((p, i, all) => i === 0 || all[i - 1] !== p);
    const order = ["Pending", "Validating", "Running", "Completed"];
    assert.ok(
      seen.every((p, i) => order.includes(p) && (i === 0 || order.indexOf(p) > order.indexOf(seen[i - 1]!))),
      `phases in order: ${seen.join(" → ")}`,
    );
    t.diagnostic(`phases the watch printed: ${seen.join(" → ")}`);
    assert.equal(seen.at(-1), "Completed", seen.join(" → "));
    assert.ok(seen.includes("Running"), seen.join(" → "));

    // `kubectl -n <namespace> get jobs -l openbao.org/cluster=<cluster>`: the o1 backup's Job and
    // exactly one restore Job, the one the request names, succeeded.
    const jobRows = (await ctx.kubectl(["get", "jobs", "-l", `openbao.org/cluster=${NAME}`]))
      .split("\n")
      .slice(1)
      .filter((l) => l.trim() !== "")
      .map((l) => l.trim().split(/\s+/));
    const jobName = r.status.execution?.jobName ?? r.status.jobName;
    assert.ok(jobName, JSON.stringify(r.status));
    const restoreRows = jobRows.filter((c) => c[0] === jobName);
    assert.equal(restoreRows.length, 1, JSON.stringify(jobRows));
    assert.ok(restoreRows[0]!.includes("1/1"), JSON.stringify(restoreRows[0]));
    const backupJobs = JSON.parse(
      await ctx.kubectl(["get", "jobs", "-l", "openbao.org/component=backup", "-o", "json"]),
    ).items.map((j: Json) => j.metadata.name);
    assert.deepEqual(
      jobRows.map((c) => c[0]).filter((n) => n !== jobName),
      backupJobs,
      "no other restore Job for this cluster",
    );

    // `kubectl -n <namespace> get openbaocluster <cluster> -o yaml`: status.restore names this restore.
    const c = await poll(
      async () => {
        const x = parse(await ctx.kubectl(["get", "openbaocluster", NAME, "-o", "yaml"])) as Json;
        return x.status?.restore?.restartCompletedAt ? x : undefined;
      },
      120_000,
      "status.restore.restartCompletedAt",
    );
    assert.equal(c.status.restore.name, name);
    assert.equal(c.status.restore.uid, r.metadata.uid);
    assert.ok(
      Date.parse(c.status.restore.restartCompletedAt) >= Date.parse(r.metadata.creationTimestamp),
      JSON.stringify(c.status.restore),
    );
    assert.notEqual((await ctx.getJson(`pod/${NAME}-0`)).metadata.uid, podBefore, "the pod was restarted");
    // The data written before the backup, read after the restore.
    const app = await poll(
      async () => readInSource().catch(() => undefined),
      300_000,
      "kv/app after the restore",
      3000,
    );
    assert.equal(JSON.parse(app).data.color, "blue");
  });
});
