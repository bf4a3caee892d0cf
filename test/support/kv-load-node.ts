import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { trackChild } from "../../src/testenv/processes.js";
import type { KvLoadReport } from "./kv-load.js";
import type { NodeNamespace } from "./node.js";
import { poll } from "./openbao-operator.js";

const KV_LOAD = fileURLToPath(new URL("./kv-load-process.js", import.meta.url));

/** One line of the load process's output: progress, its final report, or why it stopped. */
export type KvLine = { acknowledged?: number; report?: KvLoadReport; error?: string };

export interface NodeKvLoad {
  process: ChildProcess;
  lines: KvLine[];
  /** Stops the load (SIGTERM: it reads every acknowledged write back) and returns its report. */
  finish(): Promise<KvLoadReport>;
  /** SIGKILL, for a test's after() hook. */
  kill(): void;
}

/**
 * The KV load client (kv-load-process.ts) inside the node's network, writing and reading through
 * cluster `name`'s client Service on KV v2 mount `mount`, trusting the operator-managed CA. Resolves
 * once it has 20 acknowledged writes, so what follows happens under load.
 */
export async function startNodeKvLoad(
  ctx: NodeNamespace,
  name: string,
  token: string,
  mount = "load",
): Promise<NodeKvLoad> {
  const server = await ctx.getJson(`secret/${name}-tls-server`);
  const caPem = Buffer.from(server.data["ca.crt"], "base64").toString("utf8");
  const argv = ctx.node.inCluster([process.execPath, KV_LOAD]);
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      KV_ADDR: `https://${name}-public.${ctx.namespace}.svc:8200`,
      KV_MOUNT: mount,
      KV_CA: caPem,
      KV_TOKEN: token,
    },
  });
  trackChild(child, "kv load");
  const lines: KvLine[] = [];
  let partial = "";
  child.stdout!.on("data", (b: Buffer) => {
    const parts = (partial + b.toString("utf8")).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) if (line.trim()) lines.push(JSON.parse(line) as KvLine);
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  await poll(
    async () => ((lines.at(-1)?.acknowledged ?? 0) >= 20 ? true : undefined),
    60_000,
    "the load client writing",
  );
  return {
    process: child,
    lines,
    async finish() {
      child.kill("SIGTERM");
      await exited;
      const report = lines.find((l) => l.report)?.report;
      if (!report)
        throw new Error(`the load client gave no report (${lines.find((l) => l.error)?.error ?? "none"})`);
      return report;
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
