/**
 * OpenBaoCluster benchmark on the local node (`npm run bench:openbao`): real kube-apiserver,
 * kubelet, containerd and OpenBao pods, and the real operator process (`platform-operator run`, in
 * the node's network like an in-cluster operator).
 *
 * 1. OpenBao by hand: the same three pods (one StatefulSet, Parallel, Raft retry_join to each peer,
 *    the operator's default seal: a static key from a Secret) applied by this script, which then
 *    initializes pod 0 through the API. Timed from the apply to three voters in OpenBao's own Raft
 *    configuration: OpenBao's own start + init + join time on this node.
 * 2. The operator: an OpenBaoCluster with 3 replicas, timed from its creation to status.initialized,
 *    3 ready voter pods and 3 voters in OpenBao's Raft configuration. The difference is what the
 *    operator adds: TLS certificates, one pod until initialized (the document's rule) then scale-out,
 *    its poll interval.
 * 3. Quiet passes: once settled, the operator's API writes per reconcile (its own client metrics,
 *    every method but GET), as openbao-workload.test.ts counts them.
 * 4. The operator's memory: VmHWM (peak) and VmRSS (steady, after the quiet passes) from /proc.
 * 5. Quiet windows: a new operator process on its default intervals (as it would run in a cluster)
 *    takes over the formed cluster, then more clusters; once settled, each window measures its CPU
 *    seconds, API requests by method and OpenBao requests over BENCH_QUIET_WINDOW (5m), for each
 *    cluster count of BENCH_QUIET_CLUSTERS (1,5), next to its RSS (bench/openbao-quiet.ts), and the
 *    operator's requests in the node API server's audit log and its lines at warn or above
 *    (bench/audit-window.ts).
 *
 * 6. Fleet mode (`npm run bench:openbao -- --clusters N`, e.g. 50, or BENCH_FLEET=N; steps 1-5 are
 *    then skipped): N one-voter clusters created at once under a fresh operator on its default
 *    intervals; each cluster's time from the apply to formed, the operator's API requests until all
 *    formed, its idle, peak and steady RSS and what its heap held at the peak, then one quiet window
 *    of BENCH_QUIET_WINDOW, every cost also per cluster (bench/openbao-fleet.ts).
 *
 * The operator runs with the heap flags the chart ships (bench/shipped-flags.ts; BENCH_MEMORY_LIMIT=0
 * for node's defaults), printed with the figures.
 *
 * BENCH_QUIET_PASSES (5) sets how many quiet passes are counted; BENCH_RESYNC (5s) the operator's
 * resyncInterval, which paces them (its pollInterval stays the default, 3 s). BENCH_QUIET_RESYNC
 * sets the quiet windows' resyncInterval (the target's default when unset); BENCH_QUIET_REPLICAS (3)
 * the voters of the clusters added for the windows; BENCH_SKIP_HAND=1 leaves out step 1.
 */
import { randomBytes } from "node:crypto";
import { allKinds } from "../src/apis/index.js";
import { formed, OPENBAO_CLUSTER, observeFormation, votersOf } from "../src/cli/openbao-formation.js";
import { CUSTOM_RESOURCE_DEFINITION, NAMESPACE } from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import { asDuration } from "../src/runtime/configvalues.js";
import type { KubeObject, ResourceType } from "../src/runtime/types.js";
import { BaoClient, type RaftServer } from "../src/targets/openbao/baoclient/client.js";
import { BAO_DEFAULT_VERSION } from "../src/testenv/cache.js";
import { auditLogPath } from "../src/testenv/node/components.js";
import { type LocalNode, startNode } from "../src/testenv/node/node.js";
import { makeTempDir, removeTempDir } from "../src/testenv/tempdirs.js";
import { apiWrites, metricSum } from "../test/support/openbao-operator.js";
import { createCluster, freshNamespace, say, seconds, settled, until } from "./openbao-common.js";
import { fleet, fleetTable } from "./openbao-fleet.js";
import { type QuietWindow, quietTable, quietWindow } from "./openbao-quiet.js";
import { memoryMiB, startOperatorInNode } from "./operator-in-node.js";
import { shippedFlags } from "./shipped-flags.js";

const QUIET = Number(process.env["BENCH_QUIET_PASSES"] ?? 5);
const RESYNC = process.env["BENCH_RESYNC"] ?? "5s";
const REPLICAS = 3;
const WINDOW_MS = asDuration(process.env["BENCH_QUIET_WINDOW"] ?? "5m", "BENCH_QUIET_WINDOW");
const QUIET_CLUSTERS = (process.env["BENCH_QUIET_CLUSTERS"] ?? "1,5")
  .split(",")
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0)
  .sort((a, b) => a - b);
const QUIET_RESYNC = process.env["BENCH_QUIET_RESYNC"];
const QUIET_REPLICAS = Number(process.env["BENCH_QUIET_REPLICAS"] ?? REPLICAS);
const SKIP_HAND = process.env["BENCH_SKIP_HAND"] === "1";
const FLEET = clustersArgument(process.argv.slice(2)) ?? Number(process.env["BENCH_FLEET"] ?? 0);
const FLAGS = shippedFlags().note;

/** `--clusters N` or `--clusters=N`: the fleet mode's cluster count. */
function clustersArgument(args: string[]): number | undefined {
  const i = args.findIndex((a) => a === "--clusters" || a.startsWith("--clusters="));
  if (i < 0) return undefined;
  const a = args[i]!;
  const raw = a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[i + 1];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--clusters must be a whole number from 1, got ${raw}`);
  return n;
}

const POD: ResourceType = { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true };

async function applyAll(client: KubeClient, ns: string, objects: KubeObject[]): Promise<void> {
  for (const o of objects) {
    const type = await client.resources.find(o.apiVersion ?? "", o.kind ?? "");
    if (!type) throw new Error(`${o.kind} is not served`);
    await client.apply(type, { ...o, metadata: { ...o.metadata, namespace: ns } }, { fieldManager: "bench" });
  }
}

async function podIP(client: KubeClient, ns: string, name: string): Promise<string | undefined> {
  const pod = await client.getOrUndefined(POD, name, ns);
  return (pod?.["status"] as { podIP?: string } | undefined)?.podIP;
}

const voters = (servers: RaftServer[]) => servers.filter((s) => s.voter).length;

// --- 1. OpenBao by hand -------------------------------------------------------------------------

/** The pods the operator would run, minus TLS: retry_join to every peer, the static seal from a Secret. */
function handManifests(ns: string): KubeObject[] {
  const peer = (i: number) => `bao-${i}.bao-internal.${ns}.svc.cluster.local`;
  const config = `disable_mlock = true
ui = false
listener "tcp" {
  address = "0.0.0.0:8200"
  cluster_address = "0.0.0.0:8201"
  tls_disable = true
}
seal "static" {
  current_key_id = "bench-1"
  current_key = "file:///openbao/unseal/key"
}
storage "raft" {
  path = "/openbao/data"
${Array.from({ length: REPLICAS }, (_, i) => `  retry_join {\n    leader_api_addr = "http://${peer(i)}:8200"\n  }`).join("\n")}
}
`;
  const labels = { app: "bao" };
  return [
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "bao-unseal" },
      data: { key: randomBytes(32).toString("base64") },
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bao-config" }, data: { "config.hcl": config } },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "bao-internal" },
      spec: {
        clusterIP: "None",
        publishNotReadyAddresses: true,
        selector: labels,
        ports: [
          { name: "api", port: 8200 },
          { name: "cluster", port: 8201 },
        ],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "bao" },
      spec: {
        serviceName: "bao-internal",
        replicas: REPLICAS,
        podManagementPolicy: "Parallel",
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            securityContext: { runAsUser: 100, runAsGroup: 1000, fsGroup: 1000, runAsNonRoot: true },
            containers: [
              {
                name: "openbao",
                image: `openbao/openbao:${BAO_DEFAULT_VERSION}`,
                imagePullPolicy: "IfNotPresent",
                args: ["server", "-config=/openbao/config/config.hcl"],
                env: [
                  { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                  {
                    name: "BAO_API_ADDR",
                    value: `http://$(POD_NAME).bao-internal.${ns}.svc.cluster.local:8200`,
                  },
                  {
                    name: "BAO_CLUSTER_ADDR",
                    value: `http://$(POD_NAME).bao-internal.${ns}.svc.cluster.local:8201`,
                  },
                  { name: "BAO_RAFT_NODE_ID", value: "$(POD_NAME)" },
                ],
                ports: [{ containerPort: 8200 }, { containerPort: 8201 }],
                volumeMounts: [
                  { name: "config", mountPath: "/openbao/config" },
                  { name: "unseal", mountPath: "/openbao/unseal", readOnly: true },
                  { name: "data", mountPath: "/openbao/data" },
                ],
              },
            ],
            volumes: [
              { name: "config", configMap: { name: "bao-config" } },
              { name: "unseal", secret: { secretName: "bao-unseal" } },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "128Mi" } } },
          },
        ],
      },
    },
  ] as KubeObject[];
}

async function byHand(client: KubeClient) {
  const ns = await freshNamespace(client, "bench-hand");
  say(`by hand: applying 3 OpenBao pods in ${ns}...`);
  const t0 = performance.now();
  await applyAll(client, ns, handManifests(ns));
  const ip = await until("bao-0's address", () => podIP(client, ns, "bao-0"), 300_000);
  const bao = new BaoClient({ address: `http://${ip}:8200`, timeoutMs: 5000 });
  await until("bao-0's API", () => bao.health(), 300_000, 200);
  const answered = performance.now() - t0;
  // The same request the operator sends for the static seal: OpenBao's defaults, pods unseal themselves.
  const { rootToken } = await bao.init({});
  const initialized = performance.now() - t0;
  await until(
    "3 Raft voters (by hand)",
    async () => {
      const s = await bao.raftServers(rootToken);
      return voters(s) === REPLICAS ? s : undefined;
    },
    600_000,
    250,
  );
  const formedMs = performance.now() - t0;
  say(`by hand: formed in ${seconds(formedMs)}`);
  // Its pods would compete for the two cores with the operator's run.
  await client.delete(NAMESPACE, ns).catch(() => undefined);
  await until(
    "the hand-made pods to go",
    async () => {
      const pods = await client.list(POD, { namespace: ns });
      return pods.items.length === 0 ? true : undefined;
    },
    300_000,
    1000,
  ).catch(() => say(`by hand: ${ns} still has pods; going on`));
  return { answered, initialized, formedMs };
}

// --- 2. The operator ----------------------------------------------------------------------------

async function withOperator(node: LocalNode, client: KubeClient) {
  const ns = await freshNamespace(client, "bench-op");
  const dir = makeTempDir("bench-openbao");
  const op = await startOperatorInNode(node, [ns], dir, { resyncInterval: RESYNC });
  try {
    say(`operator: pid ${op.pid}; creating OpenBaoCluster ${ns}/bao (3 replicas)...`);
    const ref = { name: "bao", namespace: ns };
    const t0 = performance.now();
    await client.create(OPENBAO_CLUSTER, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "bao", namespace: ns },
      spec: { version: BAO_DEFAULT_VERSION, replicas: REPLICAS, storage: { size: "128Mi" } },
    });
    let initialized: number | undefined;
    let ready: number | undefined;
    let peakDuringFormation = 0;
    await until(
      "3 initialized, joined voters (operator)",
      async () => {
        const f = await observeFormation(client, ref, { withPeers: true });
        const now = performance.now() - t0;
        if (f.initialized && initialized === undefined) initialized = now;
        if (f.readyReplicas >= REPLICAS && ready === undefined) ready = now;
        peakDuringFormation = memoryMiB(op.pid, "VmHWM");
        return formed(f) && votersOf(f) === REPLICAS ? true : undefined;
      },
      900_000,
      250,
    );
    const formedMs = performance.now() - t0;
    say(`operator: formed in ${seconds(formedMs)}`);

    // Quiet passes: first two reconciles in a row with no write between them (the last writes of
    // scale-out and status settle), then count over QUIET more.
    const reconciles = (m: string) =>
      metricSum(m, "controller_runtime_reconcile_total", { controller: "openbaocluster" });
    let base = await op.metrics();
    await until(
      "two reconciles in a row without writes",
      async () => {
        const now = await op.metrics();
        if (apiWrites(now) !== apiWrites(base)) {
          base = now;
          return undefined;
        }
        return reconciles(now) >= reconciles(base) + 2 ? true : undefined;
      },
      300_000,
      1000,
    );
    const start = await op.metrics();
    const end = await until(
      `${QUIET} quiet passes`,
      async () => {
        const m = await op.metrics();
        return reconciles(m) >= reconciles(start) + QUIET ? m : undefined;
      },
      QUIET * 120_000,
      1000,
    );
    const passes = reconciles(end) - reconciles(start);
    const writes = apiWrites(end) - apiWrites(start);
    return {
      namespace: ns,
      initialized: initialized ?? formedMs,
      ready: ready ?? formedMs,
      formedMs,
      passes,
      writes,
      peakDuringFormation,
      peak: memoryMiB(op.pid, "VmHWM"),
      steady: memoryMiB(op.pid, "VmRSS"),
    };
  } finally {
    await op.stop();
    removeTempDir(dir);
  }
}

// --- 5. Quiet windows ---------------------------------------------------------------------------

async function quietWindows(node: LocalNode, client: KubeClient, firstNs: string): Promise<QuietWindow[]> {
  const most = QUIET_CLUSTERS.at(-1) ?? 1;
  const namespaces = [firstNs];
  while (namespaces.length < most) namespaces.push(await freshNamespace(client, "bench-quiet"));
  const dir = makeTempDir("bench-openbao-quiet");
  const section: Record<string, string> = QUIET_RESYNC ? { resyncInterval: QUIET_RESYNC } : {};
  const op = await startOperatorInNode(node, namespaces, dir, section, "openbao operator (bench, quiet)");
  try {
    const windows: QuietWindow[] = [];
    let have = 1;
    for (const n of QUIET_CLUSTERS) {
      const replicas = (i: number) => (i === 0 ? REPLICAS : QUIET_REPLICAS);
      for (; have < n; have++) await createCluster(client, namespaces[have]!, QUIET_REPLICAS);
      say(`quiet: waiting for ${n} formed cluster(s)...`);
      await until(
        `${n} formed cluster(s)`,
        async () => {
          for (let i = 0; i < n; i++) {
            const f = await observeFormation(
              client,
              { name: "bao", namespace: namespaces[i]! },
              { withPeers: true },
            );
            if (!formed(f) || votersOf(f) !== replicas(i)) return undefined;
          }
          return true;
        },
        1_800_000,
        2000,
      );
      await settled(op, n);
      say(`quiet: measuring ${n} cluster(s) for ${seconds(WINDOW_MS)}...`);
      windows.push(await quietWindow(op, n, WINDOW_MS, auditLogPath(node.dir)));
    }
    return windows;
  } finally {
    await op.stop();
    removeTempDir(dir);
  }
}

// --- main ---------------------------------------------------------------------------------------

const node = await startNode({ log: say });
try {
  const client = new KubeClient(loadKubeConfig(node.kubeconfigPath), "bench-openbao");
  for (const k of allKinds.filter((k) => k.group === "openbao.org"))
    await client.apply(CUSTOM_RESOURCE_DEFINITION, k.crd as unknown as KubeObject, {
      fieldManager: "bench",
      force: true,
    });
  await until(
    "the OpenBaoCluster CRD to be served",
    async () => {
      client.resources.refresh();
      return (await client.resources.find("openbao.org/v1alpha1", "OpenBaoCluster")) ? true : undefined;
    },
    30_000,
    200,
  );
  if (FLEET > 0) {
    const r = await fleet(node, client, FLEET, WINDOW_MS);
    client.close();
    for (const l of fleetTable(r, "the default", FLAGS)) process.stdout.write(`${l}\n`);
  } else await standard(client);
} finally {
  const left = await node.stop();
  if (left.length) say(`node teardown left: ${left.join("; ")}`);
}

/** Steps 1 to 5: by hand, the operator's 3-voter cluster, its quiet passes, the quiet windows. */
async function standard(client: KubeClient): Promise<void> {
  const hand = SKIP_HAND ? undefined : await byHand(client);
  const op = await withOperator(node, client);
  const windows = await quietWindows(node, client, op.namespace);
  client.close();

  const rows: [string, string, string][] = [
    ["pod 0's API answering", hand ? seconds(hand.answered) : "-", "-"],
    ["initialized", hand ? seconds(hand.initialized) : "-", seconds(op.initialized)],
    ["3 voter pods ready", "-", seconds(op.ready)],
    ["3 Raft voters (OpenBao's list)", hand ? seconds(hand.formedMs) : "-", seconds(op.formedMs)],
  ];
  const header: [string, string, string] = ["from create/apply to", "OpenBao by hand", "operator"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const out = (l: string) => process.stdout.write(`${l}\n`);
  out(
    `\nOpenBaoCluster benchmark: ${REPLICAS} voters on the local node (OpenBao ${BAO_DEFAULT_VERSION}, real pods; operator on ${FLAGS})`,
  );
  out(line(header));
  out(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows) out(line(r));
  if (hand) out(`operator overhead to 3 Raft voters: ${seconds(op.formedMs - hand.formedMs)}`);
  out(
    `API writes per quiet pass: ${(op.writes / Math.max(1, op.passes)).toFixed(2)} (${op.writes} in ${op.passes} passes, resyncInterval ${RESYNC})`,
  );
  out(
    `operator RSS: peak ${op.peak.toFixed(0)} MiB (VmHWM; ${op.peakDuringFormation.toFixed(0)} MiB by the time the cluster formed), steady ${op.steady.toFixed(0)} MiB (VmRSS after the quiet passes)`,
  );
  for (const l of quietTable(windows, QUIET_RESYNC ?? "the default")) out(l);
}
