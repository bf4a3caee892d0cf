/**
 * Runtime benchmark: no-op reconciles per second through the work queue, and the memory an
 * informer cache takes for 10,000 ConfigMaps of about 1 KiB from a real kube-apiserver.
 * Run with `npm run bench:runtime` (node --expose-gc for steady RSS readings).
 */
import { randomBytes } from "node:crypto";
import { CONFIGMAP } from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import { Controller } from "../src/runtime/controller.js";
import { Informer } from "../src/runtime/informer.js";
import { silentLogger } from "../src/runtime/log.js";
import { startControlPlane } from "../src/testenv/controlplane.js";

const MiB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

async function reconcileThroughput(keys: number, concurrency: number): Promise<number> {
  let remaining = keys;
  let finish!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const c = new Controller({
    name: `bench-noop-${concurrency}`,
    log: silentLogger(),
    concurrency,
    reconcile: async () => {
      if (--remaining === 0) finish();
      return undefined;
    },
  });
  c.start();
  const t0 = performance.now();
  for (let i = 0; i < keys; i++) c.queue.add(`ns/key-${i}`);
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  await c.stop();
  return keys / seconds;
}

function rssMiB(): number {
  gc();
  gc();
  return process.memoryUsage().rss / MiB;
}

async function informerMemory(count: number): Promise<void> {
  const cp = await startControlPlane({ log: (l) => process.stderr.write(`${l}\n`) });
  try {
    // The set-up client fills the server; the default 20 qps would make that take minutes.
    const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "bench", {
      rateLimit: { qps: 1000, burst: 1000 },
    });
    const ns = "bench";
    await client.create(
      { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
      {
        metadata: { name: ns },
      },
    );
    const t0 = performance.now();
    let next = 0;
    const workers = Array.from({ length: 16 }, async () => {
      while (next < count) {
        const i = next++;
        await client.create(CONFIGMAP, {
          metadata: { name: `cm-${i}`, namespace: ns, labels: { app: "bench" } },
          data: { payload: randomBytes(512).toString("hex") },
        });
      }
    });
    await Promise.all(workers);
    const createSeconds = (performance.now() - t0) / 1000;
    process.stderr.write(`created ${count} ConfigMaps in ${createSeconds.toFixed(1)} s\n`);

    // The objects' JSON as the server sends them, and without managedFields (what the cache keeps).
    let jsonBytes = 0;
    let slimBytes = 0;
    let cont: string | undefined;
    do {
      const page = await client.list(CONFIGMAP, { namespace: ns, limit: 500, continue: cont });
      for (const o of page.items) {
        jsonBytes += Buffer.byteLength(JSON.stringify(o));
        delete o.metadata.managedFields;
        slimBytes += Buffer.byteLength(JSON.stringify(o));
      }
      cont = page.metadata.continue || undefined;
    } while (cont);

    const before = rssMiB();
    const inf = new Informer(client, CONFIGMAP, { namespaces: [ns], log: silentLogger() });
    const t1 = performance.now();
    inf.start();
    await inf.waitForSync();
    const syncSeconds = (performance.now() - t1) / 1000;
    const afterRss = rssMiB();
    const grown = afterRss - before;
    const rows: [string, string][] = [
      ["objects cached", String(inf.size)],
      ["list+sync time", `${syncSeconds.toFixed(2)} s`],
      ["objects' JSON (as served)", `${(jsonBytes / MiB).toFixed(1)} MiB`],
      ["objects' JSON (without managedFields)", `${(slimBytes / MiB).toFixed(1)} MiB`],
      ["RSS before informer", `${before.toFixed(1)} MiB`],
      ["RSS after sync", `${afterRss.toFixed(1)} MiB`],
      ["RSS growth", `${grown.toFixed(1)} MiB`],
      ["growth / JSON as served", `${(grown / (jsonBytes / MiB)).toFixed(2)}x`],
      ["growth / JSON without managedFields", `${(grown / (slimBytes / MiB)).toFixed(2)}x`],
    ];
    print("Informer cache, 10,000 ConfigMaps of ~1 KiB (real kube-apiserver)", rows);
    await inf.stop();
    client.close();
  } finally {
    await cp.stop();
  }
}

function print(title: string, rows: [string, string][]): void {
  const w = Math.max(...rows.map((r) => r[0].length));
  process.stdout.write(`\n${title}\n`);
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(w)}  ${v}\n`);
}

const keys = 10_000;
await reconcileThroughput(keys, 1); // warm-up
const rows: [string, string][] = [];
for (const concurrency of [1, 4, 16]) {
  const rate = await reconcileThroughput(keys, concurrency);
  rows.push([`concurrency ${concurrency}`, `${Math.round(rate).toLocaleString("en-US")} reconciles/s`]);
}
print(`No-op reconciles through the work queue (${keys.toLocaleString("en-US")} keys)`, rows);
await informerMemory(10_000);
