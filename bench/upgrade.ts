/**
 * OpenBao upgrade benchmark on the local node (`npm run bench:upgrade`): a 3-voter OpenBaoCluster at
 * 2.6.2 upgraded to 2.7.2 by the real operator process, once per strategy (RollingUpdate, then
 * BlueGreen), while a KV v2 client (test/support/kv-load.ts) writes and reads through the cluster's
 * client Service the whole time. Per strategy it prints:
 *
 * - total time: from the spec.version change to every voter pod Ready on 2.7.2, status.currentVersion
 *   2.7.2 and no blue-green phase in flight;
 * - the client's failed-request window (first to last failure) and the time requests were failing;
 * - writes acknowledged and lost (every acknowledged write read back after the upgrade: goal 0);
 * - leader changes the client saw (sys/leader);
 * - extra storage during the transition: the namespace's PVC requests at their peak minus before
 *   (blue-green runs a second set of voters, so about double).
 *
 * A strategy the operator does not carry out (no blue-green phase within BENCH_START_TIMEOUT, 180 s)
 * is skipped with the reason printed. BENCH_STRATEGIES ("RollingUpdate,BlueGreen") picks the runs.
 */
import { randomBytes } from "node:crypto";
import { allKinds } from "../src/apis/index.js";
import { formed, OPENBAO_CLUSTER, observeFormation, votersOf } from "../src/cli/openbao-formation.js";
import { CUSTOM_RESOURCE_DEFINITION, NAMESPACE, SERVICE_ACCOUNT } from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import { parseQuantity } from "../src/runtime/quantity.js";
import type { KubeObject, ResourceType } from "../src/runtime/types.js";
import { type LocalNode, startNode } from "../src/testenv/node/node.js";
import { makeTempDir, removeTempDir } from "../src/testenv/tempdirs.js";
import { type KvLoad, type KvLoadReport, startKvLoad, summarizeLoad } from "../test/support/kv-load.js";
import { type OperatorInNode, startOperatorInNode } from "./operator-in-node.js";

const FROM = "2.6.2";
const TO = "2.7.2";
const REPLICAS = 3;
const NAME = "bao";
const STORAGE = "128Mi";
const STRATEGIES = (process.env["BENCH_STRATEGIES"] ?? "RollingUpdate,BlueGreen")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const START_TIMEOUT_MS = Number(process.env["BENCH_START_TIMEOUT"] ?? 180) * 1000;
const UPGRADE_TIMEOUT_MS = 30 * 60_000;

const say = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

const POD: ResourceType = { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true };
const SECRET: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
const SERVICE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
const PVC: ResourceType = {
  group: "",
  version: "v1",
  kind: "PersistentVolumeClaim",
  plural: "persistentvolumeclaims",
  namespaced: true,
};

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely here
type Json = KubeObject & Record<string, any>;

async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 1000,
) {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${seconds(timeoutMs)} waiting for ${what}${last ? ` (${last})` : ""}`);
    await sleep(everyMs);
  }
}

async function freshNamespace(client: KubeClient, prefix: string): Promise<string> {
  const ns = `${prefix}-${randomBytes(3).toString("hex")}`;
  await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  await until(
    `ServiceAccount ${ns}/default`,
    () => client.getOrUndefined(SERVICE_ACCOUNT, "default", ns),
    60_000,
    200,
  );
  return ns;
}

async function secretKey(
  client: KubeClient,
  ns: string,
  name: string,
  key: string,
): Promise<string | undefined> {
  const s = await client.getOrUndefined<Json>(SECRET, name, ns);
  const b64 = s?.["data"]?.[key];
  return typeof b64 === "string" ? Buffer.from(b64, "base64").toString("utf8") : undefined;
}

/** Sum of the storage every claim in the namespace asks for (a Pending claim counts: it is reserved). */
async function claimedBytes(client: KubeClient, ns: string): Promise<number> {
  const claims = (await client.list<Json>(PVC, { namespace: ns })).items;
  return claims
    .filter((c) => !c.metadata.deletionTimestamp)
    .reduce((sum, c) => sum + (parseQuantity(String(c.spec?.resources?.requests?.storage ?? "0")) ?? 0), 0);
}

const ready = (p: Json) =>
  p.status?.conditions?.some((c: Json) => c.type === "Ready" && c.status === "True") === true;

/** Voter pods of the cluster, whatever revision or StatefulSet they belong to. */
async function serverPods(client: KubeClient, ns: string): Promise<Json[]> {
  return (
    await client.list<Json>(POD, {
      namespace: ns,
      labelSelector: `openbao.org/cluster=${NAME},openbao.org/component=server`,
    })
  ).items;
}

interface Outcome {
  strategy: string;
  skipped?: string;
  totalMs?: number;
  load?: KvLoadReport;
  extraBytes?: number;
  beforeBytes?: number;
}

async function runStrategy(node: LocalNode, client: KubeClient, strategy: string): Promise<Outcome> {
  const ns = await freshNamespace(client, `bench-up-${strategy === "BlueGreen" ? "bg" : "ru"}`);
  const dir = makeTempDir("bench-upgrade");
  let op: OperatorInNode | undefined;
  let load: KvLoad | undefined;
  try {
    op = await startOperatorInNode(node, [ns], dir, {}, `openbao operator (bench ${strategy})`);
    say(`${strategy}: creating ${ns}/${NAME} at ${FROM} (${REPLICAS} voters)...`);
    await client.create(OPENBAO_CLUSTER, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME, namespace: ns },
      spec: {
        version: FROM,
        replicas: REPLICAS,
        storage: { size: STORAGE },
        upgrade: { strategy },
        configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
      },
    });
    const ref = { name: NAME, namespace: ns };
    await until(
      `${REPLICAS} initialized voters`,
      async () => {
        const f = await observeFormation(client, ref, { withPeers: true });
        return formed(f) && votersOf(f) === REPLICAS ? true : undefined;
      },
      900_000,
      2000,
    );
    say(`${strategy}: formed; starting the KV load through the client Service`);

    const token = await secretKey(client, ns, `${NAME}-root-token`, "token");
    const caPem =
      (await secretKey(client, ns, `${NAME}-tls-server`, "ca.crt")) ??
      (await secretKey(client, ns, `${NAME}-tls-ca`, "ca.crt"));
    if (!token) throw new Error(`no root token in Secret ${NAME}-root-token`);
    const svc = await client.get<Json>(SERVICE, NAME, ns);
    const clusterIP = String(svc.spec?.clusterIP ?? "");
    // The host routes the Service range through the node, where kube-proxy spreads it over the pods:
    // the client talks to the Service as an application in the cluster would.
    const podIPs = new Map<string, string>();
    const refreshIPs = async () => {
      for (const p of await serverPods(client, ns))
        if (p.status?.podIP && p.metadata.name) podIPs.set(p.metadata.name, p.status.podIP);
    };
    await refreshIPs();
    const ipTimer = setInterval(() => void refreshIPs().catch(() => undefined), 2000);
    try {
      load = await startKvLoad({
        addresses: [`${caPem ? "https" : "http"}://${clusterIP}:8200`],
        token,
        caPem,
        serverName: `${NAME}.${ns}.svc`,
        // A standby's 307 names the active pod by its cluster DNS name; the host knows its IP.
        resolveRedirect: (u) => {
          const ip = podIPs.get(u.hostname.split(".")[0] ?? "");
          const r = new URL(u);
          if (ip) r.hostname = ip;
          return r;
        },
      });
      await load.acknowledgedMore(20, 120_000);
      const beforeBytes = await claimedBytes(client, ns);
      let peakBytes = beforeBytes;

      say(`${strategy}: ${FROM} → ${TO}`);
      const t0 = performance.now();
      await client.mergePatch(OPENBAO_CLUSTER, NAME, ns, { spec: { version: TO } });
      let started = strategy !== "BlueGreen";
      let lastLine = "";
      const skipped = await until(
        `the ${strategy} upgrade to finish`,
        async () => {
          peakBytes = Math.max(peakBytes, await claimedBytes(client, ns));
          const c = await client.get<Json>(OPENBAO_CLUSTER, NAME, ns);
          const phase: string | undefined = c.status?.blueGreen?.phase;
          const upgrading = (c.status?.conditions ?? []).find((x: Json) => x.type === "Upgrading");
          const pods = await serverPods(client, ns);
          const line = `${strategy}: ${upgrading?.reason ?? "-"}${phase ? ` / ${phase}` : ""}; pods ${pods
            .map(
              (p) =>
                `${p.metadata.name}=${String(p.spec.containers[0]?.image).split(":").pop()}${ready(p) ? "" : "(not ready)"}`,
            )
            .join(" ")}`;
          if (line !== lastLine) say(line);
          lastLine = line;
          if (phase && phase !== "Idle") started = true;
          if (!started && performance.now() - t0 > START_TIMEOUT_MS)
            return `the operator started no blue-green phase within ${seconds(START_TIMEOUT_MS)} (Upgrading: ${upgrading ? `${upgrading.reason}: ${upgrading.message}` : "not set"})`;
          // A blue-green run counts only once a phase was seen: pods rolled some other way are not it.
          const done =
            started &&
            c.status?.currentVersion === TO &&
            (!phase || phase === "Idle") &&
            pods.length === REPLICAS &&
            pods.every(
              (p) =>
                ready(p) &&
                !p.metadata.deletionTimestamp &&
                String(p.spec.containers[0]?.image).endsWith(`:${TO}`),
            );
          return done ? "" : undefined;
        },
        UPGRADE_TIMEOUT_MS,
        1000,
      );
      const totalMs = performance.now() - t0;
      if (skipped) {
        say(`${strategy}: skipped: ${skipped}`);
        await load.stop({ verifyTimeoutMs: 60_000 });
        load = undefined;
        return { strategy, skipped };
      }
      say(
        `${strategy}: upgraded in ${seconds(totalMs)}; the client must write again, then every write is read back`,
      );
      await load.acknowledgedMore(20, 120_000);
      const report = await load.stop();
      load = undefined;
      say(`${strategy}: ${summarizeLoad(report)}`);
      if (report.errors.length) say(`${strategy}: client failures: ${JSON.stringify(report.errors)}`);
      return { strategy, totalMs, load: report, extraBytes: peakBytes - beforeBytes, beforeBytes };
    } finally {
      clearInterval(ipTimer);
    }
  } catch (e) {
    if (op && process.env["BENCH_DUMP"]) say(op.output());
    throw e;
  } finally {
    if (load) await load.stop({ verifyTimeoutMs: 5000 }).catch(() => undefined);
    await op?.stop();
    removeTempDir(dir);
    // Its pods would compete for the two cores with the next strategy's.
    await client.delete(NAMESPACE, ns).catch(() => undefined);
    await until(
      `the pods of ${ns} to go`,
      async () => ((await client.list(POD, { namespace: ns })).items.length === 0 ? true : undefined),
      300_000,
      2000,
    ).catch(() => say(`${ns} still has pods; going on`));
  }
}

// --- main ---------------------------------------------------------------------------------------

const node = await startNode({ log: say });
const outcomes: Outcome[] = [];
try {
  const client = new KubeClient(loadKubeConfig(node.kubeconfigPath), "bench-upgrade");
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
  for (const s of STRATEGIES) {
    try {
      outcomes.push(await runStrategy(node, client, s));
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      say(`${s}: failed: ${why}`);
      outcomes.push({ strategy: s, skipped: `failed: ${why.split("\n")[0]}` });
    }
  }
  client.close();

  const out = (l: string) => process.stdout.write(`${l}\n`);
  out(
    `\nOpenBao upgrade benchmark: ${REPLICAS} voters, ${FROM} → ${TO}, on the local node (real pods), KV load through the client Service`,
  );
  const header = [
    "strategy",
    "total time",
    "client error window",
    "time failing",
    "writes acked/attempted",
    "writes lost",
    "leader changes",
    "extra storage",
  ];
  const rows = outcomes
    .filter((o) => !o.skipped)
    .map((o) => [
      o.strategy,
      seconds(o.totalMs!),
      seconds(o.load!.failureWindowMs),
      seconds(o.load!.failedTimeMs),
      `${o.load!.writesAcknowledged}/${o.load!.writesAttempted}`,
      `${o.load!.lostWrites}${o.load!.unverified ? ` (+${o.load!.unverified} unverified)` : ""}`,
      String(o.load!.leaderChanges),
      `${mib(o.extraBytes!)} (of ${mib(o.beforeBytes!)})`,
    ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  out(line(header));
  out(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows) out(line(r));
  for (const o of outcomes.filter((o) => o.skipped)) out(`${o.strategy}: skipped — ${o.skipped}`);
} finally {
  const left = await node.stop();
  if (left.length) say(`node teardown left: ${left.join("; ")}`);
}
