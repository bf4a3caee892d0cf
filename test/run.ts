import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cacheRoot } from "../src/testenv/cache.js";
import { formatDuration } from "../src/testenv/duration.js";
import { describeFailures, FailureDigest } from "../src/testenv/failure-digest.js";
import { describeFileCpu, readFileCpu } from "../src/testenv/file-cpu-report.js";
import { ensureOperatorNode, OPERATOR_NODE_VERSION } from "../src/testenv/lts-node.js";
import { describeCpu, readCpuTimes } from "../src/testenv/machine-cpu.js";
import { trackChild } from "../src/testenv/processes.js";
import { startSharedEnv } from "../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../src/testenv/tempdirs.js";
import { mergeDurations, readDurations, slowestFirst } from "../src/testenv/test-order.js";

// Starts the one shared environment (not for unit files alone), runs every compiled test file against
// it, always tears it down.
// Arguments, when given, replace the default test folders (e.g. a single dist/test/... file).

const log = (line: string) => console.log(`[testenv] ${line}`);

/** The longest one test or one describe block may take (the slowest suites take a few minutes on a busy 2-core machine). */
const TEST_TIMEOUT_MS = 15 * 60_000;

async function main(): Promise<number> {
  const here = dirname(fileURLToPath(import.meta.url));
  const requested = process.argv.slice(2);
  const targets = requested.length > 0 ? requested : ["unit", "integration"].map((d) => join(here, d));
  const found = targets.filter((t) => existsSync(t)).flatMap(testFiles);
  // Kept outside the clone, like the other caches: a fresh CI clone starts from the last run's timings.
  const durationsPath = join(cacheRoot(), "test-durations.json");
  const existing = slowestFirst(found, here, readDurations(durationsPath));
  if (existing.length === 0) {
    console.error(`no tests found in ${targets.join(", ")}`);
    return 1;
  }

  const runtime = await testRuntime();
  const started = Date.now();
  // Unit tests need no API server or node: a run of unit files only starts (and builds) nothing.
  const unitOnly = existing.every((f) => resolve(f).startsWith(join(here, "unit")));
  const env = unitOnly ? { variables: {}, stop: async () => {} } : await startSharedEnv(log);
  if (unitOnly) log("unit tests only: no shared environment");
  else log(`shared environment ready in ${formatDuration(Date.now() - started)}`);
  let outcome: Outcome = { code: 1 };
  const cpuAtStart = readCpuTimes();
  try {
    outcome = await runTests(runtime, existing, env.variables, durationsPath, here);
    counted = outcome;
  } finally {
    const cpuAtEnd = readCpuTimes();
    if (cpuAtStart && cpuAtEnd) log(describeCpu(cpuAtStart, cpuAtEnd));
    const stopping = Date.now();
    await env.stop();
    log(`shared environment stopped in ${formatDuration(Date.now() - stopping)}`);
  }
  // Just above the counts, where a log's tail shows them: which tests failed and why.
  for (const line of describeFailures(digest.failures)) console.log(line);
  // The last line CI reads: the runner's own counts, after everything else was printed.
  const failed = failedCount(outcome);
  if (outcome.passed === undefined) {
    // The runner ended without its closing counts: results were lost, so the run cannot pass.
    console.log("the test runner ended without its summary; its results are incomplete");
    console.log(`0 passed, ${Math.max(1, failed)} failed`);
    return outcome.code || 1;
  }
  console.log(`${outcome.passed} passed, ${failed} failed`);
  return outcome.code;
}

/**
 * The runner's environment. Without NODE_TEST_CONTEXT: a run started from inside a test file (the
 * clean-up tests do) would otherwise take itself for a nested call and skip every file.
 */
function runnerEnv(node: string, variables: Record<string, string>): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
  // Processes the tests start with `node` from PATH get the same runtime as the tests.
  return { ...env, ...variables, PATH: `${dirname(node)}:${env["PATH"] ?? ""}` };
}

/**
 * The Node.js the tests run on: the one the operator image ships (OPERATOR_NODE_VERSION), so what is
 * tested is what is shipped. PLATFORM_OPERATOR_TEST_NODE=host keeps the Node that runs this script.
 */
async function testRuntime(): Promise<string> {
  if (process.env["PLATFORM_OPERATOR_TEST_NODE"] === "host") {
    log(`tests run on this machine's Node.js ${process.version} (PLATFORM_OPERATOR_TEST_NODE=host)`);
    return process.execPath;
  }
  const node = await ensureOperatorNode(log);
  log(`tests run on Node.js v${OPERATOR_NODE_VERSION}, the operator image's runtime`);
  return node;
}

/** A test file, or every `*.test.js` under a folder (newer test runners take files, not folders). */
function testFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const full = join(path, entry.name);
      if (entry.isDirectory()) return testFiles(full);
      return entry.name.endsWith(".test.js") ? [full] : [];
    });
}

interface Outcome {
  code: number;
  passed?: number;
  failed?: number;
  cancelled?: number;
}

/**
 * Runs node's test runner, passing its TAP output through while reading the closing counts, so
 * the summary can be repeated as the very last line after the environment is torn down.
 */
async function runTests(
  node: string,
  targets: string[],
  variables: Record<string, string>,
  durationsPath: string,
  root: string,
): Promise<Outcome> {
  // Owned by the process: removed by the cleanups even when Ctrl-C ends the run before `finally`.
  const scratch = makeTempDir("test-durations");
  const report = join(scratch, "durations.json");
  const cpuReport = join(scratch, "file-cpu.jsonl");
  try {
    const outcome = await runNodeTest(node, targets, { ...variables, TESTENV_CPU_REPORT: cpuReport }, report);
    if (existsSync(report)) {
      const kept = mergeDurations(durationsPath, readFileSync(report, "utf8"), root);
      log(`timings of ${Object.keys(kept).length} test files kept in ${durationsPath}`);
    }
    for (const line of describeFileCpu(readFileCpu(cpuReport), root)) log(line);
    return outcome;
  } finally {
    removeTempDir(scratch);
  }
}

function runNodeTest(
  node: string,
  targets: string[],
  variables: Record<string, string>,
  durationsReport: string,
): Promise<Outcome> {
  const support = join(dirname(fileURLToPath(import.meta.url)), "support");
  const child = spawn(
    node,
    [
      // Blocking stdout/stderr in the runner and, inherited, in every test file's process.
      `--import=${pathToFileURL(join(support, "blocking-stdio.js")).href}`,
      `--import=${pathToFileURL(join(support, "file-cpu.js")).href}`,
      "--test",
      "--test-reporter=tap",
      "--test-reporter-destination=stdout",
      `--test-reporter=${pathToFileURL(join(support, "file-durations-reporter.js")).href}`,
      `--test-reporter-destination=${durationsReport}`,
      // Four files at once on two cores: most of a node file's time is spent waiting on pods,
      // OpenBao and the API server, not computing, and the slowest start first. Measured on a quiet
      // 2-core machine: three left the CPU 27 % idle (1538 s); four took 1177 s. (Four first met a
      // restore Job that reached its cluster's Service before its endpoint: the executor now waits.)
      // TESTENV_CONCURRENCY overrides it, to measure another count on the same machine.
      `--test-concurrency=${testConcurrency()}`,
      // A test that hangs fails after this long instead of holding the run until CI's limit, and a
      // file whose tests are done exits even if a handle it leaked would keep it alive.
      `--test-timeout=${TEST_TIMEOUT_MS}`,
      "--test-force-exit",
      ...targets,
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: runnerEnv(node, variables),
    },
  );
  // If we are stopped (Ctrl-C, CI timeout), the runner gets SIGTERM rather than SIGKILL so that test
  // files still stop the servers they started themselves.
  trackChild(child, "node --test", "SIGTERM");
  const outcome: Outcome = { code: 1 };
  let tail = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk);
    const text = tail + chunk.toString("utf8");
    const lines = text.split("\n");
    tail = lines.pop() ?? "";
    for (const line of lines) {
      digest.feed(line);
      const m = /^# (pass|fail|cancelled) (\d+)$/.exec(line);
      if (m) outcome[m[1] === "pass" ? "passed" : m[1] === "fail" ? "failed" : "cancelled"] = Number(m[2]);
    }
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      digest.feed(tail);
      digest.close();
      resolve({ ...outcome, code: code ?? (signal ? 1 : 0) });
    });
  });
}

function testConcurrency(): number {
  const given = Number(process.env["TESTENV_CONCURRENCY"] ?? "");
  return Number.isInteger(given) && given >= 1 && given <= 16 ? given : 4;
}

// The tests that failed, read from the runner's output as it passes through.
const digest = new FailureDigest();
// The tests' counts once the runner gave them, and whether main came to its end.
let counted: Outcome | undefined;
let finished = false;

// Node ends a process whose event loop emptied even while a promise is still awaited (a teardown
// waiting for an event nothing keeps alive), with exit code 0. Such a run did not finish: it fails,
// and still ends with the counts line CI reads.
process.on("exit", (code) => {
  if (finished) return;
  try {
    writeSync(1, "the test run ended before it finished; it cannot pass\n");
    for (const line of describeFailures(digest.failures)) writeSync(1, `${line}\n`);
    writeSync(1, `${counted?.passed ?? 0} passed, ${Math.max(1, failedCount(counted))} failed\n`);
  } catch {
    // Nobody reads the output any more (EPIPE): the exit code still says it.
  }
  if (!code) process.exitCode = 1;
});

/** A test cancelled because its suite's set-up failed did not pass: it counts as failed. */
function failedCount(outcome: Outcome | undefined): number {
  return (outcome?.failed ?? 0) + (outcome?.cancelled ?? 0);
}

main().then(
  (code) => {
    finished = true;
    process.exitCode = code;
  },
  (err: unknown) => {
    finished = true;
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    console.log(`${counted?.passed ?? 0} passed, ${Math.max(1, failedCount(counted))} failed`);
    process.exitCode = 1;
  },
);
