import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatDuration } from "../duration.js";
import { makeTempDir, removeTempDir } from "../tempdirs.js";
import { type NodeAddresses, nodeAddresses } from "./addresses.js";
import { inClusterCommand, type LocalNode, startNode } from "./node.js";

/** Environment variable naming the file through which test/run reports the shared node's state. */
export const NODE_STATE_VAR = "TESTENV_NODE_STATE";
/** Set to 0 to run the tests without a node (node tests then fail saying so). */
export const NODE_SWITCH_VAR = "TESTENV_NODE";

type NodeState =
  | { status: "starting" }
  | { status: "failed"; error: string }
  | {
      status: "ready";
      index: number;
      kubeconfigPath: string;
      server: string;
      caPem: string;
      dir: string;
      kubectl: string;
      ctr: string;
      containerdSocket: string;
      enter: string[];
      pids: Record<string, number>;
      startedInMs: number;
    };

export interface SharedNode {
  addresses: NodeAddresses;
  kubeconfigPath: string;
  server: string;
  caPem: string;
  dir: string;
  /** Path of the kubectl binary built with the node. */
  kubectl: string;
  /** ctr and containerd's socket, to import images into the running node. */
  ctr: string;
  containerdSocket: string;
  /** nsenter prefix that runs a command inside the node's network and mount namespaces. */
  enter: string[];
  /**
   * PEM of the public key the node's API server verifies ServiceAccount tokens with: what a relying
   * party inside the node (OpenBao's JWT auth) is given when it cannot fetch the issuer's JWKS.
   */
  serviceAccountPublicKeyPem: string;
  /** The node's component pids when it became ready. */
  pids: Record<string, number>;
  startedInMs: number;
  /** Argument vector running `argv` like an in-cluster client (node network, cluster DNS). */
  inCluster(argv: string[]): string[];
}

function writeState(path: string, state: NodeState): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(state));
  renameSync(`${path}.tmp`, path);
}

export interface RunningSharedNode {
  variables: Record<string, string>;
  /** Settles when the node is ready or has failed; never rejects. */
  settled: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the shared node in the background: test/run does not wait for it, so tests that do not
 * need a node start at once, and node tests wait in sharedNode() for the state file to say "ready".
 */
export function startSharedNode(log: (line: string) => void): RunningSharedNode {
  const dir = makeTempDir("node-state");
  const statePath = join(dir, "state.json");
  const variables = { [NODE_STATE_VAR]: statePath };
  if (process.env[NODE_SWITCH_VAR] === "0") {
    writeState(statePath, { status: "failed", error: `the node is switched off (${NODE_SWITCH_VAR}=0)` });
    return { variables, settled: Promise.resolve(), stop: async () => removeTempDir(dir) };
  }
  writeState(statePath, { status: "starting" });
  const started = Date.now();
  let node: LocalNode | undefined;
  const settled = startNode({ log }).then(
    (n) => {
      node = n;
      const startedInMs = Date.now() - started;
      writeState(statePath, {
        status: "ready",
        index: n.addresses.index,
        kubeconfigPath: n.kubeconfigPath,
        server: n.server,
        caPem: n.caPem,
        dir: n.dir,
        kubectl: n.binaries.kubectl,
        ctr: n.binaries.ctr,
        containerdSocket: n.containerdSocket,
        enter: n.enter,
        pids: n.pids(),
        startedInMs,
      });
      log(`node ready at ${n.server} in ${formatDuration(startedInMs)}`);
    },
    (err: unknown) => {
      const error = err instanceof Error ? err.message : String(err);
      writeState(statePath, { status: "failed", error });
      log(`node failed to start: ${error}`);
    },
  );
  return {
    variables,
    settled,
    async stop() {
      await settled;
      if (node) {
        const problems = await node.stop();
        if (problems.length > 0) log(`node teardown left: ${problems.join("; ")}`);
      }
      removeTempDir(dir);
    },
  };
}

/**
 * The node test/run started, once it is ready. Throws the node's own start error (for instance what
 * the machine lacks) when it failed, so every node test names the cause.
 */
export async function sharedNode(timeoutMs = 15 * 60_000): Promise<SharedNode> {
  const path = process.env[NODE_STATE_VAR];
  if (!path) {
    throw new Error(
      `${NODE_STATE_VAR} is not set: this test needs the shared node; run it through ` +
        "`node dist/test/run.js [files...]` (npm test), which starts it",
    );
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = JSON.parse(readFileSync(path, "utf8")) as NodeState;
    if (state.status === "failed") throw new Error(`the shared node is not available: ${state.error}`);
    if (state.status === "ready") {
      const { status: _s, index, ...rest } = state;
      const resolvConf = join(state.dir, "cluster-resolv.conf");
      return {
        ...rest,
        addresses: nodeAddresses(index),
        serviceAccountPublicKeyPem: readFileSync(join(state.dir, "pki", "sa.pub"), "utf8"),
        inCluster: (argv) => inClusterCommand(state.pids["namespaces"]!, resolvConf, argv),
      };
    }
    if (Date.now() > deadline)
      throw new Error(`the shared node did not start within ${formatDuration(timeoutMs)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
