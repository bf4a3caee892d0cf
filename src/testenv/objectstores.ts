/**
 * Real object stores for the backup tests, on loopback or inside the local node's network:
 * - S3: gofakes3 (MIT) behind a tiny Go main in test/env/objectstores, built once into the cache.
 *   It is its own Go module so adding it does not change the Kubernetes build's hash (a rebuild of
 *   kube-apiserver and friends for everyone).
 * - Azure Blob: Azurite from npm (a devDependency), its blob service only.
 * - GCS: fake-gcs-server (BSD-2-Clause) in the same Go module, its JSON and upload APIs over HTTP.
 */
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { hashFiles, listFiles } from "./filehash.js";
import { runGo } from "./gorun.js";
import { repoRoot } from "./paths.js";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing } from "./processes.js";
import { makeTempDir, removeTempDir } from "./tempdirs.js";
import { waitUntil } from "./wait.js";

export function objectStoresModuleDir(): string {
  return join(repoRoot(), "test", "env", "objectstores");
}

let building: Promise<string> | undefined;

/** Folder of the built s3server and gcsserver, building them (once per cache key) from the Go module proxy. */
export function ensureObjectStoreBinaries(): Promise<string> {
  building ??= (async () => {
    const dir = objectStoresModuleDir();
    const files = (await listFiles(dir)).map((f) => relative(dir, f));
    const out = join(cacheRoot(), `objectstores-${await hashFiles(dir, files)}`);
    if (!(await exists(out))) {
      await populateAtomically(out, (scratch) =>
        runGo(["build", "-trimpath", "-buildvcs=false", "-o", `${scratch}/`, "./cmd/..."], {
          cwd: dir,
          label: `go build in ${dir}`,
        }),
      );
    }
    return out;
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
  /** The port to listen on (default: a free one): a server started again where its clients look. */
  port?: number;
}

/** Static keys the fake S3 server accepts (it checks nothing; real clients still sign with them). */
export const S3_TEST_CREDENTIALS = {
  accessKeyId: "testenv-access",
  secretAccessKey: "testenv-secret",
} as const;

/** An S3-compatible server (gofakes3, in memory) with the buckets created, path-style addressing. */
export async function startS3Server(opts: S3ServerOptions = {}): Promise<LocalObjectStore> {
  const binary = join(await ensureObjectStoreBinaries(), "s3server");
  const host = opts.host ?? LOOPBACK;
  const port = opts.port ?? (await freePort());
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
  return whenAnswering({ endpoint, host, port, service, dir }, endpoint, (s) => s > 0, "S3 server");
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
      // In memory; the folder is only its working directory (it writes nothing there then).
      "--inMemoryPersistence",
      "--skipApiVersionCheck",
      "--silent",
    ],
    logPath: join(dir, "azurite.log"),
    cwd: dir,
  });
  const endpoint = `http://${host}:${port}/${AZURITE_ACCOUNT.name}`;
  return whenAnswering({ endpoint, host, port, service, dir }, endpoint, (s) => s > 0, "Azurite");
}

/** fake-gcs-server in memory with the buckets created; clients use the endpoint as apiEndpoint. */
export async function startGcsServer(opts: S3ServerOptions = {}): Promise<LocalObjectStore> {
  const binary = join(await ensureObjectStoreBinaries(), "gcsserver");
  const host = opts.host ?? LOOPBACK;
  const port = await freePort();
  const dir = makeTempDir("gcsserver");
  const argv = [binary, `-host=${host}`, `-port=${port}`, `-buckets=${(opts.buckets ?? []).join(",")}`];
  const [command, ...args] = opts.wrap ? opts.wrap(argv) : argv;
  const service = await startService({
    name: "gcsserver",
    command: command!,
    args,
    logPath: join(dir, "gcs.log"),
  });
  const endpoint = `http://${host}:${port}`;
  return whenAnswering(
    { endpoint, host, port, service, dir },
    `${endpoint}/storage/v1/b`,
    (s) => s === 200,
    "GCS server",
  );
}

/**
 * The store once `probe` answers with a status `ready` accepts (the service is stopped if it never
 * does); stopping it later also removes its working folder.
 */
async function whenAnswering(
  s: { endpoint: string; host: string; port: number; service: ServiceProcess; dir: string },
  probe: string,
  ready: (status: number) => boolean,
  what: string,
): Promise<LocalObjectStore> {
  await stopIfFailing(
    s.service,
    waitUntil(async () => ready((await fetch(probe, { signal: AbortSignal.timeout(2000) })).status), {
      what: `${what} at ${s.endpoint}`,
      timeoutMs: 30_000,
      service: s.service,
    }),
  );
  return {
    endpoint: s.endpoint,
    host: s.host,
    port: s.port,
    service: s.service,
    async stop() {
      await s.service.stop();
      removeTempDir(s.dir);
    },
  };
}
