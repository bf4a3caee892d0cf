import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { KubeObject } from "../runtime/types.js";
import { runCommand } from "../testenv/exec.js";
import { ensureHelm } from "../testenv/helm.js";
import type { LocalNode } from "../testenv/node/node.js";
import { baoCall, configureKubernetesAuth, startDevOpenBao } from "../testenv/openbao.js";
import { trackChild } from "../testenv/processes.js";
import { prettyLines } from "./pretty-log.js";

// `npm start -- --chart`: the operator as a user installs it, by its Helm chart, from the image built
// out of this working tree, in pods on the local node. Process mode (the default) runs the same code
// on the host; this mode shows what the chart grants and how the pods behave.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
export const CHART_RELEASE = "platform-operator";
export const CHART_NAMESPACE = "platform-operator-system";
/** The vault target's process in the chart's split topology: `<release>-<process>`. */
const VAULT_PROCESS = `${CHART_RELEASE}-vault`;

export interface ChartModeOptions {
  node: LocalNode;
  /** The samples to apply once the operator runs (their namespaces are the ones the chart watches). */
  samples: KubeObject[];
  say(line: string): void;
  /** Cleanups run in reverse order when dev stops. */
  cleanups: (() => Promise<void>)[];
}

export interface ChartModeResult {
  baoAddr: string;
  baoRootToken: string;
  deployment: string;
}

/**
 * Installs the chart with the vault target logging in to a dev OpenBao inside the node's network
 * (pods reach it at the node's address), waits for the operator's Deployment to be available, then
 * applies the samples and follows the operator pods' logs.
 */
export async function installByChart(o: ChartModeOptions): Promise<ChartModeResult> {
  const { node, say } = o;
  const kubectl = (args: string[], input?: string) => node.kubectl(args, input);
  const helm = await ensureHelm(say);

  say("starting OpenBao in dev mode inside the node's network...");
  const bao = await startDevOpenBao({
    host: node.addresses.nodeIp,
    wrap: (argv) => node.inCluster(argv),
  });
  o.cleanups.push(() => bao.stop());
  await baoCall(bao.addr, bao.rootToken, "POST", "sys/mounts/ohmlab", {
    type: "kv",
    options: { version: "2" },
  });

  const watched = [...new Set(o.samples.map((s) => s.metadata.namespace).filter((n): n is string => !!n))];
  if (watched.length === 0) watched.push(CHART_NAMESPACE);
  // The operator's namespace and the watched ones enforce Pod Security `restricted`, as the chart
  // is made for.
  for (const ns of new Set([CHART_NAMESPACE, ...watched])) {
    await kubectl(["create", "namespace", ns]).catch(() => undefined);
    await kubectl([
      "label",
      "--overwrite",
      "namespace",
      ns,
      "pod-security.kubernetes.io/enforce=restricted",
      "pod-security.kubernetes.io/enforce-version=latest",
    ]);
  }
  // The chart's vault process logs in with its projected token (audience vault) under this role.
  await configureKubernetesAuth(
    { addr: bao.addr, rootToken: bao.rootToken },
    { server: node.server, caPem: node.caPem, kubeconfigPath: node.kubeconfigPath },
    {
      role: VAULT_PROCESS,
      serviceAccount: VAULT_PROCESS,
      namespace: CHART_NAMESPACE,
      audience: "vault",
      policies: ["ohmlab-controller"],
      policyHcl: {
        "ohmlab-controller": `path "ohmlab/data/platforms/+/+/*" { capabilities = ["create", "read", "update"] }
path "ohmlab/metadata/platforms/+/+/*" { capabilities = ["create", "read", "update", "delete"] }`,
      },
      ttl: "15m",
    },
  );

  const targets = {
    vault: {
      enabled: true,
      namespaces: watched,
      config: {
        backend: {
          address: bao.addr,
          allowHttp: true, // the dev OpenBao listens on plain HTTP inside the node's network
          auth: { kubernetes: { role: VAULT_PROCESS, audience: "vault" } },
        },
      },
    },
  };
  say(
    `helm install ${CHART_RELEASE} (vault target, watching ${watched.join(", ")}); waiting for its pods...`,
  );
  const started = Date.now();
  await runCommand(helm, [
    "install",
    CHART_RELEASE,
    CHART,
    "--kubeconfig",
    node.kubeconfigPath,
    "--namespace",
    CHART_NAMESPACE,
    "--set-json",
    `targets=${JSON.stringify(targets)}`,
    // The image is the one the node imported from this working tree's dist/, never pulled.
    "--set",
    "image.pullPolicy=Never",
    // Its admission webhook too (own CA, caBundle patched by the operator): the samples go through it.
    "--set",
    "webhook.enabled=true",
    "--wait",
    "--timeout",
    "5m",
  ]);
  const deployment = JSON.parse(
    await kubectl(["-n", CHART_NAMESPACE, "get", `deployment/${VAULT_PROCESS}`, "-o", "json"]),
  );
  say(
    `deployment ${VAULT_PROCESS} ready (${deployment.status.availableReplicas}/${deployment.spec.replicas} available) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  o.cleanups.push(followLogs(node));

  if (o.samples.length) {
    await kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: o.samples }));
    say(`applied ${o.samples.length} sample objects from deploy/samples/`);
  }
  return { baoAddr: bao.addr, baoRootToken: bao.rootToken, deployment: VAULT_PROCESS };
}

/** Follows every operator pod's log (kubectl's own follow), readable; returns its stop. */
function followLogs(node: LocalNode): () => Promise<void> {
  const child = spawn(
    node.binaries.kubectl,
    [
      "--kubeconfig",
      node.kubeconfigPath,
      "-n",
      CHART_NAMESPACE,
      "logs",
      "--follow",
      // With a selector kubectl shows only the last 10 lines of each pod unless told otherwise.
      "--tail=-1",
      "--max-log-requests=10",
      "-l",
      `app.kubernetes.io/instance=${CHART_RELEASE}`,
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  trackChild(child, "kubectl logs --follow");
  const pretty = prettyLines();
  child.stdout.pipe(pretty).pipe(process.stdout, { end: false });
  return async () => {
    child.kill("SIGTERM");
  };
}
