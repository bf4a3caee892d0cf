/**
 * VaultSeed benchmark against real OpenBao and a real kube-apiserver (`npm run bench:vault`).
 *
 * For 0, 1,000 and 10,000 objects: the time of the first full seed from the operator's start (also from
 * its readiness, the start being a fixed cost a warm client does not pay; and, as its floor, the time a
 * plain client takes for the same per-path requests at the same concurrency, bench/kv-floor.ts,
 * run just before and just after the seed and averaged, so the ratio holds on a busy machine; and
 * the API server's floor: as many first statuses applied by a plain client, bench/status-floor.ts),
 * then a quiet pass — a fresh operator process reconciling every object once with nothing to
 * change — with OpenBao's requests
 * counted by OpenBao's own file audit device, writes to OpenBao and to the API server, and the
 * operator's memory: RSS once ready (caches synced, before any work; with 0 objects this is the idle
 * operator), RSS after the first seed, and the peak RSS (VmHWM) of the seeding and the quiet process.
 * After the seed (its peak already read), a heap snapshot of the operator is attributed by
 * `heap-summary` to print the informer cache's share of the heap next to the RSS;
 * The operator runs on the node that runs the bench (`npm run bench:vault` uses the machine's; the
 * image's is in the cache: `node-24.*-linux-x64/bin/node dist/bench/vault.js`).
 * BENCH_HEAP_SNAPSHOTS=0 skips it, =1 also writes one after the quiet pass (`npm run heap:summary FILE`).
 * For each timed phase it also prints the CPU seconds of every process involved (operator, OpenBao,
 * kube-apiserver, etcd, the bench's own client, and the whole host's busy time), and for the seed
 * their sum ÷ cores: the host's lower bound on the seed's wall time, as a ratio to the OpenBao floor
 * (bench/cpu-ledger.ts, bench/cpu-report.ts).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { CUSTOM_RESOURCE_DEFINITION, NAMESPACE, SERVICE_ACCOUNT } from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../src/runtime/types.js";
import { startControlPlane } from "../src/testenv/controlplane.js";
import { baoCall, configureKubernetesAuth, startDevOpenBao } from "../src/testenv/openbao.js";
import { freePort } from "../src/testenv/ports.js";
import { makeTempDir } from "../src/testenv/tempdirs.js";
import { type CpuSample, type PhaseCpu, phaseCpu, sampleCpu } from "./cpu-ledger.js";
import { APISERVER, boundLines, cpuTable, ETCD, OPENBAO, OPERATOR, PHASE, seedBounds } from "./cpu-report.js";
import { kvFloorSeconds } from "./kv-floor.js";
import { cpuSeconds } from "./proc.js";
import { shippedFlags } from "./shipped-flags.js";
import { statusFloorSeconds } from "./status-floor.js";

const VAULTSEED: ResourceType = {
  group: "ohmlab.fr",
  version: "v1alpha1",
  kind: "VaultSeed",
  plural: "vaultseeds",
  namespaced: true,
};
const MAIN = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const CRD_FILE = fileURLToPath(new URL("../../deploy/crds/ohmlab.fr_vaultseeds.yaml", import.meta.url));
const say = (l: string) => process.stderr.write(`[bench] ${l}\n`);
const sizes = (process.env["BENCH_SIZES"] ?? "0,1000,10000").split(",").map(Number);
const heapSnapshots = process.env["BENCH_HEAP_SNAPSHOTS"] === "1";
const statusFloor = process.env["BENCH_STATUS_FLOOR"] !== "0";
const seedSnapshot = process.env["BENCH_HEAP_SNAPSHOTS"] !== "0";
const HEAP_SUMMARY = fileURLToPath(new URL("./heap-summary.js", import.meta.url));
// The operator runs as the chart ships it (bench/shipped-flags.ts: BENCH_MEMORY_LIMIT, BENCH_NODE_FLAGS).
const shipped = shippedFlags();
const heapFlags = shipped.flags;
// BENCH_BAO_NO_DEFAULT_POLICY=1: the operator's OpenBao role gives tokens without the `default`
// policy, which costs OpenBao CPU on every request (the floor's root token has no policies at all).
const noDefaultPolicy = process.env["BENCH_BAO_NO_DEFAULT_POLICY"] === "1";

/** Mostly cheap templates; 1 % bcrypt and 1 % age (both slow by design), 10 % references. */
function seedSpec(ns: string, i: number): Record<string, unknown> {
  const data: Record<string, unknown> = {
    user: `svc-${i}`,
    password: "<random:32>",
    apiKey: "<hex:40>",
    id: "<uuid>",
    webhook: "",
  };
  if (i % 100 === 1) data["passwordHash"] = "<bcrypt:password>";
  if (i % 100 === 2) data["age"] = { secret: "<age:secret>", public: "<age:public>" };
  if (i % 10 === 3 && i > 10) data["upstream"] = `<ref:secret/${ns}/p${pad(i - 10)}#password>`;
  return { path: `secret/${ns}/p${pad(i)}`, data };
}
const pad = (i: number) => String(i).padStart(6, "0");

async function metrics(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}
const sum = (m: Map<string, number>, prefix: string, filter: (k: string) => boolean = () => true) =>
  [...m].filter(([k]) => k.startsWith(prefix) && filter(k)).reduce((a, [, v]) => a + v, 0);

/** VmHWM is the process's peak resident set so far, VmRSS its resident set now. */
function rssMiB(pid: number, field: "VmHWM" | "VmRSS" | "RssFile" = "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
}
const peakRssMiB = (pid: number) => rssMiB(pid, "VmHWM");
const currentRssMiB = (pid: number) => rssMiB(pid, "VmRSS");

/** Resolves once the operator's /readyz answers 200: its caches are synced. */
function waitReady(port: number): Promise<void> {
  return waitFor(
    "the operator to be ready",
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      } catch {
        return false;
      }
    },
    10 * 60_000,
  );
}

interface AuditCount {
  reads: number;
  writes: number;
  other: number;
}
/** Counts the responses OpenBao logged for KV paths under `prefix` since byte `from`. */
function auditSince(file: string, from: number, prefix: string): AuditCount {
  const buf = readFileSync(file).subarray(from).toString("utf8");
  const c: AuditCount = { reads: 0, writes: 0, other: 0 };
  for (const line of buf.split("\n")) {
    if (!line.startsWith('{"')) continue;
    const e = JSON.parse(line) as { type: string; request?: { operation?: string; path?: string } };
    if (e.type !== "response" || !e.request?.path?.startsWith(prefix)) continue;
    if (e.request.operation === "read") c.reads++;
    else if (
      e.request.operation === "create" ||
      e.request.operation === "update" ||
      e.request.operation === "delete"
    )
      c.writes++;
    else c.other++;
  }
  return c;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Asks the operator for a heap snapshot (--heapsnapshot-signal) and waits until it is written. */
async function heapSnapshot(child: ChildProcess, port: number, dir: string, label: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  child.kill("SIGUSR2");
  let file: string | undefined;
  await waitFor(
    `the ${label} heap snapshot`,
    async () => {
      file = readdirSync(dir).find((f) => f.endsWith(".heapsnapshot") && !before.has(f));
      return file !== undefined;
    },
    10 * 60_000,
  );
  // V8 writes the snapshot on the main thread: once the file exists, an answer from /metrics can
  // only come after the write is complete. (A kept-alive connection may have timed out meanwhile.)
  await waitFor(
    "the operator to answer after the heap snapshot",
    () =>
      metrics(port).then(
        () => true,
        () => false,
      ),
    10 * 60_000,
  );
  renameSync(join(dir, file!), join(dir, `${label}.heapsnapshot`));
  say(`heap snapshot: ${join(dir, `${label}.heapsnapshot`)}`);
  return join(dir, `${label}.heapsnapshot`);
}

interface HeapShare {
  /** What the heap snapshot reaches in all, MiB. */
  reachable: number;
  /** Retained by the informers' stores (the cached objects) and their owner index, MiB. */
  informer: number;
  /** Retained by the vault target's own per-key state (reconciler maps, read cache, ref graph), MiB. */
  vault: number;
}

/** The informer caches' retained share of a heap snapshot, from `heap-summary` (a process of its own). */
function heapShare(file: string, n: number): HeapShare {
  const out = execFileSync(process.execPath, ["--max-old-space-size=4096", HEAP_SUMMARY, file, String(n)], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  const mibOf = (re: RegExp) => Number(re.exec(out)?.[1] ?? Number.NaN);
  return {
    reachable: mibOf(/([\d.]+) MiB reachable/),
    informer:
      mibOf(/informer cache: objects[^:]*: ([\d.]+) MiB/) +
      (mibOf(/informer cache: owner index: ([\d.]+) MiB/) || 0),
    vault: mibOf(/vault target per-key state[^:]*: ([\d.]+) MiB/),
  };
}

/**
 * Where the first seed's worker time went, from the operator's own counters: the reconciles' total
 * (worker-seconds), OpenBao's share of it by operation, and the API server requests made meanwhile.
 */
function breakdown(m: Map<string, number>) {
  const vault = (k: string) => k.includes('target="vault"');
  const byOp = (op: string) =>
    sum(m, "ohmlab_backend_request_duration_seconds_sum", (k) => vault(k) && k.includes(`operation="${op}"`));
  const api = (method: string) =>
    sum(m, "rest_client_requests_total", (k) => k.includes(`method="${method}"`));
  return {
    reconciles: sum(m, 'controller_runtime_reconcile_total{controller="vaultseed"'),
    reconcileSeconds: sum(m, 'controller_runtime_reconcile_time_seconds_sum{controller="vaultseed"'),
    baoSeconds: sum(m, "ohmlab_backend_request_duration_seconds_sum", vault),
    baoRead: byOp("read"),
    baoWrite: byOp("write"),
    baoMetadata: byOp("metadata"),
    apiPatch: api("PATCH"),
    apiPost: api("POST"),
    apiPut: api("PUT"),
    apiGet: api("GET"),
    // Every login asks the TokenRequest API for a JWT: a POST, but no write to any object.
    logins: sum(m, 'ohmlab_backend_requests_total{target="vault",operation="login"'),
  };
}

/**
 * BENCH_PROC_HOOK=CMD runs `CMD PID PHASE PORT` while the operator is alive at each point its memory
 * is read (ready-N, seeded-N, quiet-N; PORT serves its /metrics, V8's heap spaces among them): a
 * way to look at its /proc (smaps, pagemap) at the moment the table's figures are taken. The
 * operator keeps running meanwhile.
 */
function procHook(pid: number, phase: string, port: number): void {
  const hook = process.env["BENCH_PROC_HOOK"];
  if (hook)
    execFileSync(hook, [String(pid), phase, String(port)], { stdio: ["ignore", "inherit", "inherit"] });
}

function startOperator(configPath: string, kubeconfig: string, cwd: string): ChildProcess {
  const flags = [...heapFlags, ...(heapSnapshots || seedSnapshot ? ["--heapsnapshot-signal=SIGUSR2"] : [])];
  const args = [...flags, MAIN, "run", "--config", configPath, "--kubeconfig", kubeconfig];
  const child = spawn(process.execPath, args, {
    cwd,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, ...shipped.env, LOG_LEVEL: "warn" },
  });
  process.once("exit", () => child.kill("SIGKILL"));
  return child;
}

async function stopOperator(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

/** Reconciles the vault target runs at once in this bench (its config's concurrency). */
const CONCURRENCY = 8;

async function runSize(
  n: number,
  client: KubeClient,
  kubeconfig: string,
  bao: { addr: string; rootToken: string },
  auditFile: string,
  dir: string,
  procs: (operatorPid: number | undefined) => Record<string, number | undefined>,
) {
  const baoAddr = bao.addr;
  // CPU seconds of every process by phase (bench/cpu-ledger.ts), for n > 0.
  const phases: PhaseCpu[] = [];
  const sample = (operatorPid?: number) => sampleCpu(procs(operatorPid));
  const record = (phase: string, from: CpuSample, operatorPid?: number) => {
    if (n > 0) phases.push(phaseCpu(phase, from, sample(operatorPid)));
  };
  const ns = `bench-${n}`;
  await client.apply(
    NAMESPACE,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
    { fieldManager: "bench" },
  );
  if (n > 0) say(`creating ${n} VaultSeeds in ${ns}...`);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        const i = next++;
        await client.create(VAULTSEED, {
          apiVersion: "ohmlab.fr/v1alpha1",
          kind: "VaultSeed",
          metadata: { name: `s${pad(i)}`, namespace: ns },
          spec: seedSpec(ns, i),
        });
      }
    }),
  );
  say(`created in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // A port free now and below the ephemeral range (a random one collided with an outgoing connection).
  const port = await freePort();
  const configPath = join(dir, `operator-${n}.yaml`);
  writeFileSync(
    configPath,
    `leaderElection: { enabled: false }
probes: { port: ${port}, host: 127.0.0.1 }
logLevel: warn
targets:
  vault:
    namespaces: [${ns}]
    concurrency: ${CONCURRENCY}
    resyncInterval: 10m
    backend:
      address: ${baoAddr}
      allowHttp: true
      auth:
        kubernetes: { role: bench, audience: vault, serviceAccount: { namespace: platform-operator-system, name: bench } }
`,
  );

  // The floor: the same per-path requests from a plain client, nothing else running.
  const floor = (n: number, run: string) =>
    n === 0
      ? Promise.resolve(0)
      : kvFloorSeconds({
          addr: baoAddr,
          token: bao.rootToken,
          prefix: `secret/floor-${run}-${n}`,
          paths: n,
          concurrency: CONCURRENCY,
        });
  const floorBeforeCpu = sample();
  const floorBefore = await floor(n, "a");
  record(PHASE.floorBefore, floorBeforeCpu);

  // First full seed.
  const auditStart = statSync(auditFile).size;
  const seedStartCpu = sample();
  let op = startOperator(configPath, kubeconfig, dir);
  const t1 = performance.now();
  await waitReady(port);
  // Process start, cache sync and CRD check: a fixed cost the floor (a warm client) does not pay.
  const readySeconds = (performance.now() - t1) / 1000;
  const readyRss = currentRssMiB(op.pid!);
  const readyCpu = cpuSeconds(op.pid!);
  // The part of the resident set that is the node binary's own pages (code, read-only data), the
  // same for any program node runs: the rest is the operator's.
  const readyFileRss = rssMiB(op.pid!, "RssFile");
  procHook(op.pid!, `ready-${n}`, port);
  await waitFor(
    "the first seed",
    async () => {
      try {
        const m = await metrics(port);
        const created = sum(m, 'ohmlab_writes_total{target="vault",action="create-path"}');
        const depth = sum(m, 'workqueue_depth{name="vaultseed"}');
        const active = sum(m, 'controller_runtime_active_workers{controller="vaultseed"}');
        return created >= n && depth === 0 && active === 0;
      } catch {
        return false;
      }
    },
    30 * 60_000,
  );
  const seedSeconds = (performance.now() - t1) / 1000;
  // From before the operator's start, like seedSeconds: its start-up is part of the seed.
  record(PHASE.seed, seedStartCpu, op.pid);
  const seedCpu = cpuSeconds(op.pid!) - readyCpu;
  const seedBreakdown = breakdown(await metrics(port));
  const seedAudit = auditSince(auditFile, auditStart, `secret/`);
  const list = await client.list(VAULTSEED, { namespace: ns, limit: 100_000 });
  const ready = list.items.filter((o) =>
    ((o["status"] as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some(
      (c) => c.type === "Ready" && c.status === "True",
    ),
  ).length;
  const seedRss = peakRssMiB(op.pid!);
  procHook(op.pid!, `seeded-${n}`, port);
  const afterSeedRss = currentRssMiB(op.pid!);
  const heap =
    heapSnapshots || seedSnapshot ? heapShare(await heapSnapshot(op, port, dir, `seed-${n}`), n) : undefined;
  await stopOperator(op);

  // The floor after the seed (the one before it ran above): together they bracket the seed, so
  // load that rises or falls meanwhile on a shared machine moves both sides of the ratio.
  const floorAfterCpu = sample();
  const floorAfter = await floor(n, "b");
  record(PHASE.floorAfter, floorAfterCpu);
  const floorSeconds = (floorBefore + floorAfter) / 2;
  if (n > 0)
    say(
      `floor: ${n} paths by a plain client in ${floorBefore.toFixed(1)} s before the seed, ${floorAfter.toFixed(1)} s after`,
    );
  // The API server's floor: as many first statuses (the seeded objects' own) applied by a plain
  // client at the same concurrency, on copies in a namespace of their own. BENCH_STATUS_FLOOR=0 skips it.
  let statusSeconds: number | undefined;
  if (n > 0 && statusFloor) {
    const floorNs = `${ns}-status`;
    await client.apply(
      NAMESPACE,
      { apiVersion: "v1", kind: "Namespace", metadata: { name: floorNs } },
      { fieldManager: "bench" },
    );
    let statusStartCpu: CpuSample | undefined;
    statusSeconds = await statusFloorSeconds({
      client,
      type: VAULTSEED,
      namespace: floorNs,
      n,
      concurrency: CONCURRENCY,
      object: (i) => ({
        spec: seedSpec(floorNs, i),
        status: (list.items[i % list.items.length]!["status"] ?? {}) as Record<string, unknown>,
      }),
      onStart: () => {
        statusStartCpu = sample();
      },
    });
    record(PHASE.statusFloor, statusStartCpu!);
    say(`status floor: ${n} first statuses applied by a plain client in ${statusSeconds.toFixed(1)} s`);
  }

  // Quiet pass: a fresh process reconciles every object once; nothing should be written anywhere.
  const auditQuiet = statSync(auditFile).size;
  const rvBefore = new Map(list.items.map((o) => [o.metadata.name, o.metadata.resourceVersion]));
  op = startOperator(configPath, kubeconfig, dir);
  let passStart = 0;
  await waitReady(port);
  const quietStartCpu = cpuSeconds(op.pid!);
  const quietStartSample = sample(op.pid);
  await waitFor(
    "the quiet pass",
    async () => {
      try {
        const m = await metrics(port);
        const done = sum(m, 'controller_runtime_reconcile_total{controller="vaultseed"');
        if (done > 0 && passStart === 0) passStart = performance.now();
        return (
          done >= n &&
          sum(m, 'workqueue_depth{name="vaultseed"}') === 0 &&
          sum(m, 'controller_runtime_active_workers{controller="vaultseed"}') === 0
        );
      } catch {
        return false;
      }
    },
    30 * 60_000,
  );
  const quietSeconds = n === 0 ? 0 : (performance.now() - passStart) / 1000;
  const quietCpu = cpuSeconds(op.pid!) - quietStartCpu;
  record(PHASE.quiet, quietStartSample, op.pid);
  const m = await metrics(port);
  // Every login asks the TokenRequest API for a JWT: a POST, but no write to any object.
  const logins = sum(m, 'ohmlab_backend_requests_total{target="vault",operation="login"');
  const apiWrites =
    sum(m, "rest_client_requests_total", (k) => /method="(POST|PUT|PATCH|DELETE)"/.test(k)) - logins;
  const quietAudit = auditSince(auditFile, auditQuiet, `secret/`);
  const quietRss = peakRssMiB(op.pid!);
  procHook(op.pid!, `quiet-${n}`, port);
  if (heapSnapshots) await heapSnapshot(op, port, dir, `quiet-${n}`);
  await stopOperator(op);
  const after = await client.list(VAULTSEED, { namespace: ns, limit: 100_000 });
  const changed = after.items.filter((o) => rvBefore.get(o.metadata.name) !== o.metadata.resourceVersion);
  const changedObjects = changed.length;
  if (process.env["BENCH_DEBUG"] && changed[0]) {
    const name = changed[0].metadata.name;
    say(`before: ${JSON.stringify(list.items.find((o) => o.metadata.name === name)?.["status"])}`);
    say(`after:  ${JSON.stringify(changed[0]["status"])}`);
  }

  return {
    n,
    seedSeconds,
    readySeconds,
    statusSeconds,
    floorSeconds,
    floorBefore,
    floorAfter,
    seedCpu,
    ready,
    seedReadsPerPath: n === 0 ? 0 : seedAudit.reads / n,
    seedWritesPerPath: n === 0 ? 0 : seedAudit.writes / n,
    seedBreakdown,
    quietSeconds,
    quietCpu,
    quietReadsPerPath: n === 0 ? 0 : quietAudit.reads / n,
    quietBaoWrites: quietAudit.writes,
    quietApiWrites: apiWrites,
    changedObjects,
    peakRss: Math.max(seedRss, quietRss),
    readyRss,
    readyFileRss,
    seedRss,
    afterSeedRss,
    quietRss,
    heap,
    phases,
  };
}

const cp = await startControlPlane({ log: (l) => say(l) });
const dir = makeTempDir("bench-vault");
const auditFile = join(dir, "audit.log");
const bao = await startDevOpenBao({ auditFile });
try {
  // The set-up client fills the server; the default 20 qps would make that take minutes.
  const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "bench", {
    rateLimit: { qps: 1000, burst: 1000 },
  });
  await client.apply(CUSTOM_RESOURCE_DEFINITION, parse(readFileSync(CRD_FILE, "utf8")) as KubeObject, {
    fieldManager: "bench",
    force: true,
  });
  await client.apply(
    NAMESPACE,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "platform-operator-system" } },
    { fieldManager: "bench" },
  );
  await client.apply(
    SERVICE_ACCOUNT,
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "bench", namespace: "platform-operator-system" },
    },
    { fieldManager: "bench" },
  );
  await configureKubernetesAuth(
    { addr: bao.addr, rootToken: bao.rootToken },
    { server: cp.server, caPem: cp.caPem, kubeconfigPath: cp.kubeconfigPath },
    {
      role: "bench",
      serviceAccount: "bench",
      namespace: "platform-operator-system",
      audience: "vault",
      policies: ["bench"],
      policyHcl: { bench: `path "secret/*" { capabilities = ["create", "read", "update", "delete"] }` },
      noDefaultPolicy: noDefaultPolicy,
    },
  );
  await baoCall(bao.addr, bao.rootToken, "GET", "sys/health");
  for (let i = 0; i < 50; i++) {
    client.resources.refresh();
    if (await client.resources.find("ohmlab.fr/v1alpha1", "VaultSeed")) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  // The control plane's processes by name (it runs no controller manager here), and OpenBao's.
  const procs = (operatorPid: number | undefined): Record<string, number | undefined> => {
    const byName = new Map(cp.pids().map((pid) => [readFileSync(`/proc/${pid}/comm`, "utf8").trim(), pid]));
    return {
      [OPERATOR]: operatorPid,
      [OPENBAO]: bao.pid(),
      [APISERVER]: byName.get("kube-apiserver"),
      [ETCD]: byName.get("etcd"),
    };
  };
  const rows = [];
  for (const n of sizes) {
    const r = await runSize(n, client, cp.kubeconfigPath, bao, auditFile, dir, procs);
    // Printed as soon as known, so a later failure does not lose it.
    say(`${n} objects: ${JSON.stringify(r)}`);
    rows.push(r);
  }
  const header = [
    "objects",
    "first seed (operator CPU)",
    `floor: plain client, ${CONCURRENCY} at once (before, after)`,
    "seed ÷ floor",
    "from ready ÷ floor",
    "Ready",
    "quiet pass (operator CPU)",
    "OpenBao reads/path (quiet)",
    "OpenBao writes (quiet)",
    "API writes (quiet)",
    "objects changed (quiet)",
    "peak RSS",
  ];
  const table = rows.map((r) => [
    r.n.toLocaleString("en-US"),
    `${r.seedSeconds.toFixed(1)} s (${r.seedCpu.toFixed(1)} s)`,
    r.n === 0
      ? "-"
      : `${r.floorSeconds.toFixed(1)} s (${r.floorBefore.toFixed(1)}, ${r.floorAfter.toFixed(1)})`,
    r.n === 0 ? "-" : `${(r.seedSeconds / r.floorSeconds).toFixed(2)}×`,
    r.n === 0
      ? "-"
      : `${((r.seedSeconds - r.readySeconds) / r.floorSeconds).toFixed(2)}× (ready after ${r.readySeconds.toFixed(1)} s)`,
    String(r.ready),
    `${r.quietSeconds.toFixed(1)} s (${r.quietCpu.toFixed(1)} s)`,
    r.n === 0 ? "-" : r.quietReadsPerPath.toFixed(2),
    String(r.quietBaoWrites),
    String(r.quietApiWrites),
    String(r.changedObjects),
    `${r.peakRss.toFixed(0)} MiB`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  process.stdout.write(
    `\nVaultSeed benchmark (real OpenBao ${bao.version}${noDefaultPolicy ? ", the operator's tokens without the default policy" : ""}, real kube-apiserver; OpenBao requests from its audit log)\n`,
  );
  process.stdout.write(`${line(header)}\n|${widths.map((w) => "-".repeat(w + 2)).join("|")}|\n`);
  for (const row of table) process.stdout.write(`${line(row)}\n`);
  const mib = (v: number) => `${v.toFixed(0)} MiB`;
  const perPath = (seconds: number, n: number) => ((seconds * 1000) / n).toFixed(0);
  const memHeader = [
    "objects",
    "RSS ready, idle (of it file-backed)",
    "peak RSS, first seed",
    "RSS after seed",
    "peak RSS, quiet pass",
    "heap after seed (informer cache, vault state)",
  ];
  const memRows = rows.map((r) => [
    r.n.toLocaleString("en-US"),
    `${mib(r.readyRss)} (${mib(r.readyFileRss)})`,
    mib(r.seedRss),
    mib(r.afterSeedRss),
    mib(r.quietRss),
    r.heap
      ? `${r.heap.reachable.toFixed(1)} MiB (${r.heap.informer.toFixed(1)} MiB, ${r.heap.vault.toFixed(1)} MiB)`
      : "-",
  ]);
  const memWidths = memHeader.map((h, i) => Math.max(h.length, ...memRows.map((row) => row[i]!.length)));
  const memLine = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(memWidths[i]!)).join(" | ")} |`;
  const flagNote = `, ${shipped.note}`;
  process.stdout.write(`\nOperator memory (VmRSS / VmHWM of the operator process${flagNote})\n`);
  process.stdout.write(`${memLine(memHeader)}\n|${memWidths.map((w) => "-".repeat(w + 2)).join("|")}|\n`);
  for (const row of memRows) process.stdout.write(`${memLine(row)}\n`);
  for (const r of rows) {
    process.stdout.write(
      `first seed of ${r.n}: ${r.seedReadsPerPath.toFixed(2)} reads and ${r.seedWritesPerPath.toFixed(2)} writes per path\n`,
    );
    if (r.statusSeconds !== undefined)
      process.stdout.write(
        `  the API server's floor: ${r.n} first statuses applied by a plain client, ${CONCURRENCY} at once, in ` +
          `${r.statusSeconds.toFixed(1)} s; the seed ÷ it ${(r.seedSeconds / r.statusSeconds).toFixed(2)}×\n`,
      );
    const b = r.seedBreakdown;
    if (r.n > 0)
      process.stdout.write(
        `  worker time ${b.reconcileSeconds.toFixed(1)} s over ${b.reconciles} reconciles; OpenBao ${b.baoSeconds.toFixed(1)} s ` +
          `(read ${b.baoRead.toFixed(1)}, write ${b.baoWrite.toFixed(1)}, metadata ${b.baoMetadata.toFixed(1)}); ` +
          `API requests ${b.apiPatch} PATCH, ${b.apiPost} POST, ${b.apiPut} PUT, ${b.apiGet} GET; ` +
          `per path ${perPath(b.reconcileSeconds, r.n)} ms of worker time, ${perPath(b.baoSeconds, r.n)} ms of it OpenBao, ` +
          `the floor's ${perPath(r.floorSeconds * CONCURRENCY, r.n)} ms\n`,
      );
    // Status writes are server-side applies (PATCH) or updates (PUT); the Events the runtime records
    // are creates (POST), as are the logins' token requests, counted apart.
    if (r.n > 0)
      process.stdout.write(
        `  API writes per new object: ${((b.apiPatch + b.apiPut) / r.n).toFixed(2)} status writes (PATCH, PUT), ` +
          `${((b.apiPost - b.logins) / r.n).toFixed(2)} creates (Events); ${b.logins} token requests for logins\n`,
      );
    const bounds = seedBounds(r.phases);
    if (r.n > 0 && bounds) process.stdout.write(boundLines(r.n, r.seedSeconds, r.floorSeconds, bounds));
  }
  for (const r of rows) {
    if (r.phases.length > 0) process.stdout.write(cpuTable(r.n, r.phases));
  }
  client.close();
} finally {
  await bao.stop();
  await cp.stop();
}
