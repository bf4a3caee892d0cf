/**
 * `platform-operator executor`: the command a backup or restore Job runs. Everything it needs comes
 * from the Job contract in env (targets/openbao/executor/contract.ts) and mounted files; it writes
 * one JSON result line to the termination message and to stdout.
 */
import { writeFile } from "node:fs/promises";
import {
  ContractError,
  ExecutorPaths,
  executorFiles,
  fromEnv,
} from "../targets/openbao/executor/contract.js";
import { formatResult } from "../targets/openbao/executor/result.js";
import { type ExecutorFiles, runExecutor, STORE_WAIT_MS } from "../targets/openbao/executor/run.js";

export const executorHelp = `Usage: platform-operator executor [options]

Runs one OpenBao backup or restore as a Job does: reads OPENBAO_EXECUTOR_* from the environment,
logs in to OpenBao, and streams the Raft snapshot to (backup) or from (restore) the object store.

Options (for running outside a Job; inside one the mounted paths are used):
  --result-file PATH      where to write the result line (default ${ExecutorPaths.terminationLog})
  --ca-file PATH          OpenBao CA bundle
  --token-file PATH       OpenBao token (auth method token)
  --jwt-file PATH         ServiceAccount token (auth method jwt)
  --credentials-dir PATH  folder with the object store credential files
  --web-identity-token-file PATH
                          token presented to STS for target.roleArn (s3)
  --store-wait-seconds N  how long a backup or restore keeps trying an object store that does not answer
                          (default ${STORE_WAIT_MS / 1000})

Exit status: 0 done, 1 the operation failed, 2 bad input.`;

export interface ExecutorFlags {
  resultFile?: string;
  caFile?: string;
  tokenFile?: string;
  jwtFile?: string;
  credentialsDir?: string;
  webIdentityTokenFile?: string;
  storeWaitSeconds?: string;
}

export async function executorCommand(flags: ExecutorFlags): Promise<number> {
  const resultFile = flags.resultFile ?? ExecutorPaths.terminationLog;
  const storeWait = flags.storeWaitSeconds === undefined ? undefined : Number(flags.storeWaitSeconds);
  if (storeWait !== undefined && !(Number.isFinite(storeWait) && storeWait >= 0)) {
    process.stderr.write(
      `platform-operator executor: --store-wait-seconds: must be a number of seconds, got ${flags.storeWaitSeconds}\n`,
    );
    return 2;
  }
  let job: ReturnType<typeof fromEnv>;
  try {
    job = fromEnv(process.env);
  } catch (err) {
    if (!(err instanceof ContractError)) throw err;
    const line = JSON.stringify({ ok: false, error: err.message, reason: "InvalidInput" });
    await writeResult(resultFile, line);
    process.stderr.write(`platform-operator executor: ${err.message}\n`);
    return 2;
  }
  const mounted = executorFiles(job);
  const files: ExecutorFiles = {
    caFile: flags.caFile ?? mounted.caFile,
    tokenFile: flags.tokenFile ?? mounted.tokenFile,
    jwtFile: flags.jwtFile ?? mounted.jwtFile,
    credentialsDir: flags.credentialsDir ?? mounted.credentialsDir,
    webIdentityTokenFile: flags.webIdentityTokenFile ?? mounted.webIdentityTokenFile,
  };
  const controller = new AbortController();
  const stop = () => controller.abort(new Error("terminated"));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  let lastLog = 0;
  const result = await runExecutor(job, {
    files,
    signal: controller.signal,
    onProgress: (bytes) => {
      const now = Date.now();
      if (now - lastLog < 5000) return;
      lastLog = now;
      process.stderr.write(`${job.operation} ${job.store.key}: ${bytes} bytes\n`);
    },
    onWaiting: (why) => process.stderr.write(`waiting for OpenBao to answer: ${why}\n`),
    ...(storeWait !== undefined && { storeWaitMs: storeWait * 1000 }),
    onStoreWaiting: (why) => process.stderr.write(`the object store did not answer, trying again: ${why}\n`),
  });
  const line = formatResult(result);
  await writeResult(resultFile, line);
  process.stdout.write(`${line}\n`);
  // The peak RSS shows in the Job log that memory stayed flat, whatever the snapshot size.
  process.stderr.write(
    `${job.operation} ${result.ok ? "done" : "failed"}: peak RSS ${process.resourceUsage().maxRSS} KiB\n`,
  );
  if (result.ok) return 0;
  // Restores that fail on bad input also exit 2, so a Job's backoff can tell "retry" from "fix the spec".
  return result.reason === "InvalidInput" ? 2 : 1;
}

async function writeResult(path: string, line: string): Promise<void> {
  try {
    await writeFile(path, `${line}\n`);
  } catch (err) {
    process.stderr.write(
      `platform-operator executor: cannot write the result to ${path}: ${(err as Error).message}\n`,
    );
  }
}
