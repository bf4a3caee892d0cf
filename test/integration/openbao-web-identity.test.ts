import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { KubeClient } from "../../src/runtime/client.js";
import type { ExecutorJob } from "../../src/targets/openbao/executor/contract.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { type MinioServer, startMinio } from "../../src/testenv/minio.js";
import { SHARED_ENV_VARS, sharedEnv } from "../../src/testenv/shared.js";
import { waitUntil } from "../../src/testenv/wait.js";
import { reopenRestoredNode, runExecutorProcess } from "../support/executor.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { CLUSTER_ROLE_BINDING } from "../support/rbac.js";
import { projectedToken } from "../support/whoami.js";

// target.roleArn as a Job uses it, against real parts: the real API server issues the projected
// token (TokenRequest, audience sts.amazonaws.com) and publishes its keys (OIDC discovery); MinIO's
// STS checks the token against them in AssumeRoleWithWebIdentity and hands out temporary keys; MinIO
// checks every S3 signature made with them. No static key is given to the executor at all.

const BUCKET = "snapshots";
const STS_AUDIENCE = "sts.amazonaws.com";

describe("openbao executor: web identity (target.roleArn) through a real STS", () => {
  let client: KubeClient;
  let ns: string;
  let minio: MinioServer;
  let source: RaftOpenBao;
  const binding = `testenv-anonymous-discovery-${process.pid}`;

  const tokenFor = (sa: string, audience: string) => projectedToken(client, ns, sa, audience, 3600);
  const job = (operation: "backup" | "restore", bao: { addr: string }, key: string): ExecutorJob => ({
    operation,
    openbao: { address: bao.addr },
    auth: { method: "token", secretName: "unused-on-the-host" },
    store: {
      provider: "s3",
      bucket: BUCKET,
      key,
      endpoint: minio.endpoint,
      usePathStyle: true,
      partSize: 5 * 1024 * 1024,
      concurrency: 2,
      roleArn: minio.roleArn,
    },
    ...(operation === "restore" ? { force: true } : {}),
  });

  before(async () => {
    const env = sharedEnv();
    client = clientFor(env.kubeconfigPath);
    ns = await freshNamespace(client, "obwebid");
    // An STS outside the cluster reads the issuer's discovery document and keys without credentials,
    // as AWS does for an EKS issuer: the usual binding of the discovery role to anonymous callers.
    await client.apply(
      CLUSTER_ROLE_BINDING,
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: binding },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: "system:service-account-issuer-discovery",
        },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:unauthenticated" }],
      },
      { fieldManager: "test-setup", force: true },
    );
    [minio, source] = await Promise.all([
      startMinio({
        buckets: [BUCKET],
        openId: {
          configUrl: `${env.issuer}/.well-known/openid-configuration`,
          clientId: STS_AUDIENCE,
          caFile: process.env[SHARED_ENV_VARS.caFile]!,
          rolePolicy: "readwrite",
        },
      }),
      startRaftOpenBao({ nodes: 1 }),
    ]);
    await baoCall(source.addr, source.rootToken, "POST", "sys/mounts/secret", {
      type: "kv",
      options: { version: "2" },
    });
    await waitUntil(
      async () => {
        try {
          await baoCall(source.addr, source.rootToken, "POST", "secret/data/app", {
            data: { password: "kept-by-the-backup" },
          });
          return true;
        } catch {
          return false;
        }
      },
      { what: "the KV v2 mount to take writes", timeoutMs: 60_000 },
    );
  });

  after(async () => {
    await client?.delete(CLUSTER_ROLE_BINDING, binding).catch(() => {});
    await Promise.all([minio?.stop(), source?.stop()]);
  });

  it("backs up with keys from AssumeRoleWithWebIdentity, and a fresh OpenBao restored the same way has the data", async () => {
    const key = `ns/bao/web-identity-${Date.now()}.snap`;
    const token = await tokenFor("bao-backup", STS_AUDIENCE);
    const backup = await runExecutorProcess(job("backup", source, key), {
      token: source.rootToken,
      webIdentityToken: token,
    }).done;
    assert.equal(backup.code, 0, backup.stderr);
    assert.ok(backup.result?.ok, backup.stderr);
    const admin = new S3Client({
      endpoint: minio.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: minio.root,
    });
    const head = await admin.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    admin.destroy();
    assert.equal(head.ContentLength, backup.result.ok ? backup.result.size : -1);

    const fresh = await startRaftOpenBao({ nodes: 1 });
    try {
      const restore = await runExecutorProcess(job("restore", fresh, key), {
        token: fresh.rootToken,
        webIdentityToken: await tokenFor("bao-restore", STS_AUDIENCE),
      }).done;
      assert.equal(restore.code, 0, restore.stderr);
      assert.ok(restore.result?.ok, restore.stderr);
      await reopenRestoredNode(fresh, source.unsealKey);
      const read = (await baoCall(fresh.addr, source.rootToken, "GET", "secret/data/app")) as {
        data: { data: Record<string, string> };
      };
      assert.deepEqual(read.data.data, { password: "kept-by-the-backup" });
    } finally {
      await fresh.stop();
    }
  });

  it("a token for another audience is refused by the STS: the backup fails, nothing is written, no token in the message", async () => {
    const key = `ns/bao/wrong-audience-${Date.now()}.snap`;
    const token = await tokenFor("bao-backup", "openbao-internal");
    const res = await runExecutorProcess(job("backup", source, key), {
      token: source.rootToken,
      webIdentityToken: token,
    }).done;
    assert.equal(res.code, 1, res.stderr);
    assert.ok(res.result && !res.result.ok);
    assert.equal(res.result.reason, "UploadFailed");
    assert.match(res.result.error, /aud/i);
    for (const secret of [token, source.rootToken])
      assert.ok(!res.stderr.includes(secret) && !res.result.error.includes(secret));
    const admin = new S3Client({
      endpoint: minio.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: minio.root,
    });
    await assert.rejects(admin.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })));
    admin.destroy();
  });
});
