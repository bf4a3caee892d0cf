import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeClient } from "../runtime/client.js";
import type { ClusterRef } from "../targets/openbao/identity.js";
import { trackChild } from "../testenv/processes.js";
import { describeFormation, formed, observeFormation } from "./openbao-formation.js";
import { prettyLines } from "./pretty-log.js";

const MAIN = fileURLToPath(new URL("./main.js", import.meta.url));

/**
 * The openbao target of the local default, as its own `platform-operator run` process inside the
 * node's network with the cluster's DNS: it reaches OpenBao pods by their Service names, as it does
 * in a cluster (the host cannot resolve those names). Its log goes through the same readable form
 * as the rest of `npm start`. Returns its stop.
 */
export async function startOpenBaoTargetInNode(opts: {
  inCluster: (argv: string[]) => string[];
  kubeconfigPath: string;
  dir: string;
  operatorNamespace: string;
  namespaces: string[];
  /** More top-level sections of its operator.yaml (its webhook). */
  extraConfig?: string;
}): Promise<() => Promise<void>> {
  const configPath = join(opts.dir, "operator-openbao.yaml");
  await writeFile(
    configPath,
    `# Written by 'platform-operator dev': the openbao target, run inside the local node's network.
leaderElection:
  enabled: true
  namespace: ${opts.operatorNamespace}
probes: { port: 0, host: 127.0.0.1 }
${opts.extraConfig ?? ""}targets:
  openbao:
    namespaces: [${opts.namespaces.join(", ")}]
`,
  );
  const argv = opts.inCluster([
    process.execPath,
    MAIN,
    "run",
    "--config",
    configPath,
    "--kubeconfig",
    opts.kubeconfigPath,
  ]);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child, "openbao target (platform-operator run)");
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pretty = prettyLines();
  pretty.pipe(process.stdout);
  child.stdout!.pipe(pretty);
  child.stderr!.pipe(process.stderr);
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    // `run` stops within 20 s by design; past that it is abandoned like any stuck process.
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    await exited;
    clearTimeout(timer);
  };
}

/**
 * Prints a line each time the cluster's state changes (phase, initialization, ready voters, Raft
 * voters as OpenBao lists them, the active leader, its pods), and once when it has formed. Returns
 * its stop.
 */
export function watchFormation(
  client: KubeClient,
  ref: ClusterRef,
  say: (line: string) => void,
  appliedAt: number,
  everyMs = 2000,
): () => Promise<void> {
  let stopped = false;
  let last = "";
  let announced = false;
  let wake: () => void = () => {};
  const loop = (async () => {
    while (!stopped) {
      try {
        const f = await observeFormation(client, ref, { withPeers: true });
        const line = describeFormation(ref, f);
        if (line !== last) say(line);
        last = line;
        if (!announced && formed(f)) {
          announced = true;
          say(
            `openbao ${ref.namespace}/${ref.name} formed: ${f.desired} initialized Raft voters, ` +
              `${((Date.now() - appliedAt) / 1000).toFixed(0)} s after the sample was applied`,
          );
        }
      } catch (e) {
        const line = `openbao ${ref.namespace}/${ref.name}: cannot observe yet (${(e as Error).message})`;
        if (line !== last) say(line);
        last = line;
      }
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, everyMs);
      });
    }
  })();
  return async () => {
    stopped = true;
    wake();
    await loop;
  };
}
