import { type ChildProcess, spawn } from "node:child_process";
import { trackChild } from "../../src/testenv/processes.js";
import type { NodeNamespace } from "./node.js";

// `kubectl get --watch` as a stream of lines, each stamped when it arrived: tests that must prove an
// order ("the peer left before the pod went", "one pod at a time") read what the API server
// reported as it happened, instead of reconstructing it afterwards from coarse timestamps.

export interface LineWatch {
  lines: { at: number; text: string }[];
  stop(): void;
}

export function watchLines(
  ctx: NodeNamespace,
  args: string[],
  onLine?: (text: string, at: number) => void,
): LineWatch {
  const child: ChildProcess = spawn(
    ctx.node.kubectl,
    ["--kubeconfig", ctx.node.kubeconfigPath, "-n", ctx.namespace, ...args, "--watch"],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  trackChild(child, "kubectl watch");
  const lines: LineWatch["lines"] = [];
  let partial = "";
  child.stdout!.on("data", (b: Buffer) => {
    const parts = (partial + b.toString("utf8")).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) {
      const at = Date.now();
      lines.push({ at, text });
      onLine?.(text, at);
    }
  });
  return {
    lines,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
