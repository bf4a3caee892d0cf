import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ensureBinaries } from "../binaries.js";
import { formatDuration } from "../duration.js";
import { runCommand } from "../exec.js";
import { onProcessEnd } from "../hooks.js";
import { writeKubeconfig } from "../kubeconfig.js";
import { KubeHttp } from "../kubehttp.js";
import { type ServiceProcess, stopIfFailing } from "../processes.js";
import { makeTempDir, removeTempDir } from "../tempdirs.js";
import { waitUntil } from "../wait.js";
import {
  corednsManifests,
  DNS_NAMESPACE,
  LOCAL_PATH_NAMESPACE,
  LOCAL_PATH_SERVICE_ACCOUNT,
  localPathManifests,
} from "./addons.js";
import type { NodeAddresses } from "./addresses.js";
import { ensureNodeBinaries, type NodeBinaries } from "./binaries.js";
import { createCgroupRoot } from "./cgroups.js";
import {
  API_PORT,
  apiServerArgs,
  controllerManagerArgs,
  etcdArgs,
  kubeletArgs,
  schedulerArgs,
  startInNode,
} from "./components.js";
import {
  clusterResolvConf,
  cniConfig,
  containerdConfig,
  kubeletConfig,
  kubeProxyConfig,
  type NodePaths,
  nodeResolvConf,
} from "./configs.js";
import { BUSYBOX_IMAGE } from "./images/catalog.js";
import { ensureNodeImages, importImages } from "./images/node-images.js";
import { connectNode, createNamespaces, type NodeNamespaces, PRIVATE_PATHS } from "./netns.js";
import { createNodePki, type NodePki } from "./pki.js";
import { ensureNodeHost } from "./preflight.js";
import { claimNode, type NodeRecord, teardownNodeSync, updateRecord } from "./registry.js";

export interface LocalNode {
  addresses: NodeAddresses;
  /** Admin (system:masters) kubeconfig of the node's cluster; the server is the node's veth address. */
  kubeconfigPath: string;
  server: string;
  caPem: string;
  dir: string;
  binaries: NodeBinaries;
  /** containerd's socket, for `ctr -a` (images are imported into its k8s.io namespace). */
  containerdSocket: string;
  /** Runs kubectl against the node's cluster. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** nsenter prefix that runs a command in the node's network and mount namespaces. */
  enter: string[];
  /**
   * Argument vector running `argv` like an in-cluster client: in the node's network namespace, with
   * the cluster's DNS as its resolver (a private mount namespace binds it over /etc/resolv.conf).
   */
  inCluster(argv: string[]): string[];
  /** Component name -> pid of what runs now (shims and pods not included). */
  pids(): Record<string, number>;
  restart(component: "kubelet" | "containerd"): Promise<void>;
  /** Stops everything and removes what the node put on the host; returns what could not be removed. */
  stop(): Promise<string[]>;
}

// Images the node's own pods need (sandbox, CoreDNS, local-path's helper pods).
const ESSENTIAL_IMAGES = new Set(["pause", "coredns", "busybox"]);

export interface NodeOptions {
  log?: (line: string) => void;
}

/**
 * Starts a one-node Kubernetes cluster in namespaces of its own: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, containerd, kubelet, kube-proxy, CoreDNS and
 * local-path-provisioner, with every image imported locally. Ready when the node is Ready and
 * cluster DNS answers.
 */
export async function startNode(opts: NodeOptions = {}): Promise<LocalNode> {
  const log = opts.log ?? (() => {});
  const missing = await ensureNodeHost(log);
  if (missing.length > 0)
    throw new Error(`cannot start the node; this machine lacks:\n- ${missing.join("\n- ")}`);
  const started = Date.now();
  const since = () => formatDuration(Date.now() - started);
  const [cp, bin] = await Promise.all([ensureBinaries({ onProgress: log }), ensureNodeBinaries(log)]);
  const images = await ensureNodeImages(bin, cp.bao, log);

  const dir = makeTempDir("node");
  const a = claimNode(dir);
  const record: NodeRecord = { index: a.index, ownerPid: process.pid, dir };
  let tornDown = false;
  const teardown = () => {
    if (tornDown) return [];
    tornDown = true;
    return teardownNodeSync(record);
  };
  onProcessEnd("processes", () => {
    teardown();
  });
  const services = new Map<string, ServiceProcess>();
  let ns: NodeNamespaces | undefined;
  try {
    createCgroupRoot(a.cgroupRoot);
    record.createdPaths = PRIVATE_PATHS.filter((p) => !existsSync(p));
    updateRecord(record);
    ns = await createNamespaces(dir);
    services.set("namespaces", ns.anchor);
    record.netns = ns.netns;
    record.mntns = ns.mntns;
    updateRecord(record);
    await connectNode(ns, a);
    log(`node ${a.index}: namespaces and veth ${a.hostIp} <-> ${a.nodeIp} ready (${since()})`);

    const server = `https://${a.nodeIp}:${API_PORT}`;
    const paths: NodePaths = {
      dir,
      containerdSocket: join(dir, "run", "containerd.sock"),
      runc: bin.runc,
      cniBinDir: bin.cniBinDir,
      cniConfDir: join(dir, "cni", "net.d"),
      resolvConf: join(dir, "resolv.conf"),
      clientCa: join(dir, "pki", "ca.crt"),
      kubeletKubeconfig: join(dir, "kubelet.kubeconfig"),
      adminKubeconfig: join(dir, "admin.kubeconfig"),
    };
    await writeRuntimeConfigs(paths, a);
    const enter = ns.enter(dir);
    const start = async (name: string, binary: string, args: string[], env?: NodeJS.ProcessEnv) => {
      const service = await startInNode(enter, dir, name, binary, args, env);
      services.set(name, service);
      return service;
    };
    const bootContainerd = async () => {
      const containerd = await start("containerd", bin.containerd, [
        "--config",
        join(dir, "containerd.toml"),
      ]);
      await stopIfFailing(
        containerd,
        waitUntil(() => runCommand(bin.ctr, ["-a", paths.containerdSocket, "version"]).then(() => true), {
          what: "containerd",
          timeoutMs: 30_000,
          service: containerd,
        }),
      );
    };
    // Importing images is the longest step, so containerd starts first, while certificates are made
    // and the control plane boots. The images kubelet needs for the node's own pods (pause, CoreDNS,
    // busybox for volume helpers) go in first; the rest (OpenBao, operator, kubectl) only have to be
    // there before the node is declared ready.
    const containerdUp = bootContainerd();
    const essential = images.filter((i) => ESSENTIAL_IMAGES.has(i.name));
    const essentialImported = containerdUp.then(() =>
      importImages(bin.ctr, paths.containerdSocket, essential),
    );
    const allImported = containerdUp
      .then(() =>
        importImages(
          bin.ctr,
          paths.containerdSocket,
          images.filter((i) => !essential.includes(i)),
        ),
      )
      .then(() => log(`node ${a.index}: containerd up, ${images.length} images imported (${since()})`));
    // Awaited below; until then a failure must not count as unhandled.
    for (const p of [essentialImported, allImported]) p.catch(() => {});

    const pki = await createNodePki(dir, a);
    await writeClientConfigs(paths, a, server, pki);
    const admin = KubeHttp.fromKubeconfig(paths.adminKubeconfig);
    const kubectl = async (args: string[], input?: string) =>
      (await runCommand(bin.kubectl, ["--kubeconfig", paths.adminKubeconfig, ...args], { input })).stdout;

    const controlPlaneReady = (async () => {
      // No separate wait for etcd: the API server's /readyz includes it, and the host cannot reach
      // the node's loopback to ask etcd directly.
      await start("etcd", cp.etcd, etcdArgs(dir));
      const apiServer = await start("kube-apiserver", cp.kubeApiserver, apiServerArgs(dir, a, pki));
      await stopIfFailing(
        apiServer,
        waitUntil(async () => (await admin.request("GET", "/readyz", undefined, 2000)).status === 200, {
          what: "the node's kube-apiserver /readyz",
          timeoutMs: 90_000,
          intervalMs: 200,
          service: apiServer,
        }),
      );
      log(`node ${a.index}: kube-apiserver ready at ${server} (${since()})`);
      await start(
        "kube-controller-manager",
        cp.kubeControllerManager,
        controllerManagerArgs(dir, paths.adminKubeconfig, pki),
      );
      await start("kube-scheduler", bin.kubeScheduler, schedulerArgs(dir, paths.adminKubeconfig));
    })();
    await Promise.all([essentialImported, controlPlaneReady]);

    const kubelet = await start(
      "kubelet",
      bin.kubelet,
      kubeletArgs(dir, a, join(dir, "kubelet.json"), paths.kubeletKubeconfig),
    );
    await start("kube-proxy", bin.kubeProxy, [`--config=${join(dir, "kube-proxy.json")}`]);
    await waitUntil(() => nodeReady(admin, a.nodeName), {
      what: `node ${a.nodeName} Ready`,
      timeoutMs: 120_000,
      intervalMs: 200,
      service: kubelet,
    });
    log(`node ${a.index}: ${a.nodeName} Ready (${since()})`);
    // Pods are refused until the ServiceAccount controller has created `default` in their namespace.
    await waitUntil(
      async () =>
        (await admin.request("GET", `/api/v1/namespaces/${DNS_NAMESPACE}/serviceaccounts/default`)).status ===
        200,
      { what: "the default ServiceAccount in kube-system", timeoutMs: 60_000 },
    );
    const volumeDir = join(dir, "volumes");
    await mkdir(volumeDir, { recursive: true });
    const manifests = [...corednsManifests(a), ...localPathManifests(volumeDir)];
    await kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: manifests }));
    await start(
      "local-path-provisioner",
      bin.localPathProvisioner,
      [
        "start",
        `--kubeconfig=${paths.adminKubeconfig}`,
        `--namespace=${LOCAL_PATH_NAMESPACE}`,
        `--helper-image=${BUSYBOX_IMAGE}`,
        `--service-account-name=${LOCAL_PATH_SERVICE_ACCOUNT}`,
      ],
      { ...process.env, KUBECONFIG: paths.adminKubeconfig },
    );
    await waitUntil(() => deploymentAvailable(admin, DNS_NAMESPACE, "coredns"), {
      what: "CoreDNS available",
      timeoutMs: 120_000,
      intervalMs: 250,
    });
    await allImported;
    log(`node ${a.index}: CoreDNS ready; node up in ${since()}`);

    return {
      addresses: a,
      kubeconfigPath: paths.adminKubeconfig,
      server,
      caPem: pki.caPem,
      dir,
      binaries: bin,
      containerdSocket: paths.containerdSocket,
      kubectl,
      enter,
      inCluster: (argv) => inClusterCommand(ns!.anchor.pid, join(dir, "cluster-resolv.conf"), argv),
      pids: () =>
        Object.fromEntries([...services].filter(([, s]) => s.isRunning()).map(([name, s]) => [name, s.pid])),
      async restart(component) {
        await services.get(component)?.stop(10_000);
        if (component === "containerd") await bootContainerd();
        else {
          const args = kubeletArgs(dir, a, join(dir, "kubelet.json"), paths.kubeletKubeconfig);
          await start("kubelet", bin.kubelet, args);
        }
      },
      async stop() {
        await stopServices(services);
        const problems = teardown();
        removeTempDir(dir);
        return problems;
      },
    };
  } catch (err) {
    await stopServices(services);
    teardown();
    removeTempDir(dir);
    throw err;
  }
}

// Users of the API first, the API server next, storage last; the namespace anchor goes with teardown.
const STOP_ORDER = [
  "local-path-provisioner",
  "kube-proxy",
  "kubelet",
  "kube-scheduler",
  "kube-controller-manager",
  "containerd",
  "kube-apiserver",
  "etcd",
];

async function stopServices(services: Map<string, ServiceProcess>): Promise<void> {
  for (const name of STOP_ORDER) {
    const service = services.get(name);
    if (!service?.isRunning()) continue;
    const started = Date.now();
    // The API server's graceful shutdown waits out its watchers; its data is thrown away anyway.
    await service.stop(name === "kube-apiserver" ? 1000 : 5000);
    stopTimes[name] = Date.now() - started;
  }
  for (const [name, service] of services) if (!STOP_ORDER.includes(name)) await service.stop(2000);
}

/** How long each component took to stop, last time (for the teardown report). */
export const stopTimes: Record<string, number> = {};

async function writeRuntimeConfigs(p: NodePaths, a: NodeAddresses): Promise<void> {
  for (const sub of ["run", "cni/net.d", "cni/ipam", "containerd", "logs/pods", "kubelet"]) {
    await mkdir(join(p.dir, sub), { recursive: true });
  }
  await writeFile(join(p.dir, "containerd.toml"), containerdConfig(p));
  await writeFile(join(p.cniConfDir, "10-testnode.conflist"), cniConfig(p, a));
  await writeFile(p.resolvConf, nodeResolvConf(a));
  await writeFile(join(p.dir, "cluster-resolv.conf"), clusterResolvConf(a));
}

async function writeClientConfigs(
  p: NodePaths,
  a: NodeAddresses,
  server: string,
  pki: NodePki,
): Promise<void> {
  const pem = async (file: string) => readFile(file, "utf8");
  const admin = pki.pair("admin");
  const kubelet = pki.pair("kubelet");
  await writeKubeconfig(p.adminKubeconfig, {
    server,
    caPem: pki.caPem,
    userName: "node-admin",
    user: { clientCertPem: await pem(admin.cert), clientKeyPem: await pem(admin.key) },
  });
  await writeKubeconfig(p.kubeletKubeconfig, {
    server,
    caPem: pki.caPem,
    userName: `system:node:${a.nodeName}`,
    user: { clientCertPem: await pem(kubelet.cert), clientKeyPem: await pem(kubelet.key) },
  });
  await writeFile(join(p.dir, "kubelet.json"), kubeletConfig(p, a));
  await writeFile(join(p.dir, "kube-proxy.json"), kubeProxyConfig(p, a));
}

/** See LocalNode.inCluster; exported for SharedNode, which knows the anchor's pid from the state file. */
export function inClusterCommand(anchorPid: number, resolvConf: string, argv: string[]): string[] {
  const bind = 'mount --bind "$0" /etc/resolv.conf && exec "$@"';
  // biome-ignore format: one nsenter/unshare chain
  return ["nsenter", "-t", String(anchorPid), "-n", "--", "unshare", "-m", "--propagation", "private", "--", "/bin/sh", "-c", bind, resolvConf, ...argv];
}

async function nodeReady(admin: KubeHttp, name: string): Promise<boolean> {
  const res = await admin.request("GET", `/api/v1/nodes/${name}`, undefined, 3000);
  const conditions: Array<{ type: string; status: string }> = res.body?.status?.conditions ?? [];
  return res.status === 200 && conditions.some((c) => c.type === "Ready" && c.status === "True");
}

async function deploymentAvailable(admin: KubeHttp, namespace: string, name: string): Promise<boolean> {
  const res = await admin.request(
    "GET",
    `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
    undefined,
    3000,
  );
  return res.status === 200 && (res.body?.status?.availableReplicas ?? 0) >= 1;
}
