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
  const lines: LineWatch["lines"] = [];
  let stopped = false;
  let child: ChildProcess;
  // kubectl's watch ends on its own when the connection breaks (a loaded API server, a watch the
  // server timed out): it is started again, and lists the current state again first, so handlers
  // must take a line they have seen before. Without this a test waiting on a line hung until its
  // timeout.
  const start = (): void => {
    child = spawn(
      ctx.node.kubectl,
      ["--kubeconfig", ctx.node.kubeconfigPath, "-n", ctx.namespace, ...args, "--watch"],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    trackChild(child, "kubectl watch");
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
    child.once("exit", (code, signal) => {
      if (stopped) return;
      console.log(
        `[watch] kubectl get ${args.slice(0, 2).join(" ")} --watch ended (${code ?? signal}); started again`,
      );
      setTimeout(() => {
        if (!stopped) start();
      }, 1000).unref();
    });
  };
  start();
  return {
    lines,
    stop() {
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
