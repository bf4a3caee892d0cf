import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { baoCall, baoHealth } from "./baohttp.js";
import { baoBinary, ensureBinaries } from "./binaries.js";
import { BAO_DEFAULT_VERSION } from "./cache.js";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing } from "./processes.js";
import { makeTempDir, removeTempDir } from "./tempdirs.js";
import { waitUntil } from "./wait.js";

export interface RaftNode {
  id: string;
  addr: string;
  clusterAddr: string;
  dataDir: string;
  logPath: string;
  pid(): number | undefined;
  /** Stops this node only; its Raft data stays on disk. */
  stop(): Promise<void>;
  /** Starts a stopped node again; it comes back sealed until unseal() (as a real restart does). */
  start(): Promise<void>;
  unseal(): Promise<void>;
}

export interface RaftOpenBao {
  version: string;
  nodes: RaftNode[];
  addrs: string[];
  /** Address of the node initialised first, active until something changes leadership. */
  addr: string;
  rootToken: string;
  /** Shamir 1-of-1. */
  unsealKey: string;
  dir: string;
  /**
   * Starts one more node (of any pinned version, so one cluster can mix versions as a blue-green
   * upgrade does) that joins through `retry_join` and is unsealed. With `nonVoter` its config sets
   * `retry_join_as_non_voter`, which Autopilot respects: the node stays a non-voter until promoted.
   * `id` names its Raft node (default `node<index>`), e.g. as the operator names a pod.
   */
  addNode(opts: { version?: string; nonVoter?: boolean; id?: string }): Promise<RaftNode>;
  stop(): Promise<void>;
}

/** N OpenBao servers on loopback with real Raft storage, initialised, unsealed and joined. */
export async function startRaftOpenBao(opts: { nodes: number; version?: string }): Promise<RaftOpenBao> {
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1)
    throw new Error(`nodes must be >= 1, got ${opts.nodes}`);
  const binaries = await ensureBinaries();
  const binary = baoBinary(binaries, opts.version);
  const version = opts.version ?? BAO_DEFAULT_VERSION;
  const dir = makeTempDir("bao-raft");
  const nodes: RaftNode[] = [];
  let unsealKey = "";
  try {
    for (let i = 0; i < opts.nodes; i++) {
      nodes.push(await createNode(binary, version, dir, i, () => unsealKey, undefined));
    }
    await Promise.all(nodes.map((n) => n.start()));

    const leader = nodes[0]!;
    const init = await baoCall(leader.addr, undefined, "PUT", "sys/init", {
      secret_shares: 1,
      secret_threshold: 1,
    });
    unsealKey = init.keys_base64[0];
    const rootToken: string = init.root_token;
    await leader.unseal();
    await waitForHealth(leader.addr, [200], "active");

    // Autopilot promotes a joined node to voter only after it has been stable this long (default 10s).
    await baoCall(leader.addr, rootToken, "POST", "sys/storage/raft/autopilot/configuration", {
      server_stabilization_time: "1s",
      cleanup_dead_servers: false,
    });
    for (const node of nodes.slice(1)) {
      await baoCall(node.addr, undefined, "POST", "sys/storage/raft/join", { leader_api_addr: leader.addr });
      await node.unseal();
      await waitForHealth(node.addr, [429, 473], "standby");
    }
    await waitForVoters(leader.addr, rootToken, nodes.length);

    return {
      version,
      nodes,
      addrs: nodes.map((n) => n.addr),
      addr: leader.addr,
      rootToken,
      unsealKey,
      dir,
      async addNode(add) {
        const nodeBinary = baoBinary(binaries, add.version);
        const node = await createNode(
          nodeBinary,
          add.version ?? version,
          dir,
          nodes.length,
          () => unsealKey,
          { leaderAddrs: nodes.map((n) => n.addr), nonVoter: add.nonVoter === true },
          add.id,
        );
        nodes.push(node);
        await node.start();
        // retry_join answers the leader's challenge only once the node is unsealed, and the node takes
        // the key only after it fetched the challenge ("not initialized" until then).
        await waitUntil(
          async () => {
            await node.unseal();
            return true;
          },
          { what: `${node.id} to take its unseal key`, timeoutMs: 60_000, intervalMs: 250 },
        );
        await waitForHealth(node.addr, [429, 473], "standby");
        return node;
      },
      async stop() {
        await Promise.all(nodes.map((n) => n.stop()));
        removeTempDir(dir);
      },
    };
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    removeTempDir(dir);
    throw err;
  }
}

async function createNode(
  binary: string,
  version: string,
  root: string,
  index: number,
  unsealKey: () => string,
  joining: { leaderAddrs: string[]; nonVoter: boolean } | undefined,
  nodeId?: string,
): Promise<RaftNode> {
  const id = nodeId ?? `node${index}`;
  const nodeDir = join(root, id);
  const dataDir = join(nodeDir, "raft");
  await mkdir(dataDir, { recursive: true });
  const port = await freePort();
  const clusterPort = await freePort();
  const addr = `http://${LOOPBACK}:${port}`;
  const clusterAddr = `https://${LOOPBACK}:${clusterPort}`;
  const configPath = join(nodeDir, "config.hcl");
  const logPath = join(nodeDir, "bao.log");
  await writeFile(
    configPath,
    [
      `storage "raft" {`,
      `  path    = ${JSON.stringify(dataDir)}`,
      `  node_id = "${id}"`,
      // Production timings (election timeouts x5, autopilot every 10s) would make every test wait for
      // seconds; loopback latency allows the tightest settings.
      `  performance_multiplier       = 1`,
      `  autopilot_reconcile_interval = "1s"`,
      `  autopilot_update_interval    = "500ms"`,
      ...(joining ? retryJoinLines(joining) : []),
      `}`,
      `listener "tcp" {`,
      `  address         = "${LOOPBACK}:${port}"`,
      `  cluster_address = "${LOOPBACK}:${clusterPort}"`,
      // Client traffic stays on loopback; Raft traffic on the cluster port is TLS regardless.
      `  tls_disable     = true`,
      `}`,
      `api_addr     = "${addr}"`,
      `cluster_addr = "${clusterAddr}"`,
      `disable_mlock = true`,
      "",
    ].join("\n"),
  );

  let service: ServiceProcess | undefined;
  return {
    id,
    addr,
    clusterAddr,
    dataDir,
    logPath,
    pid: () => (service?.isRunning() ? service.pid : undefined),
    async stop() {
      await service?.stop();
    },
    async start() {
      if (service?.isRunning()) throw new Error(`${id} is already running`);
      const current = await startService({
        name: `bao-raft-${id}-${version}`,
        command: binary,
        args: ["server", `-config=${configPath}`],
        logPath,
        cwd: nodeDir,
        env: { ...process.env, HOME: nodeDir },
      });
      service = current;
      // Any answer at all means the listener is up; sealed (503) or uninitialised (501) is expected.
      await stopIfFailing(
        current,
        waitUntil(async () => (await baoHealth(addr)) > 0, {
          what: `${id} listener`,
          timeoutMs: 30_000,
          service: current,
        }),
      );
    },
    async unseal() {
      await baoCall(addr, undefined, "PUT", "sys/unseal", { key: unsealKey() });
    },
  };
}

function retryJoinLines(joining: { leaderAddrs: string[]; nonVoter: boolean }): string[] {
  return [
    ...(joining.nonVoter ? [`  retry_join_as_non_voter = true`] : []),
    ...joining.leaderAddrs.map((a) => `  retry_join { leader_api_addr = ${JSON.stringify(a)} }`),
  ];
}

async function waitForVoters(addr: string, token: string, count: number): Promise<void> {
  await waitUntil(
    async () => {
      const config = await baoCall(addr, token, "GET", "sys/storage/raft/configuration");
      const servers: Array<{ voter: boolean }> = config.data.config.servers;
      return servers.filter((s) => s.voter).length === count;
    },
    { what: `${count} Raft voters`, timeoutMs: 60_000, intervalMs: 250 },
  );
}

async function waitForHealth(addr: string, statuses: number[], what: string): Promise<void> {
  await waitUntil(async () => statuses.includes(await baoHealth(addr)), {
    what: `${addr} to become ${what}`,
    timeoutMs: 60_000,
    intervalMs: 200,
  });
}
