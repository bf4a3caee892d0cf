/**
 * Many-namespace benchmark: the openbao, gitlab and vault targets in one process, each watching 1,
 * 10, 50 and 200 namespaces of a real kube-apiserver (with the Gateway API's route kinds served, so
 * the openbao target watches those too), once with one watch per namespace and once with one
 * cluster-wide watch per kind. Prints, per case: the watches open, the connections to the API
 * server, the time until every target holds its Lease and every cache (optional ones too) has
 * synced, and the process's heap and RSS growth. Then what caching Secrets costs: 200 Secrets of a
 * few KiB, written by two field managers, in one informer that keeps managedFields (as the openbao
 * target's does) and in one that drops them. Run with `npm run bench:namespaces`.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { crdFor } from "../src/apis/index.js";
import { startOperator } from "../src/cli/run.js";
import { applyAny } from "../src/runtime/apply.js";
import { SECRET } from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import { Informer } from "../src/runtime/informer.js";
import { silentLogger } from "../src/runtime/log.js";
import type { KubeObject } from "../src/runtime/types.js";
import { startControlPlane } from "../src/testenv/controlplane.js";
import { makeTempDir } from "../src/testenv/tempdirs.js";
import { installGatewayRoutes } from "../test/support/gateway-routes.js";

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
  const settled = () =>
    op.managers.every((m) => m.isLeader && m.ready && m.informerScopes().every((i) => i.synced));
  while (!settled()) await new Promise((r) => setTimeout(r, 50));
  await Promise.all(op.managers.map((m) => m.discoverySettled()));
  const seconds = (performance.now() - started) / 1000;
  const after = memory();
  const informers = op.managers.flatMap((m) => m.informerScopes());
  const watches = informers.reduce((n, x) => n + x.watches, 0);
  const openbao = op.managers.find((m) => m.target === "openbao")!.informerScopes();
  const connections = op.managers.reduce(
    (n, m) => n + Object.values(m.client.connections()).reduce((a, b) => a + b, 0),
    0,
  );
  await op.stop();
  return [
    String(namespaces.length).padStart(10),
    scope.padEnd(10),
    String(informers.length).padStart(9),
    String(openbao.length).padStart(7),
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

const SECRETS = 200;
const SECRET_KEYS = 4;
const SECRET_VALUE_BYTES = 1024;

/**
 * 200 Secrets of 4 KiB values each (as base64, ~5.5 KiB), applied by one field manager and labelled
 * and annotated by a second one (an update), so each carries two managedFields entries, as a
 * Secret an operator applies and a person or tool later touches does.
 */
async function makeSecrets(client: KubeClient, namespace: string): Promise<void> {
  await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  for (let i = 0; i < SECRETS; i++) {
    const data: Record<string, string> = {};
    for (let k = 0; k < SECRET_KEYS; k++)
      data[`key-${k}`] = Buffer.from(randomBytes(SECRET_VALUE_BYTES)).toString("base64");
    const name = `s-${i}`;
    await applyAny(
      client,
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace, labels: { "app.kubernetes.io/name": "bench", index: String(i) } },
        type: "Opaque",
        data,
      } as KubeObject,
      { fieldManager: "bench-apply", force: true },
    );
    await client.mergePatch(SECRET, name, namespace, {
      metadata: { labels: { team: "bench" }, annotations: { "example.org/touched-by": "bench-edit" } },
    });
  }
}

/** Heap held by one synced informer over the Secrets, with or without their managedFields. */
async function secretCacheHeap(
  client: KubeClient,
  namespace: string,
  keepManagedFields: boolean,
): Promise<{ heap: number; objects: number; managedFieldsBytes: number; objectBytes: number }> {
  const before = memory();
  const inf = new Informer(client, SECRET, {
    namespaces: [namespace],
    keepManagedFields,
    log: silentLogger(),
  });
  inf.start();
  await inf.waitForSync();
  const after = memory();
  const objects = inf.list(namespace);
  const managedFieldsBytes = objects.reduce(
    (n, o) => n + JSON.stringify(o.metadata.managedFields ?? []).length,
    0,
  );
  const objectBytes = objects.reduce((n, o) => n + JSON.stringify(o).length, 0);
  await inf.stop();
  return { heap: after.heap - before.heap, objects: objects.length, managedFieldsBytes, objectBytes };
}

async function secretsCost(client: KubeClient): Promise<void> {
  const namespace = "bench-secrets";
  await makeSecrets(client, namespace);
  console.log(
    "\nSecrets cached  managedFields  heap MiB  KiB per Secret  JSON KiB per Secret  of it managedFields",
  );
  for (const keep of [true, false, true, false]) {
    const r = await secretCacheHeap(client, namespace, keep);
    console.log(
      [
        String(r.objects).padStart(14),
        (keep ? "kept" : "dropped").padEnd(13),
        `+${(r.heap).toFixed(2)}`.padStart(8),
        ((r.heap * 1024) / r.objects).toFixed(2).padStart(14),
        (r.objectBytes / 1024 / r.objects).toFixed(2).padStart(19),
        `${(r.managedFieldsBytes / r.objects).toFixed(0)} B`.padStart(19),
      ].join("  "),
    );
  }
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
    await installGatewayRoutes(client);
    console.log(
      "namespaces  scope       informers  openbao  watches  connections  ready s  heap MiB  rss MiB  KiB per watch",
    );
    await run(cp.kubeconfigPath, all.slice(0, 1), "namespaces"); // warm-up: modules, first connections
    for (const n of [1, 10, 50, 200])
      for (const scope of ["namespaces", "cluster"] as const)
        console.log(await run(cp.kubeconfigPath, all.slice(0, n), scope));
    await secretsCost(client);
  } finally {
    client.close();
    await cp.stop();
  }
}

await main();
