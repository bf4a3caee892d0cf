import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BaoEndpoint, baoCall, baoHealth } from "./baohttp.js";
import { baoBinary, ensureBinaries } from "./binaries.js";
import { BAO_DEFAULT_VERSION } from "./cache.js";
import { freePortPair, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing } from "./processes.js";
import { makeTempDir, removeTempDir } from "./tempdirs.js";
import { waitUntil } from "./wait.js";

export interface DevOpenBao extends BaoEndpoint {
  version: string;
  /** Printed by dev mode at start; changes on every restart. */
  unsealKey?: string;
  dir: string;
  logPath: string;
  pid(): number | undefined;
  stop(): Promise<void>;
  /**
   * Stops and starts again on the same address with the same root token. Dev mode keeps everything in
   * memory, so all data is gone: KV v2 at secret/ and the audit device come back, nothing else does.
   */
  restart(): Promise<void>;
  /** Seals the running server (it keeps its data in memory while sealed); unseal() undoes it. */
  seal(): Promise<void>;
  unseal(): Promise<void>;
}

export interface DevOpenBaoOptions {
  version?: string;
  /** Enables a file audit device writing to this path. */
  auditFile?: string;
  rootToken?: string;
  /** Address to listen on and be reached at (default loopback), e.g. the local node's address. */
  host?: string;
  /** Wraps the command line, e.g. to run the server inside the local node's network namespace. */
  wrap?: (argv: string[]) => string[];
}

/** `bao server -dev` on loopback: in memory, unsealed, KV v2 mounted at secret/. */
export async function startDevOpenBao(opts: DevOpenBaoOptions = {}): Promise<DevOpenBao> {
  const binaries = await ensureBinaries();
  const binary = baoBinary(binaries, opts.version);
  const version = opts.version ?? BAO_DEFAULT_VERSION;
  const dir = makeTempDir("bao-dev");
  // Dev mode also opens its cluster listener on port+1.
  const port = await freePortPair();
  const host = opts.host ?? LOOPBACK;
  const addr = `http://${host}:${port}`;
  const rootToken = opts.rootToken ?? "testenv-root";
  const logPath = join(dir, "bao.log");
  const args = [
    "server",
    "-dev",
    "-dev-no-store-token",
    `-dev-root-token-id=${rootToken}`,
    `-dev-listen-address=${host}:${port}`,
  ];
  if (opts.auditFile) {
    // OpenBao 2.6+ refuses to enable audit devices over the API ("use declarative, config-based audit
    // device management"), so the device is declared in a config file next to -dev.
    const configPath = join(dir, "audit.hcl");
    await writeFile(configPath, auditConfig(opts.auditFile));
    args.push(`-config=${configPath}`);
  }

  let service: ServiceProcess | undefined;
  let stopped = false;
  const bao: DevOpenBao = {
    addr,
    rootToken,
    version,
    dir,
    logPath,
    pid: () => (service?.isRunning() ? service.pid : undefined),
    async stop() {
      stopped = true;
      await service?.stop();
      removeTempDir(dir);
    },
    async restart() {
      if (stopped) throw new Error("this OpenBao was stopped");
      await service?.stop();
      await boot();
    },
    async seal() {
      await baoCall(addr, rootToken, "PUT", "sys/seal");
    },
    async unseal() {
      if (!bao.unsealKey) throw new Error("the dev server's unseal key was not found in its log");
      await baoCall(addr, undefined, "PUT", "sys/unseal", { key: bao.unsealKey });
    },
  };

  const boot = async () => {
    // A log per run, so the unseal key we read is this run's.
    await writeFile(logPath, "");
    const [command, ...argv] = opts.wrap ? opts.wrap([binary, ...args]) : [binary, ...args];
    const current = await startService({
      name: `bao-dev-${version}`,
      command: command!,
      args: argv,
      logPath,
      cwd: dir,
      // HOME points into the temp folder so nothing (token helper, history) lands in the real one.
      env: { ...process.env, HOME: dir, BAO_ADDR: addr },
    });
    service = current;
    await stopIfFailing(
      current,
      waitUntil(async () => (await baoHealth(addr)) === 200 && (await readUnsealKey(logPath)) !== undefined, {
        what: `OpenBao ${version} dev server at ${addr}`,
        timeoutMs: 30_000,
        service: current,
      }),
    );
    bao.unsealKey = await readUnsealKey(logPath);
  };

  try {
    await boot();
  } catch (err) {
    removeTempDir(dir);
    throw err;
  }
  return bao;
}

function auditConfig(file: string): string {
  // JSON string syntax is valid HCL string syntax, quotes and backslashes included.
  return `audit "file" "testenv" {\n  options {\n    file_path = ${JSON.stringify(file)}\n  }\n}\n`;
}

async function readUnsealKey(logPath: string): Promise<string | undefined> {
  const text = await readFile(logPath, "utf8");
  return /^Unseal Key: (\S+)$/m.exec(text)?.[1];
}
