/**
 * Runs the executor the way a Job does, but on the host: a child `platform-operator executor` with
 * the contract's env, a token file and a credentials folder, and the result file read back.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ExecutorJob, toEnvAndMounts } from "../../src/targets/openbao/executor/contract.js";
import { type ExecutorResult, parseResult } from "../../src/targets/openbao/executor/result.js";
import { baoCall, baoHealth } from "../../src/testenv/baohttp.js";
import { waitUntil } from "../../src/testenv/wait.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

export interface ExecutorRun {
  pid: number;
  /** Resolves when the process has exited. */
  done: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    result?: ExecutorResult;
    stderr: string;
    peakRssKb?: number;
  }>;
  /** Resolves on the first progress line (bytes moved), i.e. once the transfer is under way. */
  progressed: Promise<void>;
  /** Resolves on the first "waiting for OpenBao to answer" line. */
  waiting: Promise<void>;
  /** Resolves on the first line saying the object store did not answer and the backup tries again. */
  storeWaiting: Promise<void>;
  kill(signal: NodeJS.Signals): void;
}

export function runExecutorProcess(
  job: ExecutorJob,
  secrets: { token: string; credentials?: Record<string, string>; webIdentityToken?: string },
  opts: { maxOldSpaceMb?: number; storeWaitSeconds?: number } = {},
): ExecutorRun {
  const dir = mkdtempSync(join(tmpdir(), "executor-"));
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, secrets.token, { mode: 0o600 });
  const credDir = join(dir, "credentials");
  if (secrets.credentials) {
    mkdirSync(credDir, { mode: 0o700 });
    for (const [k, v] of Object.entries(secrets.credentials))
      writeFileSync(join(credDir, k), v, { mode: 0o600 });
  }
  const resultFile = join(dir, "result");
  const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"] };
  for (const e of toEnvAndMounts(job).env) env[e.name] = e.value;
  const nodeArgs = opts.maxOldSpaceMb ? [`--max-old-space-size=${opts.maxOldSpaceMb}`] : [];
  const args = [...nodeArgs, MAIN, "executor", "--result-file", resultFile, "--token-file", tokenFile];
  if (secrets.credentials) args.push("--credentials-dir", credDir);
  if (opts.storeWaitSeconds !== undefined) args.push("--store-wait-seconds", String(opts.storeWaitSeconds));
  if (secrets.webIdentityToken !== undefined) {
    const file = join(dir, "web-identity-token");
    writeFileSync(file, secrets.webIdentityToken, { mode: 0o600 });
    args.push("--web-identity-token-file", file);
  }
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let onProgress: () => void = () => {};
  const progressed = new Promise<void>((resolve) => {
    onProgress = resolve;
  });
  let onWaiting: () => void = () => {};
  const waiting = new Promise<void>((resolve) => {
    onWaiting = resolve;
  });
  let onStoreWaiting: () => void = () => {};
  const storeWaiting = new Promise<void>((resolve) => {
    onStoreWaiting = resolve;
  });
  child.stdout.resume();
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
    if (/: \d+ bytes$/m.test(stderr)) onProgress();
    if (/^waiting for OpenBao to answer: /m.test(stderr)) onWaiting();
    if (/^the object store did not answer, trying again: /m.test(stderr)) onStoreWaiting();
  });
  const done = new Promise<Awaited<ExecutorRun["done"]>>((resolve) => {
    child.once("close", (code, signal) => {
      let text: string | undefined;
      try {
        text = readFileSync(resultFile, "utf8");
      } catch {
        text = undefined;
      }
      rmSync(dir, { recursive: true, force: true });
      const rss = /peak RSS (\d+) KiB/.exec(stderr)?.[1];
      resolve({ code, signal, result: parseResult(text), stderr, peakRssKb: rss ? Number(rss) : undefined });
    });
  });
  return { pid: child.pid!, done, progressed, waiting, storeWaiting, kill: (s) => child.kill(s) };
}

/**
 * After a snapshot restore into a fresh node: the restored keyring is the source's, sealed under the
 * source's key, so the node seals itself; the source's unseal key opens it again.
 */
export async function reopenRestoredNode(fresh: { addr: string }, sourceUnsealKey: string): Promise<void> {
  await waitUntil(async () => (await baoHealth(fresh.addr)) === 503, {
    what: "the restored node to seal itself",
    timeoutMs: 60_000,
  });
  await baoCall(fresh.addr, undefined, "PUT", "sys/unseal", { key: sourceUnsealKey });
  await waitUntil(async () => (await baoHealth(fresh.addr)) === 200, {
    what: "the restored node to be active",
    timeoutMs: 60_000,
  });
}
