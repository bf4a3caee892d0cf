import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ContractError,
  ExecutorEnv,
  type ExecutorJob,
  ExecutorPaths,
  executorFiles,
  fromEnv,
  jwtMounts,
  objectKey,
  toEnvAndMounts,
  withDefaults,
} from "../../src/targets/openbao/executor/contract.js";
import { formatResult, MAX_RESULT_BYTES, parseResult } from "../../src/targets/openbao/executor/result.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read built objects by path
type Any = any;

const backupJwt: ExecutorJob = {
  operation: "backup",
  openbao: { address: "https://bao-active.vault.svc:8200", caSecretName: "bao-tls-ca" },
  auth: { method: "jwt", role: "backup", audience: "openbao-internal" },
  store: {
    provider: "s3",
    bucket: "snaps",
    key: "p/vault/bao/20261201T133000Z-abc.snap",
    endpoint: "http://10.0.0.5:9000",
    usePathStyle: true,
    credentialsSecretName: "s3-creds",
  },
};
const restoreToken: ExecutorJob = {
  operation: "restore",
  openbao: { address: "https://bao.vault.svc:8200" },
  auth: { method: "token", secretName: "bao-token", secretKey: "t" },
  store: {
    provider: "azure",
    bucket: "snaps",
    key: "k.snap",
    azureStorageAccount: "devstoreaccount1",
    partSize: 8 * 1024 * 1024,
    concurrency: 5,
  },
  force: true,
};
const envOf = (j: ExecutorJob): Record<string, string> =>
  Object.fromEntries(toEnvAndMounts(j).env.map((e) => [e.name, e.value]));

describe("openbao executor contract: Job env and mounts", () => {
  it("reads back from env exactly what it wrote, defaults filled in", () => {
    for (const job of [backupJwt, restoreToken]) assert.deepEqual(fromEnv(envOf(job)), withDefaults(job));
    const parsed = fromEnv(envOf(backupJwt));
    assert.equal(parsed.store.partSize, 10 * 1024 * 1024);
    assert.equal(parsed.store.concurrency, 3);
    assert.equal(parsed.store.region, "us-east-1");
    assert.deepEqual(parsed.auth, {
      method: "jwt",
      role: "backup",
      audience: "openbao-internal",
      expirationSeconds: 600,
    });
    // No mount pinned: the executor tries upstream's auth/jwt-operator, then the earlier auth/jwt.
    assert.deepEqual(jwtMounts(undefined), ["jwt-operator", "jwt"]);
    assert.deepEqual(jwtMounts("/custom/"), ["custom"]);
    assert.equal(parsed.force, undefined, "force belongs to restores only");
    assert.equal(fromEnv(envOf(restoreToken)).force, true);
  });

  it("mounts secrets as read-only files and never puts a secret value into env", () => {
    const { env, volumes, volumeMounts }: Any = toEnvAndMounts(backupJwt);
    assert.ok(env.every((e: Any) => !/secretAccessKey|accessKeyId|BEGIN/.test(e.value)));
    assert.ok(volumeMounts.every((m: Any) => m.readOnly === true));
    const byName = Object.fromEntries(volumes.map((v: Any) => [v.name, v]));
    assert.deepEqual(byName["executor-openbao-ca"].secret.items, [{ key: "ca.crt", path: "ca.crt" }]);
    assert.deepEqual(byName["executor-jwt"].projected.sources[0].serviceAccountToken, {
      audience: "openbao-internal",
      expirationSeconds: 600,
      path: "token",
    });
    assert.equal(byName["executor-store-credentials"].secret.secretName, "s3-creds");
    assert.equal(byName["executor-openbao-token"], undefined);
    const files = executorFiles(fromEnv(envOf(backupJwt)));
    assert.equal(files.caFile, `${ExecutorPaths.caDir}/ca.crt`);
    assert.equal(files.jwtFile, `${ExecutorPaths.jwtDir}/token`);
    assert.equal(files.tokenFile, undefined);
    assert.equal(files.credentialsDir, ExecutorPaths.credentialsDir);
  });

  it("mounts a token Secret's chosen key for token auth, and no CA when none is named", () => {
    const { volumes }: Any = toEnvAndMounts(restoreToken);
    assert.deepEqual(
      volumes.map((v: Any) => v.name),
      ["executor-openbao-token"],
    );
    assert.deepEqual(volumes[0].secret.items, [{ key: "t", path: "token" }]);
    assert.equal(executorFiles(fromEnv(envOf(restoreToken))).caFile, undefined);
  });

  it("names the variable and the problem for bad input", () => {
    const bad = (patch: Record<string, string | undefined>, variable: string, text: RegExp): void => {
      const env = { ...envOf(backupJwt), ...patch };
      assert.throws(
        () => fromEnv(env),
        (e: unknown) => e instanceof ContractError && e.variable === variable && text.test(e.message),
      );
    };
    bad({ [ExecutorEnv.operation]: "snapshot" }, ExecutorEnv.operation, /one of backup, restore/);
    bad({ [ExecutorEnv.address]: undefined }, ExecutorEnv.address, /is required/);
    bad({ [ExecutorEnv.address]: "ftp://x" }, ExecutorEnv.address, /http\(s\)/);
    bad({ [ExecutorEnv.provider]: "minio" }, ExecutorEnv.provider, /one of s3, azure, gcs/);
    bad({ [ExecutorEnv.partSize]: "1024" }, ExecutorEnv.partSize, /from 5242880/);
    bad({ [ExecutorEnv.concurrency]: "11" }, ExecutorEnv.concurrency, /from 1 to 10/);
    bad({ [ExecutorEnv.concurrency]: "2.5" }, ExecutorEnv.concurrency, /integer/);
    bad({ [ExecutorEnv.usePathStyle]: "yes" }, ExecutorEnv.usePathStyle, /true or false/);
    bad({ [ExecutorEnv.jwtRole]: "" }, ExecutorEnv.jwtRole, /is required/);
    bad({ [ExecutorEnv.key]: undefined }, ExecutorEnv.key, /is required/);
    bad({ [ExecutorEnv.endpoint]: "not a url" }, ExecutorEnv.endpoint, /not a URL/);
  });
});

describe("openbao executor contract: object key and result", () => {
  it("lays keys out as upstream: <prefix>/<namespace>/<cluster>/<timestamp>-<id>.snap", () => {
    const time = new Date("2026-12-01T13:30:05.123Z");
    assert.equal(
      objectKey({ pathPrefix: "/backups/", namespace: "vault", cluster: "bao", time, id: "x1" }),
      "backups/vault/bao/20261201T133005Z-x1.snap",
    );
    assert.equal(
      objectKey({ namespace: "vault", cluster: "bao", time, id: "x1" }),
      "vault/bao/20261201T133005Z-x1.snap",
    );
  });

  it("round-trips success and failure through the termination message", () => {
    const ok = { ok: true as const, operation: "backup" as const, key: "k", size: 10, durationMs: 5 };
    assert.deepEqual(parseResult(formatResult(ok)), ok);
    const fail = {
      ok: false as const,
      operation: "restore" as const,
      key: "k",
      error: "x".repeat(10_000),
      reason: "DownloadFailed" as const,
    };
    const line = formatResult(fail);
    assert.ok(Buffer.byteLength(line) <= MAX_RESULT_BYTES, "fits the kubelet's 4096-byte limit");
    const back: Any = parseResult(line);
    assert.equal(back.reason, "DownloadFailed");
    assert.ok(back.error.endsWith("…"));
  });

  it("returns undefined for a message that is not the executor's", () => {
    assert.equal(parseResult(undefined), undefined);
    assert.equal(parseResult("Error: killed"), undefined);
    assert.equal(parseResult('{"ok":true,"operation":"backup","key":"k"}'), undefined);
  });
});
