/**
 * Apply benchmark: 500 objects of 10 kinds applied to a real kube-apiserver by applyIfChanged,
 * then the same intent again (goal: no write at all), then with one object in ten changed.
 * Writes are counted twice: by this client (rest_client_requests_total by method) and by the API
 * server itself (apiserver_request_total by verb, dry runs apart), for the bench's resources only.
 * Run with `npm run bench:apply`; BENCH_QPS / BENCH_BURST override the client's rate limit
 * (default 20 / 30, controller-runtime's), BENCH_CONCURRENCY the applies in flight (default 8).
 */
import { type ApplyOutcome, applyIfChanged } from "../src/runtime/apply.js";
import { NAMESPACE } from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import { restClientRequests } from "../src/runtime/metrics.js";
import { DEFAULT_CLIENT_RATE_LIMIT } from "../src/runtime/ratelimit.js";
import { apiVersionOf, type KubeObject, objectKey, type ResourceType } from "../src/runtime/types.js";
import { startControlPlane } from "../src/testenv/controlplane.js";

const PER_KIND = 50;
const NS = "bench-apply";
const MANAGER = "bench-apply";
const labels = { "bench.platform-operator.dev/set": "apply" };

const t = (
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceType => ({
  group,
  version,
  kind,
  plural,
  namespaced,
});
const pod = (name: string) => ({
  metadata: { labels: { app: name } },
  spec: {
    containers: [
      {
        name: "main",
        image: "registry.local/app:1.0",
        ports: [{ containerPort: 8080, name: "http" }],
        env: [{ name: "MODE", value: "bench" }],
        resources: { requests: { cpu: "100m", memory: "64Mi" } },
      },
    ],
  },
});

/** Ten kinds, each a function of (index, revision) giving the intent; revision changes the content. */
const KINDS: { type: ResourceType; body: (name: string, rev: number) => Record<string, unknown> }[] = [
  {
    type: t("", "v1", "ConfigMap", "configmaps"),
    body: (_n, rev) => ({ data: { rev: String(rev), a: "1" } }),
  },
  {
    type: t("", "v1", "Secret", "secrets"),
    body: (_n, rev) => ({ type: "Opaque", data: { token: Buffer.from(`token-${rev}`).toString("base64") } }),
  },
  {
    type: t("", "v1", "Service", "services"),
    body: (n, rev) => ({
      spec: { selector: { app: n }, ports: [{ name: "http", port: 80 + rev, targetPort: 8080 }] },
    }),
  },
  {
    type: t("", "v1", "ServiceAccount", "serviceaccounts"),
    body: (_n, rev) => ({ automountServiceAccountToken: rev % 2 === 0 }),
  },
  {
    type: t("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    body: (_n, rev) => ({
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: rev ? ["get", "list"] : ["get"] }],
    }),
  },
  {
    type: t("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    body: (n, rev) => ({
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: n },
      subjects: [{ kind: "ServiceAccount", name: `${n}-${rev}`, namespace: NS }],
    }),
  },
  {
    type: t("apps", "v1", "Deployment", "deployments"),
    body: (n, rev) => ({
      spec: { replicas: 1 + rev, selector: { matchLabels: { app: n } }, template: pod(n) },
    }),
  },
  {
    type: t("apps", "v1", "StatefulSet", "statefulsets"),
    body: (n, rev) => ({
      spec: { replicas: 1 + rev, serviceName: n, selector: { matchLabels: { app: n } }, template: pod(n) },
    }),
  },
  {
    type: t("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets"),
    body: (n, rev) => ({ spec: { maxUnavailable: 1 + rev, selector: { matchLabels: { app: n } } } }),
  },
  {
    type: t("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false),
    body: (_n, rev) => ({
      rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: rev ? ["get", "watch"] : ["get"] }],
    }),
  },
];

function intents(revisionOf: (i: number) => number): KubeObject[] {
  const out: KubeObject[] = [];
  for (const { type, body } of KINDS)
    for (let i = 0; i < PER_KIND; i++) {
      const name = `${type.plural.slice(0, 12)}-${i}`;
      const full = type.namespaced ? name : `bench-apply-${name}`;
      out.push({
        apiVersion: apiVersionOf(type),
        kind: type.kind,
        metadata: { name: full, namespace: type.namespaced ? NS : undefined, labels },
        ...body(full, revisionOf(i)),
      });
    }
  return out;
}

async function clientRequests(): Promise<Map<string, number>> {
  const byMethod = new Map<string, number>();
  for (const v of (await restClientRequests.get()).values) {
    const m = String(v.labels["method"]);
    byMethod.set(m, (byMethod.get(m) ?? 0) + v.value);
  }
  return byMethod;
}

const WRITE_VERBS = new Set(["POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"]);
const benchResources = new Set(KINDS.map((k) => k.type.plural));

/** Writes the API server itself counted for the bench's resources: stored ones, and dry runs apart. */
async function serverWrites(client: KubeClient): Promise<{ stored: number; dryRun: number; reads: number }> {
  const text = await client.requestText({ method: "GET", path: "/metrics" });
  const out = { stored: 0, dryRun: 0, reads: 0 };
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const labelsText = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    const l = Object.fromEntries([...labelsText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!benchResources.has(l["resource"] ?? "") || l["subresource"]) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (WRITE_VERBS.has(l["verb"] ?? "")) {
      if (l["dry_run"]) out.dryRun += value;
      else out.stored += value;
    } else out.reads += value;
  }
  return out;
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

interface PassResult {
  seconds: number;
  actions: Record<string, number>;
  client: Map<string, number>;
  server: { stored: number; dryRun: number; reads: number };
}

/** One pass: list each kind (live objects with managedFields), then applyIfChanged each intent. */
async function pass(client: KubeClient, objs: KubeObject[], concurrency: number): Promise<PassResult> {
  const clientBefore = await clientRequests();
  const serverBefore = await serverWrites(client);
  const t0 = performance.now();
  const live = new Map<string, KubeObject>();
  for (const { type } of KINDS) {
    const list = await client.list(type, {
      namespace: type.namespaced ? NS : undefined,
      labelSelector: "bench.platform-operator.dev/set=apply",
    });
    for (const o of list.items) live.set(`${type.kind}/${objectKey(o)}`, o);
  }
  const actions: Record<string, number> = {};
  await pool(objs, concurrency, async (o) => {
    const r: ApplyOutcome = await applyIfChanged(client, o, {
      fieldManager: MANAGER,
      live: live.get(`${o.kind}/${objectKey(o)}`) ?? null,
    });
    const label = r.decidedBy ? `${r.action} (${r.decidedBy})` : r.action;
    actions[label] = (actions[label] ?? 0) + 1;
  });
  const seconds = (performance.now() - t0) / 1000;
  const clientAfter = await clientRequests();
  const serverAfter = await serverWrites(client);
  const delta = new Map<string, number>();
  for (const [m, v] of clientAfter) delta.set(m, v - (clientBefore.get(m) ?? 0));
  return {
    seconds,
    actions,
    client: delta,
    server: {
      stored: serverAfter.stored - serverBefore.stored,
      dryRun: serverAfter.dryRun - serverBefore.dryRun,
      reads: serverAfter.reads - serverBefore.reads,
    },
  };
}

function report(title: string, r: PassResult): void {
  const methods = [...r.client.entries()]
    .filter(([, v]) => v > 0)
    .map(([m, v]) => `${m} ${v}`)
    .join(", ");
  const rows: [string, string][] = [
    ["time", `${r.seconds.toFixed(2)} s`],
    [
      "outcomes",
      Object.entries(r.actions)
        .map(([k, v]) => `${k}: ${v}`)
        .join(", "),
    ],
    ["client requests by method", methods || "none"],
    ["API writes stored (server count)", String(r.server.stored)],
    ["dry-run applies (server count)", String(r.server.dryRun)],
  ];
  const w = Math.max(...rows.map((x) => x[0].length));
  process.stdout.write(`\n${title}\n`);
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(w)}  ${v}\n`);
}

const qps = Number(process.env["BENCH_QPS"] ?? DEFAULT_CLIENT_RATE_LIMIT.qps);
const burst = Number(process.env["BENCH_BURST"] ?? DEFAULT_CLIENT_RATE_LIMIT.burst);
const concurrency = Number(process.env["BENCH_CONCURRENCY"] ?? 8);
const cp = await startControlPlane({ log: (l) => process.stderr.write(`${l}\n`) });
try {
  const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "bench-apply", {
    rateLimit: { qps, burst },
  });
  await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  const total = KINDS.length * PER_KIND;
  process.stdout.write(
    `\n${total} objects of ${KINDS.length} kinds; client rate limit ${qps} qps, burst ${burst}; ${concurrency} applies in flight\n`,
  );
  report(
    "Pass 1: create",
    await pass(
      client,
      intents(() => 0),
      concurrency,
    ),
  );
  report(
    "Pass 2: same intent (goal: 0 writes)",
    await pass(
      client,
      intents(() => 0),
      concurrency,
    ),
  );
  report(
    "Pass 3: one object in ten changed",
    await pass(
      client,
      intents((i) => (i % 10 === 0 ? 1 : 0)),
      concurrency,
    ),
  );
  client.close();
} finally {
  await cp.stop();
}
