/**
 * MinIO (AGPL-3.0, a test tool only: never shipped) as the one real S3 server here that checks
 * signatures and runs an STS: AssumeRoleWithWebIdentity against an OpenID provider, which is how a
 * backup Job with `target.roleArn` gets its store credentials. Built once per pinned version from
 * the Go module proxy into the cache.
 */
import { createHash } from "node:crypto";
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { formatDuration } from "./duration.js";
import { runGo } from "./gorun.js";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing } from "./processes.js";
import { makeTempDir, removeTempDir } from "./tempdirs.js";
import { waitUntil } from "./wait.js";

const MINIO_MODULE = "github.com/minio/minio";
/** The module proxy's newest MinIO (its repository stopped tagging releases on the proxy). */
export const MINIO_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c";

let building: Promise<string> | undefined;

/** Path of the minio binary, built on first use (about 5 CPU-minutes cold). */
export function ensureMinio(onProgress: (line: string) => void = () => {}): Promise<string> {
  building ??= (async () => {
    const out = join(cacheRoot(), `minio-${MINIO_VERSION.split("-").pop()}`);
    if (!(await exists(out))) {
      await populateAtomically(
        out,
        async (scratch) => {
          const started = Date.now();
          onProgress(`building MinIO ${MINIO_VERSION} into ${out} (cold: a few minutes on 2 cores)`);
          await runGo(["install", "-trimpath", `${MINIO_MODULE}@${MINIO_VERSION}`], {
            env: { ...process.env, GOBIN: scratch, CGO_ENABLED: "0" },
            label: `go install ${MINIO_MODULE}`,
          });
          onProgress(`built MinIO in ${formatDuration(Date.now() - started)}`);
        },
        { onWait: (pid) => onProgress(`waiting for process ${pid}, which is building MinIO`) },
      );
    }
    return join(out, "minio");
  })();
  building.catch(() => {
    building = undefined;
  });
  return building;
}

export interface MinioOpenId {
  /** The provider's discovery document, e.g. the API server's /.well-known/openid-configuration. */
  configUrl: string;
  /** The audience a token must carry (MinIO's client ID). */
  clientId: string;
  /** PEM of the CA the provider's TLS certificate chains to. */
  caFile?: string;
  /** The MinIO policy every token of this provider gets (role-policy mode). */
  rolePolicy: string;
}

export interface MinioServer {
  endpoint: string;
  /** The root user's keys (the admin's, for set-up and checks). */
  root: { accessKeyId: string; secretAccessKey: string };
  /** The role a web identity assumes, when an OpenID provider is configured. */
  roleArn?: string;
  service: ServiceProcess;
  stop(): Promise<void>;
}

/**
 * MinIO's role ARN for a role-policy provider: its resource ID is the unpadded base64url SHA-1 of
 * the client ID, so it is known before the server starts (and stays the same across restarts).
 */
export function minioRoleArn(clientId: string): string {
  return `arn:minio:iam:::role/${createHash("sha1").update(clientId).digest("base64url")}`;
}

/** A single-drive MinIO on loopback with the buckets created (in a folder removed on stop). */
export async function startMinio(opts: { buckets: string[]; openId?: MinioOpenId }): Promise<MinioServer> {
  const binary = await ensureMinio();
  const dir = makeTempDir("minio");
  const certs = join(dir, "certs");
  await mkdir(join(certs, "CAs"), { recursive: true });
  if (opts.openId?.caFile) await copyFile(opts.openId.caFile, join(certs, "CAs", "provider-ca.crt"));
  const [port, consolePort] = [await freePort(), await freePort()];
  const root = { accessKeyId: "testenv-minio-admin", secretAccessKey: "testenv-minio-admin-secret" };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env["PATH"],
    HOME: dir,
    MINIO_ROOT_USER: root.accessKeyId,
    MINIO_ROOT_PASSWORD: root.secretAccessKey,
    MINIO_BROWSER: "off",
    MINIO_UPDATE: "off",
  };
  if (opts.openId) {
    env["MINIO_IDENTITY_OPENID_CONFIG_URL"] = opts.openId.configUrl;
    env["MINIO_IDENTITY_OPENID_CLIENT_ID"] = opts.openId.clientId;
    env["MINIO_IDENTITY_OPENID_ROLE_POLICY"] = opts.openId.rolePolicy;
  }
  const service = await startService({
    name: "minio",
    command: binary,
    args: [
      "server",
      join(dir, "data"),
      "--address",
      `${LOOPBACK}:${port}`,
      "--console-address",
      `${LOOPBACK}:${consolePort}`,
      "--certs-dir",
      certs,
      "--quiet",
    ],
    env,
    logPath: join(dir, "minio.log"),
    cwd: dir,
  });
  const endpoint = `http://${LOOPBACK}:${port}`;
  await stopIfFailing(
    service,
    waitUntil(
      async () => (await fetch(`${endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(2000) })).ok,
      { what: `MinIO at ${endpoint}`, timeoutMs: 60_000, service },
    ),
  );
  if (opts.buckets.length > 0) {
    const { CreateBucketCommand, S3Client } = await import("@aws-sdk/client-s3");
    const admin = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, credentials: root });
    for (const bucket of opts.buckets) await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    admin.destroy();
  }
  return {
    endpoint,
    root,
    ...(opts.openId ? { roleArn: minioRoleArn(opts.openId.clientId) } : {}),
    service,
    async stop() {
      await service.stop();
      removeTempDir(dir);
    },
  };
}
