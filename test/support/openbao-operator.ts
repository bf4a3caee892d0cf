import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "../../src/testenv/exec.js";
import { trackChild } from "../../src/testenv/processes.js";
import { eventually } from "./kube.js";
import type { NodeNamespace } from "./node.js";

// The operator under test as a real process (`platform-operator run`), started like an in-cluster
// one: inside the node's network namespace with the cluster DNS, so it reaches OpenBao pods by
// their Service names exactly as it would in a cluster.

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
// Both of the target's CRDs, as the chart installs them: the restore controller watches OpenBaoRestores,
// and the operator starts no controller before every informer has listed its kind.
const CRDS = ["openbao.org_openbaoclusters.yaml", "openbao.org_openbaorestores.yaml"].map((f) =>
  fileURLToPath(new URL(`../../../deploy/crds/${f}`, import.meta.url)),
);

export async function installOpenBaoCrd(ctx: Pick<NodeNamespace, "kubectl">): Promise<void> {
  for (const crd of CRDS) await ctx.kubectl(["apply", "--server-side", "--force-conflicts", "-f", crd]);
  // Several test files may create the CRD at once; right after creation it has no conditions yet,
  // which `kubectl wait` reports as an error instead of waiting, so the condition is polled.
  for (const name of ["openbaoclusters.openbao.org", "openbaorestores.openbao.org"])
    await poll(
      async () => {
        const out = await ctx.kubectl([
          "get",
          `crd/${name}`,
          "-o",
          'jsonpath={.status.conditions[?(@.type=="Established")].status}',
        ]);
        return out.trim() === "True" ? true : undefined;
      },
      120_000,
      `the ${name} CRD to be established`,
    );
}

export interface OperatorProcess {
  /** Everything the process printed so far (JSON log lines). */
  output(): string;
  probePort: number;
  /** The /metrics text, scraped from inside the node's network. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
  /** SIGKILL: no shutdown, no Lease release, whatever was in flight is cut. */
  kill(): Promise<void>;
}

export async function startOpenBaoOperator(
  ctx: NodeNamespace,
  section: Record<string, string> = {},
  /** Another build's cli/main.js (an earlier release, for migration tests); this one's by default. */
  main: string = MAIN,
  /** Whom the operator acts as: the node's admin by default; a ServiceAccount's kubeconfig to run as the chart's identity. */
  kubeconfigPath: string = ctx.node.kubeconfigPath,
): Promise<OperatorProcess> {
  const dir = mkdtempSync(join(tmpdir(), "openbao-op-"));
  const extra = Object.entries(section)
    .map(([k, v]) => `    ${k}: ${v}\n`)
    .join("");
  writeFileSync(
    join(dir, "operator.yaml"),
    `leaderElection: { enabled: false }
probes: { port: 0, host: 127.0.0.1 }
logLevel: debug
targets:
  openbao:
    namespaces: [${ctx.namespace}]
${extra}`,
  );
  const argv = ctx.node.inCluster([
    process.execPath,
    main,
    "run",
    "--config",
    join(dir, "operator.yaml"),
    "--kubeconfig",
    kubeconfigPath,
  ]);
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child, "openbao operator");
  let out = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  child.stderr!.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const probePort = await eventually(
    () => {
      const m = /"probePort":(\d+)/.exec(out);
      if (child.exitCode !== null) throw new Error(`operator exited early:\n${out}`);
      return m ? Number(m[1]) : undefined;
    },
    60_000,
    "the operator to start",
  );
  return {
    output: () => out,
    probePort,
    async metrics() {
      const [cmd, ...args] = ctx.node.inCluster([
        "/bin/busybox",
        "wget",
        "-qO-",
        `http://127.0.0.1:${probePort}/metrics`,
      ]);
      return (await runCommand(cmd!, args)).stdout;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 25_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The operator under test as a real process on a bare API server (no node, no pods): for what a
 * pass stores, refuses and reports before any pod runs. `extra` is YAML appended to the openbao
 * target's section (indented four spaces).
 */
export async function startOpenBaoOperatorOnApi(
  kubeconfigPath: string,
  namespace: string,
  extra = "",
): Promise<Omit<OperatorProcess, "kill">> {
  const dir = mkdtempSync(join(tmpdir(), "openbao-op-api-"));
  writeFileSync(
    join(dir, "operator.yaml"),
    `leaderElection: { enabled: false }
probes: { port: 0, host: 127.0.0.1 }
logLevel: debug
targets:
  openbao:
    namespaces: [${namespace}]
    pollInterval: 1s
    resyncInterval: 2s
${extra}`,
  );
  const child: ChildProcess = spawn(
    process.execPath,
    [MAIN, "run", "--config", join(dir, "operator.yaml"), "--kubeconfig", kubeconfigPath],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  trackChild(child, "openbao operator");
  let out = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  child.stderr!.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const probePort = await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`operator exited early:\n${out}`);
      const m = /"probePort":(\d+)/.exec(out);
      return m ? Number(m[1]) : undefined;
    },
    60_000,
    "the operator to start",
  );
  return {
    output: () => out,
    probePort,
    metrics: async () => (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text(),
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 25_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Like eventually, but checks at most once per `everyMs` (each check here spawns processes). */
export async function poll<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
  everyMs = 1000,
): Promise<T> {
  return eventually(
    async () => {
      const started = Date.now();
      try {
        return await check();
      } finally {
        const left = everyMs - (Date.now() - started);
        if (left > 0) await new Promise((r) => setTimeout(r, left));
      }
    },
    timeoutMs,
    what,
  );
}

/** Sum of a counter's samples whose labels include every given pair. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** API writes the operator made (every method but GET), from its own client metrics. */
export function apiWrites(text: string): number {
  let sum = 0;
  for (const method of ["POST", "PUT", "PATCH", "DELETE"])
    sum += metricSum(text, "rest_client_requests_total", { method });
  return sum;
}

/** Dry-run requests (dryRun=All) among those writes: they stored nothing. */
export function dryRunWrites(text: string): number {
  let sum = 0;
  for (const method of ["POST", "PUT", "PATCH", "DELETE"])
    sum += metricSum(text, "rest_client_dry_run_requests_total", { method });
  return sum;
}

/** Writes that reached storage: every write request but the dry runs. */
export function storedWrites(text: string): number {
  return apiWrites(text) - dryRunWrites(text);
}

export { runCommand };
