import assert from "node:assert/strict";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { type SharedNode, sharedNode } from "../../src/testenv/node/shared.js";
import {
  baoCall,
  configureKubernetesAuth,
  type DevOpenBao,
  startDevOpenBao,
} from "../../src/testenv/openbao.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { poll } from "../support/openbao-operator.js";
import { block, runShell, section, shellBlocks, toolDir } from "../support/runbook.js";
import { startTricklingProxy, type TricklingProxy } from "../support/trickling-proxy.js";

// docs/runbooks/operator.md tried on the local node, where the operator runs as the chart installs
// it: release platform-operator in platform-operator-system (the names the runbook's commands
// read), the chart's two replicas of the vault target from the image built out of this tree, its
// backend a dev OpenBao inside the node's network behind a proxy the test controls. The sections'
// shell blocks run as a reader pastes them, with TARGET=vault (and vaultseed.md's intro, which reads
// the same process's log):
// - Reconcile stale: the leader's answers from OpenBao crawl (one byte every two seconds, so no
//   idle timeout ends them), so its pass never ends while it keeps renewing its Lease; the
//   section's commands save the stuck pod's log and delete it, and the other replica takes over
//   and reconciles what waited.
// - Controller down: the chart's Lease Role deleted, so no replica can hold the Lease; the intro's
//   commands show the Lease with no live holder and the log naming the refused Lease; the
//   section's act puts the release's objects back and a replica leads and reconciles again.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
const RELEASE = "platform-operator";
const SYS = "platform-operator-system";
const TARGET = "vault";
const PROCESS = `${RELEASE}-${TARGET}`;
/** The Lease the vault target's manager takes: <leaderElection.leaseName>-<target>. */
const LEASE = `${PROCESS}-${TARGET}`;
/** The runtime's default lease duration, as the section states it. */
const LEASE_SECONDS = 15;
/** Slack over a documented bound on a loaded 2-core machine (the API server, kubelet and pods share it). */
const SLACK_MS = 45_000;
const SCRAPER = "runbook-scrape";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const dump = (what: string, out: string) => {
  if (process.env["RUNBOOK_TEST_DUMP"]) process.stdout.write(`# ${what}:\n${out.replace(/^/gm, "#   ")}\n`);
};

describe("operator runbook on the local node: Reconcile stale, Controller down", {
  timeout: 18 * 60_000,
}, () => {
  let node: SharedNode;
  let ctx: NodeNamespace;
  let bao: DevOpenBao | undefined;
  let proxy: TricklingProxy | undefined;
  let helm = "";
  let dir = "";
  let installed = false;
  let env: Record<string, string> = {};

  const sys = async (args: string[], input?: string) =>
    (await runCommand(node.kubectl, ["--kubeconfig", node.kubeconfigPath, "-n", SYS, ...args], { input }))
      .stdout;
  const lease = async (): Promise<Json> => JSON.parse(await sys(["get", "lease", LEASE, "-o", "json"]));
  /** The holder, when it renewed within its lease duration (as a standby judges it), else undefined. */
  const liveHolder = async (): Promise<string | undefined> => {
    const spec = (await lease()).spec ?? {};
    const renewed = Date.parse(spec.renewTime ?? "");
    const live = Date.now() - renewed < (spec.leaseDurationSeconds ?? LEASE_SECONDS) * 1000;
    return live && spec.holderIdentity ? (spec.holderIdentity as string) : undefined;
  };
  const seedPath = (name: string) => `ohmlab/platforms/runbook/${ctx.namespace}/${name}`;
  const applySeed = (name: string) =>
    ctx.apply({
      apiVersion: "ohmlab.fr/v1alpha1",
      kind: "VaultSeed",
      metadata: { name },
      spec: { path: seedPath(name), data: { password: "<random:16>" } },
    });
  /** Ready True for the seed's generation: a pass completed, and OpenBao holds the path. */
  const reconciled = async (name: string, timeoutMs: number) => {
    await poll(
      async () => {
        const o = await ctx.getJson(`vaultseed/${name}`);
        const ready = (o.status?.conditions ?? []).find((c: Json) => c.type === "Ready");
        return ready?.status === "True" && ready.observedGeneration === o.metadata.generation ? o : undefined;
      },
      timeoutMs,
      `VaultSeed ${name} to be reconciled (Ready True)`,
    );
    const kv = await baoCall(bao!.addr, bao!.rootToken, "GET", `ohmlab/data/${seedPath(name).slice(7)}`);
    assert.equal(typeof kv.data?.data?.password, "string", `OpenBao holds ${name}'s password`);
  };
  const statusOf = async (name: string): Promise<Json | undefined> =>
    (await ctx.getJson(`vaultseed/${name}`)).status;
  let scrapeToken = "";
  /** A pod's /metrics as Prometheus reads it: HTTPS from the pod network, a token allowed GET /metrics. */
  const scrape = async (podIp: string): Promise<string> => {
    const get = `fetch("https://${podIp}:8443/metrics", { headers: { authorization: "Bearer " + process.env.TOKEN } })
      .then(async (r) => { if (!r.ok) throw new Error("HTTP " + r.status); process.stdout.write(await r.text()); })`;
    const [cmd, ...args] = node.inCluster([process.execPath, "-e", get]);
    // The operator's /metrics certificate is self-signed: the token decides access, as in the chart's PodMonitor.
    return (
      await runCommand(cmd!, args, {
        env: { ...process.env, TOKEN: scrapeToken, NODE_TLS_REJECT_UNAUTHORIZED: "0" },
      })
    ).stdout;
  };
  /** The sum of a metric's samples that carry `labels` (an exposition line per series). */
  const sample = (text: string, name: string, labels: Record<string, string> = {}): number => {
    const lines = text
      .split("\n")
      .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
      .filter((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
    assert.ok(lines.length > 0, `/metrics has ${name} ${JSON.stringify(labels)}`);
    return lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  };

  before(async () => {
    node = await sharedNode();
    ctx = await nodeNamespace("oprun");
    helm = await ensureHelm();
    dir = await toolDir(node.kubectl);
    symlinkSync(helm, join(dir, "helm"));
    env = { TARGET, PATH: `${dir}:${process.env.PATH}`, KUBECONFIG: node.kubeconfigPath };

    // The backend: a dev OpenBao inside the node's network, reached by the pods through the proxy.
    bao = await startDevOpenBao({ host: node.addresses.nodeIp, wrap: (argv) => node.inCluster(argv) });
    await baoCall(bao.addr, bao.rootToken, "POST", "sys/mounts/ohmlab", {
      type: "kv",
      options: { version: "2" },
    });
    await configureKubernetesAuth(bao, node, {
      role: PROCESS,
      serviceAccount: PROCESS,
      namespace: SYS,
      audience: "vault",
      policies: ["runbook"],
      policyHcl: {
        runbook: `path "ohmlab/data/platforms/runbook/*" { capabilities = ["create", "read", "update"] }
path "ohmlab/metadata/platforms/runbook/*" { capabilities = ["create", "read", "update", "delete"] }`,
      },
      ttl: "15m",
    });
    proxy = await startTricklingProxy(node, bao.addr, 2_000);

    await runCommand(node.kubectl, ["--kubeconfig", node.kubeconfigPath, "create", "namespace", SYS]);
    const targets = {
      vault: {
        enabled: true,
        namespaces: [ctx.namespace],
        config: {
          backend: {
            address: `http://${proxy.address}`,
            allowHttp: true, // plain HTTP inside the node's network only
            auth: { kubernetes: { role: PROCESS, audience: "vault" } },
          },
        },
      },
    };
    const t = performance.now();
    installed = true;
    await runCommand(helm, [
      "install",
      RELEASE,
      CHART,
      "--kubeconfig",
      node.kubeconfigPath,
      "--namespace",
      SYS,
      "--set-json",
      `targets=${JSON.stringify(targets)}`,
      "--set",
      "image.pullPolicy=Never",
      "--wait",
      "--timeout",
      "5m",
    ]);
    // A reader allowed GET /metrics and nothing else, as Prometheus is given by the chart's PodMonitor.
    await sys(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "List",
        items: [
          { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: SCRAPER, namespace: SYS } },
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: SCRAPER },
            rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
          },
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: SCRAPER },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: SCRAPER },
            subjects: [{ kind: "ServiceAccount", name: SCRAPER, namespace: SYS }],
          },
        ],
      }),
    );
    scrapeToken = (await sys(["create", "token", SCRAPER, "--duration=1h"])).trim();
    const deploy = JSON.parse(await sys(["get", `deployment/${PROCESS}`, "-o", "json"]));
    assert.equal(deploy.status.availableReplicas, 2, "the chart's two replicas run");
    await applySeed("first");
    await reconciled("first", 120_000);
    process.stdout.write(
      `# chart installed and a VaultSeed reconciled in ${((performance.now() - t) / 1000).toFixed(1)} s\n`,
    );
  });

  after(async () => {
    if (process.env["RUNBOOK_TEST_DUMP"] && node)
      process.stdout.write(
        await runCommand(node.kubectl, [
          "--kubeconfig",
          node.kubeconfigPath,
          "-n",
          SYS,
          "logs",
          "-l",
          `app.kubernetes.io/instance=${RELEASE}`,
          "--tail=-1",
          "--prefix",
        ])
          .then((r) => r.stdout.replace(/^/gm, "# "))
          .catch(() => ""),
      );
    if (installed)
      await runCommand(helm, [
        "uninstall",
        RELEASE,
        "--kubeconfig",
        node.kubeconfigPath,
        "--namespace",
        SYS,
      ]).catch(() => {});
    if (node)
      for (const what of [
        ["clusterrolebinding", SCRAPER],
        ["clusterrole", SCRAPER],
        ["namespace", SYS],
      ])
        await runCommand(node.kubectl, [
          "--kubeconfig",
          node.kubeconfigPath,
          "delete",
          ...what,
          "--ignore-not-found",
          "--wait=false",
        ]).catch(() => {});
    await deleteNamespace(ctx);
    await proxy?.stop();
    await bao?.stop();
    if (dir) removeTempDir(dir);
  });

  it("vaultseed.md's intro reads the chart's vault process as installed", async () => {
    const out = await runShell(
      shellBlocks("vaultseed.md", "")[0]!,
      { ...env, NS: ctx.namespace, NAME: "first" },
      true,
    );
    dump("vaultseed.md intro", out);
    assert.doesNotMatch(out, /^(error|Error from server)/m, `every command of the intro runs:\n${out}`);
    assert.match(out, new RegExp(`^${ctx.namespace}\\s+first\\s`, "m"), "the seed is listed");
    assert.match(out, /^Name:\s+first$/m, "and described");
    // The operator's log, filtered as the block does: its lines about VaultSeeds.
    assert.match(out, /^\{.*"resource":"vaultseeds"/m, "the vault process's log is read");
  });

  it("Reconcile stale: a leader whose pass never ends; the section's commands save its log and restart it, another replica reconciles what waited", async () => {
    const holder = await liveHolder();
    assert.ok(holder, "a replica leads");
    const pod = holder.split("_")[0]!;
    const podIp = JSON.parse(await sys(["get", "pod", pod, "-o", "json"])).status.podIP as string;

    // Broken: every answer OpenBao sends to the leader crawls, so its next pass never ends.
    proxy!.stick(podIp);
    const stuckAt = Date.now();
    await applySeed("stuck");
    await poll(
      async () => (proxy!.stuckAnswers(podIp) > 0 ? true : undefined),
      60_000,
      "the leader's pass to wait on a crawling answer",
    );
    await applySeed("pending");
    // It still leads: the same holder renews its Lease past a whole lease duration after the stall.
    await poll(
      async () => {
        const spec = (await lease()).spec;
        if (spec.holderIdentity !== holder) throw new Error(`the holder changed to ${spec.holderIdentity}`);
        return Date.parse(spec.renewTime) - stuckAt > (LEASE_SECONDS + 5) * 1000 ? true : undefined;
      },
      120_000,
      "the stuck leader to renew its Lease past one lease duration",
    );
    assert.equal(await liveHolder(), holder, "the stuck replica leads");
    for (const name of ["stuck", "pending"])
      assert.equal((await statusOf(name))?.observedGeneration, undefined, `${name} has not been reconciled`);
    // What the section's check reads and the alert's expression is made of, on the leader's /metrics:
    // it leads, a worker is busy, and the last completed reconcile is from before the stall.
    const stale = await scrape(podIp);
    assert.equal(sample(stale, "leader_election_master_status", { name: LEASE }), 1);
    const busy = /^controller_runtime_active_workers\{controller="([^"]+)"[^}]*\} (\d+)$/m.exec(stale);
    assert.ok(busy && Number(busy[2]) >= 1, `a worker is in a pass:\n${busy?.[0]}`);
    const last = sample(stale, "ohmlab_last_reconcile_completed_timestamp_seconds", { target: TARGET });
    assert.ok(
      last * 1000 < stuckAt,
      `the last completed reconcile (${last}) is from before the stall (${stuckAt / 1000})`,
    );
    const finished = sample(stale, "controller_runtime_reconcile_total", { controller: busy[1]! });
    process.stdout.write(
      `# reconcile stale on /metrics: active workers ${busy[2]}, reconciles ${finished}, last completed ${((Date.now() - last * 1000) / 1000).toFixed(1)} s before\n`,
    );

    // The intro lists the pods and the Lease naming the stuck replica.
    const overview = await runShell(shellBlocks("operator.md", "")[0]!, env, true);
    dump("intro", overview);
    assert.doesNotMatch(overview, /^error:/m, `every command of the intro runs:\n${overview}`);
    assert.match(overview, new RegExp(`^${LEASE}\\s+${holder}\\s`, "m"), overview);
    assert.match(overview, new RegExp(`^pod/${pod}\\s+1/1\\s+Running\\s`, "m"), overview);

    // Act: the section's block as written, in a folder of its own (it writes stuck-$POD.log there).
    const act = block("operator.md", "Reconcile stale", "POD=");
    const cwd = makeTempDir("runbook-stale");
    try {
      const acted = Date.now();
      const out = await runShell(act, env, false, cwd);
      dump("act", out);
      assert.match(out, new RegExp(`pod "${pod}" deleted`), out);
      const saved = join(cwd, `stuck-${pod}.log`);
      assert.ok(existsSync(saved), `the block saved stuck-${pod}.log:\n${out}`);
      // The stuck pod's own log: the line where it took the Lease under the identity the Lease named.
      const log = readFileSync(saved, "utf8");
      const took = log
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Json)
        .find((l) => l.msg === "became leader");
      assert.equal(took?.identity, holder, `the saved log is the stuck leader's:\n${log.slice(0, 2000)}`);

      // Another replica takes the Lease, and reconciles what waited.
      const next = await poll(
        async () => {
          const h = await liveHolder();
          return h && h !== holder ? h : undefined;
        },
        LEASE_SECONDS * 1000 + SLACK_MS,
        "another replica to take the Lease",
      );
      const tookOverS = (Date.now() - acted) / 1000;
      assert.notEqual(next.split("_")[0], pod, "the new leader is another pod");
      await reconciled("stuck", 120_000);
      await reconciled("pending", 120_000);
      // The new leader's /metrics: the alert's timestamp moved past the stall.
      const nextIp = JSON.parse(await sys(["get", "pod", next.split("_")[0]!, "-o", "json"])).status.podIP;
      const fresh = sample(await scrape(nextIp), "ohmlab_last_reconcile_completed_timestamp_seconds", {
        target: TARGET,
      });
      assert.ok(fresh * 1000 > acted, "the new leader completed reconciles after the act");
      process.stdout.write(
        `# reconcile stale: new leader ${tookOverS.toFixed(1)} s after the act, both waiting seeds reconciled ${((Date.now() - acted) / 1000).toFixed(1)} s after it; ${proxy!.stuckAnswers(podIp)} answers held\n`,
      );
    } finally {
      removeTempDir(cwd);
    }
  });

  it("Controller down: the chart's Lease Role deleted; the intro shows no live holder and the refused Lease, the act restores it", async () => {
    // Broken: the Role the chart grants the Lease with is gone (deleted by hand, a policy engine).
    const broke = Date.now();
    await sys(["delete", "role", `${PROCESS}-leases`]);
    // No replica can renew or take the Lease: within the renew deadline the leader stops, and after
    // the lease duration the Lease has no live holder.
    await poll(
      async () => ((await liveHolder()) === undefined ? true : undefined),
      LEASE_SECONDS * 1000 + SLACK_MS,
      "the Lease to have no live holder",
    );
    process.stdout.write(
      `# controller down: no live holder ${((Date.now() - broke) / 1000).toFixed(1)} s after the Role went\n`,
    );

    // The intro's commands: the Lease listed, the log naming the refused Lease, as the section says.
    // The log is JSON: the quotes around the Lease's name are escaped there.
    const refused = new RegExp(`leases\\.coordination\\.k8s\\.io \\\\"${LEASE}\\\\" is forbidden`);
    let overview = "";
    await poll(
      async () => {
        overview = await runShell(shellBlocks("operator.md", "")[0]!, env, true);
        return refused.test(overview) ? true : undefined;
      },
      120_000,
      "the log shown by the intro to name the refused Lease",
    ).catch(() => assert.match(overview, refused, overview));
    dump("intro", overview);
    assert.match(overview, new RegExp(`^${LEASE}\\s`, "m"), overview);
    const quoted = section("operator.md", "Controller down");
    assert.match(quoted, /`leases\.coordination\.k8s\.io … forbidden`/, "the section quotes the log line");
    assert.equal(await liveHolder(), undefined, "no replica leads");
    // The section's check: the Lease names its last holder, renewed longer ago than it lasts.
    const lapsed = await runShell(block("operator.md", "Controller down", "renewTime"), env);
    dump("check", lapsed);
    const shown = /^(\S+) renewed (\S+), lasts (\d+)s\n(\S+)$/m.exec(lapsed);
    assert.ok(shown, `the check prints holder, renew time and duration, then the time:\n${lapsed}`);
    assert.match(shown[1]!, new RegExp(`^${PROCESS}-`), "the last holder is still named");
    const age = Date.parse(shown[4]!) - Date.parse(shown[2]!);
    assert.ok(age > Number(shown[3]) * 1000, `renewed ${age} ms before, longer than it lasts:\n${lapsed}`);

    // Act: the section's block as written.
    const fixed = Date.now();
    const out = await runShell(block("operator.md", "Controller down", "helm get manifest"), env);
    dump("act", out);
    assert.match(
      out,
      new RegExp(`role\\.rbac\\.authorization\\.k8s\\.io/${PROCESS}-leases (created|configured)`),
      out,
    );
    const leader = await poll(
      async () => liveHolder(),
      LEASE_SECONDS * 1000 + SLACK_MS,
      "a replica to take the Lease once the Role is back",
    );
    const ledS = (Date.now() - fixed) / 1000;
    await applySeed("after");
    await reconciled("after", 120_000);
    process.stdout.write(
      `# controller down: ${leader.split("_")[0]} leads ${ledS.toFixed(1)} s after the act, a new VaultSeed reconciled ${((Date.now() - fixed) / 1000).toFixed(1)} s after it\n`,
    );
  });
});
