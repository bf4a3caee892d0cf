import { type ChildProcess, spawn } from "node:child_process";
import { trackChild } from "../../src/testenv/processes.js";
import type { NodeNamespace } from "./node.js";

/**
 * A TCP server inside the node's network that accepts connections and never answers: an object
 * store endpoint that hangs, so a backup Job stays in flight (and holds the lock) for as long as a
 * test needs it.
 */
export interface Blackhole {
  /** host:port pods can reach (the node's own address). */
  address: string;
  stop(): Promise<void>;
}

export async function startBlackhole(ctx: NodeNamespace): Promise<Blackhole> {
  const host = ctx.node.addresses.nodeIp;
  const script =
    "const s=require('net').createServer(()=>{});" +
    `s.listen(0,'${host}',()=>console.log(s.address().port));`;
  const argv = ctx.node.inCluster([process.execPath, "-e", script]);
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
  trackChild(child, "blackhole");
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`blackhole exited with ${code}`)));
    child.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    address: `${host}:${port}`,
    async stop() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
