import { type ChildProcess, spawn } from "node:child_process";
import type { SharedNode } from "../../src/testenv/node/shared.js";
import { trackChild } from "../../src/testenv/processes.js";

/**
 * A small node script run inside the node's network (the test's fake servers and middleboxes), that
 * prints `port N` once it listens on the node's address. Its output stays readable, for the counts
 * such a script prints; `send` writes a line to its stdin, for the commands it takes.
 */
export interface NodeScript {
  /** host:port pods can reach (the node's own address). */
  address: string;
  output(): string;
  send(line: string): void;
  stop(): Promise<void>;
}

export async function startNodeScript(node: SharedNode, label: string, script: string): Promise<NodeScript> {
  const host = node.addresses.nodeIp;
  const argv = node.inCluster([process.execPath, "-e", script]);
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  trackChild(child, label);
  let out = "";
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${label} exited with ${code}`)));
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const m = /^port (\d+)$/m.exec(out);
      if (m) resolve(Number(m[1]));
    });
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    address: `${host}:${port}`,
    output: () => out,
    send(line) {
      child.stdin!.write(`${line}\n`);
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
