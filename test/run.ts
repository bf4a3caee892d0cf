import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatDuration } from "../src/testenv/duration.js";
import { trackChild } from "../src/testenv/processes.js";
import { startSharedEnv } from "../src/testenv/shared.js";

// Starts the one shared environment, runs every compiled test file against it, always tears it down.
// Arguments, when given, replace the default test folders (e.g. a single dist/test/... file).

const log = (line: string) => console.log(`[testenv] ${line}`);

async function main(): Promise<number> {
  const here = dirname(fileURLToPath(import.meta.url));
  const requested = process.argv.slice(2);
  const targets = requested.length > 0 ? requested : ["unit", "integration"].map((d) => join(here, d));
  const existing = targets.filter((t) => existsSync(t));
  if (existing.length === 0) {
    console.error(`no tests found in ${targets.join(", ")}`);
    return 1;
  }

  const started = Date.now();
  const env = await startSharedEnv(log);
  log(`shared environment ready in ${formatDuration(Date.now() - started)}`);
  try {
    return await runTests(existing, env.variables);
  } finally {
    const stopping = Date.now();
    await env.stop();
    log(`shared environment stopped in ${formatDuration(Date.now() - stopping)}`);
  }
}

function runTests(targets: string[], variables: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ["--test", "--test-concurrency=2", ...targets], {
    stdio: "inherit",
    env: { ...process.env, ...variables },
  });
  // If we are stopped (Ctrl-C, CI timeout), the runner gets SIGTERM rather than SIGKILL so that test
  // files still stop the servers they started themselves.
  trackChild(child, "node --test", "SIGTERM");
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  },
);
