import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LocalNode } from "../src/testenv/node/node.js";
import { trackChild } from "../src/testenv/processes.js";
import { shippedFlags } from "./shipped-flags.js";

// The operator as the benches run it: the real `platform-operator run` process inside the node's
// network namespace with the cluster DNS, like an in-cluster operator, its probes on the node's side
// of the veth (the host reaches that address, nothing else can).

const MAIN = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

export interface OperatorInNode {
  child: ChildProcess;
  /** The node (JavaScript) process, for its memory figures. */
  pid: number;
  output(): string;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** The node process itself: nsenter, unshare and sh exec into it, but a fork on the way would hide it. */
export function nodePid(root: number): number {
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    try {
      if (readlinkSync(`/proc/${pid}/exe`) === process.execPath) return pid;
      for (const t of readdirSync(`/proc/${pid}/task`))
        queue.push(
          ...readFileSync(`/proc/${pid}/task/${t}/children`, "utf8")
            .trim()
            .split(/\s+/)
            .filter(Boolean)
            .map(Number),
        );
    } catch {
      // gone, or not ours to read
    }
  }
  throw new Error(`no node process under pid ${root}`);
}

export function memoryMiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
}

/**
 * Starts the operator for the openbao target in `namespaces`; `section` adds settings to the
 * target's section (e.g. resyncInterval). `dir` holds its configuration file.
 */
export async function startOperatorInNode(
  node: LocalNode,
  namespaces: string[],
  dir: string,
  section: Record<string, string> = {},
  label = "openbao operator (bench)",
): Promise<OperatorInNode> {
  const configPath = join(dir, "operator.yaml");
  const extra = Object.entries(section)
    .map(([k, v]) => `    ${k}: ${v}\n`)
    .join("");
  writeFileSync(
    configPath,
    `leaderElection: { enabled: false }
probes: { port: 0, host: ${node.addresses.nodeIp} }
logLevel: info
targets:
  openbao:
    namespaces: [${namespaces.join(", ")}]
${extra}`,
  );
  // The chart's heap flags (bench/shipped-flags.ts), then BENCH_OPERATOR_NODE_FLAGS: more node
  // flags for the operator, e.g. `--cpu-prof --cpu-prof-dir=DIR`.
  const shipped = shippedFlags();
  const flags = [
    ...shipped.flags,
    ...(process.env["BENCH_OPERATOR_NODE_FLAGS"] ?? "").split(" ").filter(Boolean),
  ];
  const argv = node.inCluster([
    process.execPath,
    ...flags,
    MAIN,
    "run",
    "--config",
    configPath,
    "--kubeconfig",
    node.kubeconfigPath,
  ]);
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...shipped.env },
  });
  trackChild(child, label);
  let out = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  child.stderr!.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + 60_000;
  let port: number | undefined;
  while (port === undefined) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the operator exited:\n${out}`);
    const m = /"probePort":(\d+)/.exec(out);
    if (m) port = Number(m[1]);
    else if (Date.now() > deadline) throw new Error(`the operator did not start within 60 s:\n${out}`);
    else await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    pid: nodePid(child.pid!),
    output: () => out,
    metrics: async () => (await fetch(`http://${node.addresses.nodeIp}:${port}/metrics`)).text(),
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
