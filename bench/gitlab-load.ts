/**
 * What loading the gitlab target costs a starting operator (`node dist/bench/gitlab-load.js`): fresh
 * Node processes each import the run command and the gitlab target and build the target, as
 * `platform-operator run` does before it connects anywhere. Prints the median import time and RSS
 * over BENCH_RUNS runs (default 7), and the npm packages that loading pulled in (TypeBox, which only
 * the CRD builder and offline validation need, should not be one). No cluster: module loading only.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const dist = (p: string) => fileURLToPath(new URL(`../src/${p}`, import.meta.url));
const runs = Number(process.env["BENCH_RUNS"] ?? 7);

// Module hooks run off the main thread: each npm package some module imports (a bare specifier, its
// scope kept) is posted back on a port, so the report says what was loaded.
const hook = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  if (!/^(\\.|\\/|node:|file:|data:)/.test(specifier)) {
    const parts = specifier.split("/");
    port.postMessage(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]);
  }
  return next(specifier, context);
}`;

const child = `import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
const { port1, port2 } = new MessageChannel();
const loaded = new Set();
port1.on("message", (m) => loaded.add(m));
port1.unref();
register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hook)}), { data: { port: port2 }, transferList: [port2] });
const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
await import(${JSON.stringify(dist("cli/run.js"))});
const { gitlabTarget } = await import(${JSON.stringify(dist("targets/gitlab/target.js"))});
gitlabTarget();
const ms = performance.now() - t0;
// Let the last posted names arrive.
await new Promise((r) => setTimeout(r, 50));
process.stdout.write(JSON.stringify({ ms, rss: process.memoryUsage().rss, rss0, loaded: [...loaded].sort() }));`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const samples: { ms: number; rss: number; rss0: number; loaded: string[] }[] = [];
for (let i = 0; i < runs; i++) {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", child], { timeout: 120_000 });
  samples.push(JSON.parse(stdout) as (typeof samples)[number]);
}
const mib = (b: number) => (b / 1024 / 1024).toFixed(1);
console.log(`gitlab target load, ${runs} fresh processes on Node ${process.version}:`);
console.log(`  import run + gitlab target: median ${median(samples.map((s) => s.ms)).toFixed(1)} ms`);
console.log(
  `  RSS after loading: median ${mib(median(samples.map((s) => s.rss)))} MiB (bare node ${mib(median(samples.map((s) => s.rss0)))} MiB)`,
);
const loaded = samples[0]!.loaded;
console.log(`  npm packages loaded: ${loaded.join(", ") || "none"}`);
console.log(`  TypeBox loaded: ${loaded.includes("@sinclair/typebox") ? "yes" : "no"}`);
