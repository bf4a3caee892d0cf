/**
 * Real object stores for the backup tests, on loopback or inside the local node's network:
 * - S3: gofakes3 (MIT) behind a tiny Go main in test/env/objectstores, built once into the cache.
 *   It is its own Go module so adding it does not change the Kubernetes build's hash (a rebuild of
 *   kube-apiserver and friends for everyone).
 * - Azure Blob: Azurite from npm (a devDependency), its blob service only.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { hashFiles, listFiles } from "./filehash.js";
import { repoRoot } from "./paths.js";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing, trackChild } from "./processes.js";
import { makeTempDir, removeTempDir } from "./tempdirs.js";
import { waitUntil } from "./wait.js";

export function objectStoresModuleDir(): string {
  return join(repoRoot(), "test", "env", "objectstores");
}

let building: Promise<string> | undefined;

/** Path of the built s3server, building it (once per cache key) from the Go module proxy. */
export function ensureS3ServerBinary(): Promise<string> {
  building ??= (async () => {
    const dir = objectStoresModuleDir();
    const files = (await listFiles(dir)).map((f) => relative(dir, f));
    const out = join(cacheRoot(), `objectstores-${await hashFiles(dir, files)}`);
    if (!(await exists(out))) {
      await populateAtomically(out, async (scratch) => {
        const child = spawn(
          "go",
          ["build", "-trimpath", "-buildvcs=false", "-o", `${scratch}/`, "./cmd/..."],
          {
            cwd: dir,
            stdio: ["ignore", "ignore", "pipe"],
          },
        );
        trackChild(child, "go build objectstores");
        let err = "";
        child.stderr.on("data", (c: Buffer) => {
          err = (err + c.toString()).slice(-4000);
        });
        const code = await new Promise<number | null>((resolve, reject) => {
          child.once("error", reject);
          child.once("close", resolve);
        });
        if (code !== 0) throw new Error(`go build in ${dir} failed (exit ${code}):\n${err}`);
      });
    }
    return join(out, "s3server");
  })();
  building.catch(() => {
    building = undefined;
  });
  return building;
}

export interface LocalObjectStore {
  /** http endpoint clients use (for Azurite it includes the account path). */
  endpoint: string;
  host: string;
  port: number;
  service: ServiceProcess;
  stop(): Promise<void>;
}

export interface S3ServerOptions {
  buckets?: string[];
  /** Address to listen on (default loopback), e.g. the local node's address. */
  host?: string;
  /** Wraps the command line, e.g. `node.inCluster` to run inside the local node's network namespace. */
  wrap?: (argv: string[]) => string[];
}

/** Static keys the fake S3 server accepts (it checks nothing; real clients still sign with them). */
export const S3_TEST_CREDENTIALS = {
  accessKeyId: "testenv-access",
  secretAccessKey: "testenv-secret",
} as const;

/** An S3-compatible server (gofakes3, in memory) with the buckets created, path-style addressing. */
export async function startS3Server(opts: S3ServerOptions = {}): Promise<LocalObjectStore> {
  const binary = await ensureS3ServerBinary();
  const host = opts.host ?? LOOPBACK;
  const port = await freePort();
  const dir = makeTempDir("s3server");
  const argv = [binary, `-addr=${host}:${port}`, `-buckets=${(opts.buckets ?? []).join(",")}`];
  const [command, ...args] = opts.wrap ? opts.wrap(argv) : argv;
  const service = await startService({
    name: "s3server",
    command: command!,
    args,
    logPath: join(dir, "s3.log"),
  });
  const endpoint = `http://${host}:${port}`;
  await stopIfFailing(
    service,
    waitUntil(async () => (await fetch(endpoint, { signal: AbortSignal.timeout(2000) })).status > 0, {
      what: `S3 server at ${endpoint}`,
      timeoutMs: 30_000,
      service,
    }),
  );
  return {
    endpoint,
    host,
    port,
    service,
    async stop() {
      await service.stop();
      removeTempDir(dir);
    },
  };
}

/** Azurite's fixed development account (published in its documentation, not a secret). */
export const AZURITE_ACCOUNT = {
  name: "devstoreaccount1",
  key: "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
} as const;

/** Azurite's blob service in memory on loopback; the endpoint includes the account, path-style. */
export async function startAzurite(opts: { host?: string } = {}): Promise<LocalObjectStore> {
  const require = createRequire(import.meta.url);
  const bin = join(require.resolve("azurite/package.json"), "..", "dist", "src", "blob", "main.js");
  const host = opts.host ?? LOOPBACK;
  const port = await freePort();
  const dir = makeTempDir("azurite");
  const service = await startService({
    name: "azurite-blob",
    command: process.execPath,
    args: [
      bin,
      "--blobHost",
      host,
      "--blobPort",
      String(port),
      "--location",
      dir,
      "--inMemoryPersistence",
      "--skipApiVersionCheck",
      "--silent",
    ],
    logPath: join(dir, "azurite.log"),
  });
  const endpoint = `http://${host}:${port}/${AZURITE_ACCOUNT.name}`;
  await stopIfFailing(
    service,
    waitUntil(async () => (await fetch(endpoint, { signal: AbortSignal.timeout(2000) })).status > 0, {
      what: `Azurite at ${endpoint}`,
      timeoutMs: 30_000,
      service,
    }),
  );
  return {
    endpoint,
    host,
    port,
    service,
    async stop() {
      await service.stop();
      removeTempDir(dir);
    },
  };
}
