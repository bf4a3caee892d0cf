/**
 * Many-namespace benchmark: the openbao, gitlab and vault targets in one process, each watching 1,
 * 10, 50 and 200 namespaces of a real kube-apiserver, once with one watch per namespace and once
 * with one cluster-wide watch per kind. Prints, per case: the watches open, the connections to the
 * API server, the time until every target holds its Lease and every cache has synced, and the
 * process's heap and RSS growth. Run with `npm run bench:namespaces`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { crdFor } from "../src/apis/index.js";
import { startOperator } from "../src/cli/run.js";
import { applyAny } from "../src/runtime/apply.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import type { KubeObject } from "../src/runtime/types.js";
import { startControlPlane } from "../src/testenv/controlplane.js";
import { makeTempDir } from "../src/testenv/tempdirs.js";

const MiB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const NAMESPACE = { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false };
const KINDS = ["OpenBaoCluster", "OpenBaoRestore", "GitLabCore", "VaultSeed"];

function memory(): { heap: number; rss: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed / MiB, rss: m.rss / MiB };
}

async function run(
  kubeconfig: string,
  namespaces: string[],
  scope: "namespaces" | "cluster",
): Promise<string> {
  const dir = makeTempDir("bench-ns");
  const config = join(dir, "operator.yaml");
  const list = `[${namespaces.join(", ")}]`;
  writeFileSync(
    config,
    `leaderElection: { enabled: true, namespace: ${namespaces[0]}, leaseName: bench-${scope}-${namespaces.length} }
probes: { port: 0, host: 127.0.0.1 }
client: { watchScope: ${scope}, clusterWatchFrom: 1 }
targets:
  openbao: { namespaces: ${list} }
  gitlab: { namespaces: ${list} }
  vault:
    namespaces: ${list}
    backend: { address: "http://127.0.0.1:1", allowHttp: true, auth: { developmentToken: bench } }
`,
  );
  const before = memory();
  const started = performance.now();
  const op = await startOperator({
    configPath: config,
    kubeconfig,
    logStream: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  while (!op.managers.every((m) => m.isLeader && m.ready)) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - started) / 1000;
  const after = memory();
  const watches = op.managers.flatMap((m) => m.informerScopes()).reduce((n, x) => n + x.watches, 0);
  const connections = op.managers.reduce(
    (n, m) => n + Object.values(m.client.connections()).reduce((a, b) => a + b, 0),
    0,
  );
  await op.stop();
  return [
    String(namespaces.length).padStart(10),
    scope.padEnd(10),
    String(watches).padStart(7),
    String(connections).padStart(11),
    seconds.toFixed(1).padStart(8),
    `+${(after.heap - before.heap).toFixed(1)}`.padStart(9),
    `+${(after.rss - before.rss).toFixed(1)}`.padStart(8),
    (after.heap > before.heap && scope === "namespaces"
      ? (((after.heap - before.heap) * 1024) / watches).toFixed(1)
      : "-"
    ).padStart(13),
  ].join("  ");
}

async function main(): Promise<void> {
  const cp = await startControlPlane({ log: (l) => process.stderr.write(`${l}\n`) });
  const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "bench", {
    rateLimit: { qps: 1000, burst: 1000 },
  });
  try {
    for (const kind of KINDS)
      await applyAny(client, crdFor(kind) as unknown as KubeObject, { fieldManager: "bench", force: true });
    await new Promise((r) => setTimeout(r, 2000));
    const all: string[] = [];
    for (let i = 0; i < 200; i++) {
      const name = `bench-ns-${i}`;
      await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
      all.push(name);
    }
    console.log("namespaces  scope       watches  connections  ready s  heap MiB  rss MiB  KiB per watch");
    await run(cp.kubeconfigPath, all.slice(0, 1), "namespaces"); // warm-up: modules, first connections
    for (const n of [1, 10, 50, 200])
      for (const scope of ["namespaces", "cluster"] as const)
        console.log(await run(cp.kubeconfigPath, all.slice(0, n), scope));
  } finally {
    client.close();
    await cp.stop();
  }
}

await main();
