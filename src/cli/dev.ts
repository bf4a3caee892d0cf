import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { allKinds } from "../apis/index.js";
import { CUSTOM_RESOURCE_DEFINITION, NAMESPACE, SERVICE_ACCOUNT } from "../runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../runtime/client.js";
import type { KubeObject } from "../runtime/types.js";
import { BAO_DEFAULT_VERSION } from "../testenv/cache.js";
import { startControlPlane } from "../testenv/controlplane.js";
import { handOverSignals, survivePipeLoss } from "../testenv/hooks.js";
import { type LocalNode, startNode } from "../testenv/node/node.js";
import { ensureNodeHost } from "../testenv/node/preflight.js";
import { baoCall, configureKubernetesAuth, startDevOpenBao } from "../testenv/openbao.js";
import { trackChild } from "../testenv/processes.js";
import { makeTempDir, removeTempDir } from "../testenv/tempdirs.js";
import { CHART_NAMESPACE, CHART_RELEASE, installByChart } from "./dev-chart.js";
import { GITLAB_HOOK_ACCOUNT, gitlabSampleForLocalNode, prepareGitLab, watchGitLab } from "./dev-gitlab.js";
import { startOpenBaoTargetInNode, watchFormation } from "./dev-openbao.js";
import { openBaoSampleForLocalNode } from "./dev-samples.js";
import {
  createWebhookConfiguration,
  type DevWebhook,
  freePort,
  waitForCaBundles,
  webhookSection,
} from "./dev-webhook.js";
import { readManifests } from "./manifests.js";
import { PodSummary } from "./pod-summary.js";
import { prettyLines } from "./pretty-log.js";
import { startOperator } from "./run.js";
import { waitForSignal } from "./signals.js";
import {
  implementedTargetOf,
  kindsOf,
  optionalKindOf,
  optionalKindsOf,
  reservedTargetOf,
} from "./targets.js";

export const devHelp = `Usage: platform-operator dev [--no-node | --node | --chart] [--no-samples] [--exit-after SECONDS]   (npm start)

The local default: on this machine, with nothing else installed, it
  1. builds or reuses the cached binaries: kube-apiserver, etcd, OpenBao, and for the local node
     kubelet, containerd, runc, CNI plugins, CoreDNS (first run: minutes),
  2. starts a local node (control plane, kubelet, containerd, kube-proxy, CoreDNS, in a network
     namespace of its own) and a dev-mode OpenBao on loopback; where a node cannot run here (it
     needs root) it says what is missing and starts only etcd + kube-apiserver on loopback,
  3. installs the CRDs and applies the samples from deploy/samples/ whose kinds a running target
     reconciles: VaultSeed (the vault target, against the dev OpenBao) and, on the local node,
     OpenBaoCluster (the openbao target, whose pods need the node) and GitLabCore (the gitlab
     target, with the project's bundled fixture chart: not GitLab itself, but the real chart's
     hook shapes, so its shared-secrets hooks run in Helm's order); it names the samples it leaves
     out and why, and the changes the samples need on this machine (version of the image on the
     node, no backups, operator initialization; a fixture chart version, no Gateway API),
  4. runs the operator in the foreground with readable logs, and prints the OpenBao cluster's
     progress as it forms (pods, initialized, Raft voters as OpenBao lists them, active leader),
     the GitLabCore's (version resolved, hooks, objects applied, readiness) and a summary of the
     node's pods when they change, until Ctrl-C, then stops everything.

  --no-node             only etcd + kube-apiserver on loopback: no pods run (npm start -- --no-node)
  --node                insist on the node: fail, saying what is missing, where it cannot run
  --chart               install the operator by its Helm chart on the local node instead: its image
                        built from this working tree's dist/, two replicas in pods under Pod Security
                        restricted, the vault target logging in with its projected token; follows the
                        pods' logs (npm start -- --chart; needs the node, so root)
  --no-samples          start with no objects
  --exit-after SECONDS  stop by itself after this long (for scripted checks)

To run against a real cluster instead:

  platform-operator crds | kubectl apply -f -
  platform-operator run --config operator.yaml --kubeconfig ~/.kube/config

where operator.yaml names the targets, their namespaces and backends, e.g.

  targets:
    vault:
      namespaces: [vault-operator-system]
      backend:
        address: https://openbao.example:8200
        auth:
          kubernetes: { role: ohmlab-controller, audience: vault, tokenFile: /var/run/secrets/ohmlab/token }

See 'platform-operator run --help'.`;

const OPERATOR_NAMESPACE = "platform-operator-system";
/** Runs in this process: needs nothing but the dev OpenBao on loopback. */
const IN_PROCESS_TARGETS = ["vault"];
/** Runs inside the local node's network, where its OpenBao pods are: only with a node. */
const NODE_TARGETS = ["openbao"];
/** Runs in this process but needs the node: its hook Jobs and workloads are pods. */
const IN_PROCESS_NODE_TARGETS = ["gitlab"];
/** The openbao process's webhook port on the node's address (the node's own components use others). */
const NODE_WEBHOOK_PORT = 9443;
const SAMPLES = fileURLToPath(new URL("../../../deploy/samples", import.meta.url));

const say = (line: string) => process.stderr.write(`[dev] ${line}\n`);

export async function devCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      node: { type: "boolean" },
      chart: { type: "boolean" },
      "no-node": { type: "boolean" },
      "no-samples": { type: "boolean" },
      "exit-after": { type: "string" },
    },
    strict: true,
  });
  survivePipeLoss();
  const started = Date.now();
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    let cp: { kubeconfigPath: string; server: string; caPem: string };
    let node: LocalNode | undefined;
    if (values.node && values["no-node"]) throw new Error("--node and --no-node: choose one");
    if (values.chart && values["no-node"])
      throw new Error("--chart installs the operator on the local node: it cannot go with --no-node");
    const exitAfter = values["exit-after"] ? Number(values["exit-after"]) * 1000 : undefined;
    if (exitAfter !== undefined && !(exitAfter > 0))
      throw new Error("--exit-after: must be a number of seconds");
    let onNode = !values["no-node"];
    if (onNode) {
      const missing = await ensureNodeHost(say);
      if (missing.length > 0) {
        if (values.node || values.chart)
          throw new Error(`the local node cannot run here; missing: ${missing.join("; ")}`);
        say(`no local node (missing: ${missing.join("; ")}); running on a control plane only`);
        onNode = false;
      }
    }
    if (onNode) {
      say("starting the local node (control plane, containerd, kubelet, kube-proxy, CoreDNS)...");
      const local = await startNode({ log: (l) => say(l) });
      node = local;
      cleanups.push(async () => {
        await local.stop();
      });
      cleanups.push(showPods(local.binaries.kubectl, local.kubeconfigPath));
      cp = local;
    } else {
      say("starting the local control plane (etcd + kube-apiserver)...");
      const plane = await startControlPlane({ log: (l) => say(l) });
      cleanups.push(() => plane.stop());
      cp = plane;
    }
    if (values.chart && node) {
      const samples = pickSamples(values["no-samples"] === true, IN_PROCESS_TARGETS, true);
      const chart = await installByChart({ node, samples, say, cleanups });
      say(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      say(`  kubeconfig:  ${cp.kubeconfigPath}`);
      say(`  OpenBao:     ${chart.baoAddr} (dev root token: ${chart.baoRootToken})`);
      say(`  operator:    helm release ${CHART_RELEASE}, deployment ${CHART_NAMESPACE}/${chart.deployment}`);
      say("Ctrl-C stops OpenBao and the node, with the operator's pods on it.");
      handOverSignals();
      await waitOrExit(exitAfter);
      say("stopping...");
      return 0;
    }
    say("starting OpenBao in dev mode...");
    const bao = await startDevOpenBao();
    cleanups.push(() => bao.stop());
    // The samples' paths live under the "ohmlab" KV v2 mount, as on the platform.
    await baoCall(bao.addr, bao.rootToken, "POST", "sys/mounts/ohmlab", {
      type: "kv",
      options: { version: "2" },
    });

    const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "platform-operator-dev");
    cleanups.push(async () => client.close());
    for (const k of allKinds)
      await client.apply(CUSTOM_RESOURCE_DEFINITION, k.crd as unknown as KubeObject, {
        fieldManager: "platform-operator-dev",
        force: true,
      });
    await waitServed(client);
    say(`installed ${allKinds.length} CRDs`);

    const targets = [...IN_PROCESS_TARGETS, ...(node ? [...NODE_TARGETS, ...IN_PROCESS_NODE_TARGETS] : [])];
    const samples = pickSamples(values["no-samples"] === true, targets, node !== undefined);
    const namespacesOf = (kinds: string[]) =>
      samples
        .filter((s) => kinds.includes(s.kind ?? ""))
        .map((s) => s.metadata.namespace)
        .filter((n): n is string => !!n);
    const vaultNamespaces = [...new Set([OPERATOR_NAMESPACE, ...namespacesOf(kindsOf(IN_PROCESS_TARGETS))])];
    // With no OpenBaoCluster sample (--no-samples) the target still watches a namespace of its own.
    const openbaoNamespaces = node ? [...new Set(namespacesOf(kindsOf(NODE_TARGETS)))] : [];
    if (node && openbaoNamespaces.length === 0) openbaoNamespaces.push("openbao");
    const gitlabNamespaces = node ? [...new Set(namespacesOf(kindsOf(IN_PROCESS_NODE_TARGETS)))] : [];
    if (node && gitlabNamespaces.length === 0) gitlabNamespaces.push("gitlab-system");
    const namespaces = new Set([...vaultNamespaces, ...openbaoNamespaces, ...gitlabNamespaces]);
    for (const ns of namespaces)
      await client.apply(
        NAMESPACE,
        { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
        { fieldManager: "platform-operator-dev" },
      );
    await client.apply(
      SERVICE_ACCOUNT,
      {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "platform-operator-vault", namespace: OPERATOR_NAMESPACE },
      },
      { fieldManager: "platform-operator-dev" },
    );
    // The vault target logs in the way it does in a cluster: Kubernetes auth, audience "vault".
    await configureKubernetesAuth(
      { addr: bao.addr, rootToken: bao.rootToken },
      { server: cp.server, caPem: cp.caPem, kubeconfigPath: cp.kubeconfigPath },
      {
        role: "ohmlab-controller",
        serviceAccount: "platform-operator-vault",
        namespace: OPERATOR_NAMESPACE,
        audience: "vault",
        policies: ["ohmlab-controller"],
        policyHcl: {
          "ohmlab-controller": `path "ohmlab/data/platforms/+/+/*" { capabilities = ["create", "read", "update"] }
path "ohmlab/metadata/platforms/+/+/*" { capabilities = ["create", "read", "update", "delete"] }`,
        },
        ttl: "15m",
      },
    );

    if (node) {
      // The in-process gitlab target reads its chart source from the environment, as in a cluster.
      const gitlab = await prepareGitLab(client, gitlabNamespaces, say);
      Object.assign(process.env, gitlab.env);
      cleanups.push(async () => gitlab.remove());
    }

    // Removed by the exit hook too, so a crash or a dead terminal cannot leave it behind.
    const dir = makeTempDir("dev");
    cleanups.push(async () => removeTempDir(dir));
    const configPath = join(dir, "operator.yaml");
    // Each process serves the admission webhook of its kinds; the API server dials the host process
    // at the host's end of the node's link (or loopback without a node), the openbao one at the node.
    const hostIp = node ? node.addresses.hostIp : "127.0.0.1";
    const hostHook: DevWebhook = {
      name: "platform-operator-dev",
      host: hostIp,
      port: await freePort(hostIp),
      targets: [...IN_PROCESS_TARGETS, ...(node ? IN_PROCESS_NODE_TARGETS : [])],
    };
    const nodeHook: DevWebhook | undefined = node && {
      name: "platform-operator-dev-openbao",
      host: node.addresses.nodeIp,
      port: NODE_WEBHOOK_PORT,
      targets: NODE_TARGETS,
    };
    const hooks = nodeHook ? [hostHook, nodeHook] : [hostHook];
    for (const h of hooks) await createWebhookConfiguration(client, h);
    await writeFile(
      configPath,
      devConfig(bao.addr, vaultNamespaces, gitlabNamespaces) + webhookSection(hostHook, OPERATOR_NAMESPACE),
    );

    const pretty = prettyLines();
    pretty.pipe(process.stdout);
    const op = await startOperator({
      configPath,
      kubeconfig: cp.kubeconfigPath,
      probePort: 0,
      logStream: pretty,
    });
    cleanups.push(() => op.stop());
    if (node) {
      const stopOpenBao = await startOpenBaoTargetInNode({
        inCluster: node.inCluster,
        kubeconfigPath: node.kubeconfigPath,
        dir,
        operatorNamespace: OPERATOR_NAMESPACE,
        namespaces: openbaoNamespaces,
        extraConfig: nodeHook && webhookSection(nodeHook, OPERATOR_NAMESPACE),
      });
      cleanups.push(stopOpenBao);
    }
    await waitForCaBundles(
      client,
      hooks.map((h) => h.name),
      60_000,
    );
    for (const h of hooks)
      say(
        `admission webhook of ${h.targets.join(", ")}: https://${h.host}:${h.port}/validate (failurePolicy Fail)`,
      );
    const appliedAt = Date.now();
    for (const s of samples) {
      const type = await client.resources.find(s.apiVersion ?? "", s.kind ?? "");
      if (!type) throw new Error(`sample ${s.kind}/${s.metadata.name}: kind not served`);
      await untilWebhookCalled(() => client.apply(type, s, { fieldManager: "platform-operator-dev" }));
    }
    if (samples.length) say(`applied ${samples.length} sample objects from deploy/samples/`);
    if (node) {
      say(`gitlab target: in this process (watching ${gitlabNamespaces.join(", ")})`);
      for (const s of samples.filter((x) => x.kind === "GitLabCore"))
        cleanups.push(
          watchGitLab(
            client,
            { name: s.metadata.name ?? "", namespace: s.metadata.namespace ?? "default" },
            say,
          ),
        );
      say(`openbao target: its own process in the node's network (watching ${openbaoNamespaces.join(", ")})`);
      for (const s of samples.filter((x) => x.kind === "OpenBaoCluster"))
        cleanups.push(
          watchFormation(
            client,
            { name: s.metadata.name ?? "", namespace: s.metadata.namespace ?? "default" },
            say,
            appliedAt,
          ),
        );
    }
    say(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    say(`  kubeconfig:  ${cp.kubeconfigPath}`);
    say(`  OpenBao:     ${bao.addr} (dev root token: ${bao.rootToken})`);
    say(`  metrics:     http://127.0.0.1:${op.probePort}/metrics   probes: /healthz /readyz`);
    say(`  config:      ${configPath}`);
    say(`Ctrl-C stops the operator, OpenBao and the ${node ? "local node" : "control plane"}.`);

    // From here Ctrl-C stops the operator first (releasing its Lease), then OpenBao and the control
    // plane; during start-up it still ends everything at once.
    handOverSignals();
    await waitOrExit(exitAfter);
    say("stopping...");
    return 0;
  } finally {
    await cleanup();
    say("stopped");
  }
}

/**
 * The API server takes up a webhook configuration's new caBundle a moment after it is written
 * (its informer); until then calling the webhook fails TLS and the write is refused. Such a refusal
 * is retried for a while; the webhook's own refusals, and any other error, are not.
 */
async function untilWebhookCalled<T>(write: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await write();
    } catch (e) {
      const uncalled = /failed calling webhook/.test((e as Error).message);
      if (!uncalled || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function waitOrExit(exitAfterMs: number | undefined): Promise<void> {
  await (exitAfterMs
    ? Promise.race([waitForSignal(), new Promise((r) => setTimeout(r, exitAfterMs))])
    : waitForSignal());
}

/**
 * The samples whose kinds one of `targets` reconciles, an OpenBaoCluster adjusted for the local node;
 * the others are named with the reason they are left out (an object nothing acts on would look like
 * a stuck operator).
 */
/** Which security profile the OpenBaoCluster sample runs with, and what that means here. */
function profileLine(sample: KubeObject): string {
  const profile = (sample["spec"] as Record<string, unknown> | undefined)?.["profile"];
  if (profile === "Development")
    return "spec.profile Development (status SecurityRisk=True and hourly warning events say so; not for production)";
  if (profile === "Hardened") return "spec.profile Hardened (ProductionReady tells what is still missing)";
  return "spec.profile not set (ProductionReady=False, ProfileNotSet; set Development or Hardened)";
}

/** The kinds a target reconciles only when configured to, and how (npm start leaves them off). */
function optionalLine(target: string): string {
  return optionalKindsOf(target)
    .map(({ kind, when }) => `; ${kind} off: needs ${when}`)
    .join("");
}

function pickSamples(none: boolean, targets: string[], nodeRunning: boolean): KubeObject[] {
  const running = kindsOf(targets);
  say(
    `targets running: ${targets.map((t) => `${t} (${kindsOf([t]).join(", ")}${optionalLine(t)})`).join("; ")}`,
  );
  const samples: KubeObject[] = [];
  for (const d of none ? [] : readManifests([SAMPLES])) {
    let sample = d.doc as KubeObject;
    if (running.includes(sample.kind ?? "")) {
      if (sample.kind === "OpenBaoCluster") {
        const local = openBaoSampleForLocalNode(sample, BAO_DEFAULT_VERSION);
        sample = local.doc;
        for (const c of local.changes) say(`${relative(process.cwd(), d.file)} on the local node: ${c}`);
        say(`${relative(process.cwd(), d.file)}: ${profileLine(sample)}`);
      }
      if (sample.kind === "GitLabCore") {
        const local = gitlabSampleForLocalNode(sample);
        sample = local.doc;
        for (const c of local.changes) say(`${relative(process.cwd(), d.file)} on the local node: ${c}`);
      }
      samples.push(sample);
    } else {
      const reserved = reservedTargetOf(sample.kind ?? "");
      const optional = optionalKindOf(sample.kind ?? "");
      const idle = implementedTargetOf(sample.kind ?? "");
      const why =
        idle && NODE_TARGETS.includes(idle) && !nodeRunning
          ? `its target "${idle}" runs OpenBao pods, which need the local node (not running)`
          : idle && IN_PROCESS_NODE_TARGETS.includes(idle) && !nodeRunning
            ? `its target "${idle}" runs hook Jobs and workloads in pods, which need the local node (not running)`
            : idle
              ? `its target "${idle}" is not part of npm start's local default yet`
              : optional
                ? `its target "${optional.target}" provisions it only with ${optional.when}, which npm start leaves off`
                : reserved
                  ? `its target "${reserved}" is not implemented yet`
                  : "no target serves its kind";
      say(
        `not applying ${relative(process.cwd(), d.file)} (${sample.kind}): ${why}, nothing would reconcile it`,
      );
    }
  }
  return samples;
}

/** How long the node's pods are left to settle before their summary is printed. */
const POD_SUMMARY_MS = 2000;

/** Prints the node's pods per namespace as they settle (kubectl's own watch, summarised); returns its stop. */
function showPods(kubectl: string, kubeconfig: string): () => Promise<void> {
  const child = spawn(
    kubectl,
    [
      "--kubeconfig",
      kubeconfig,
      "get",
      "pods",
      "--all-namespaces",
      "--watch",
      "--output-watch-events",
      "--no-headers",
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  trackChild(child, "kubectl get pods --watch");
  const summary = new PodSummary();
  let timer: NodeJS.Timeout | undefined;
  const print = () => {
    timer = undefined;
    for (const line of summary.flush()) say(line);
  };
  let rest = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString("utf8")).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) summary.observe(line);
    timer ??= setTimeout(print, POD_SUMMARY_MS);
  });
  return async () => {
    if (timer) clearTimeout(timer);
    print();
    child.kill("SIGTERM");
  };
}

function devConfig(baoAddr: string, namespaces: string[], gitlabNamespaces: string[]): string {
  const gitlab = gitlabNamespaces.length
    ? `  gitlab:
    namespaces: [${gitlabNamespaces.join(", ")}]
    serviceAccountName: ${GITLAB_HOOK_ACCOUNT} # the shared-secrets hook runs as it
`
    : "";
  return `# Written by 'platform-operator dev' for the local default.
leaderElection:
  enabled: true
  namespace: ${OPERATOR_NAMESPACE}
targets:
  vault:
    namespaces: [${namespaces.join(", ")}]
    backend:
      address: ${baoAddr}
      allowHttp: true # the local dev OpenBao listens on plain HTTP, on loopback
      auth:
        kubernetes:
          role: ohmlab-controller
          audience: vault
          serviceAccount: { namespace: ${OPERATOR_NAMESPACE}, name: platform-operator-vault }
${gitlab}`;
}

async function waitServed(client: KubeClient): Promise<void> {
  for (let i = 0; i < 200; i++) {
    client.resources.refresh();
    const found = await Promise.all(
      allKinds.map((k) => client.resources.find(`${k.group}/${k.version}`, k.kind)),
    );
    if (found.every(Boolean)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the CRDs were not served within 20 s");
}
