import { join } from "node:path";
import { startApiServer as launchApiServer, waitForReadyz } from "./apiserver.js";
import { ensureBinaries } from "./binaries.js";
import { startControllerManager as launchControllerManager } from "./controllermanager.js";
import { formatDuration } from "./duration.js";
import { startEtcd } from "./etcd.js";
import { type EtcdKv, etcdKv } from "./etcdkv.js";
import { writeKubeconfig } from "./kubeconfig.js";
import { KubeHttp } from "./kubehttp.js";
import { createControlPlanePki } from "./pki.js";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, stopIfFailing } from "./processes.js";
import { makeTempDir, removeTempDir } from "./tempdirs.js";

export interface ControlPlane {
  /** Admin (system:masters) kubeconfig. */
  kubeconfigPath: string;
  server: string;
  caPem: string;
  /** ServiceAccount token issuer, the default (and only) API audience. */
  issuer: string;
  /** Temp folder with certificates, etcd data and one log file per component. */
  dir: string;
  /** The control plane's etcd, for tests that must change storage behind the API server's back. */
  etcd: EtcdKv;
  /** Stops only kube-apiserver; etcd keeps the data for startApiServer on the same port. */
  stopApiServer(): Promise<void>;
  startApiServer(): Promise<void>;
  /** e.g. ["garbagecollector", "job", "statefulset", "deployment", "replicaset", "serviceaccount"]. */
  startControllerManager(controllers: string[]): Promise<void>;
  /** A kubeconfig authenticating with a bearer token, e.g. a ServiceAccount token. */
  writeKubeconfigFor(user: { name: string; token: string }): Promise<string>;
  /** Processes this control plane is running right now. */
  pids(): number[];
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  log?: (line: string) => void;
  /** Extra kube-apiserver flags, after the harness's own so they win (e.g. "--watch-cache=false"). */
  apiServerArgs?: string[];
}

/** Starts etcd and kube-apiserver on loopback in a fresh temp folder, ready to serve. */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const binaries = await ensureBinaries({ onProgress: log });
  const dir = makeTempDir("cp");
  const services: ServiceProcess[] = [];
  try {
    const pki = await createControlPlanePki(dir);
    const port = await freePort();
    const server = `https://${LOOPBACK}:${port}`;
    const kubeconfigPath = join(dir, "admin.kubeconfig");
    await writeKubeconfig(kubeconfigPath, {
      server,
      caPem: pki.caPem,
      userName: "testenv-admin",
      user: { clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem },
    });
    const admin = KubeHttp.fromKubeconfig(kubeconfigPath);

    const etcd = await startEtcd(binaries.etcd, dir);
    services.push(etcd.service);
    log(`etcd ready at ${etcd.clientUrl} (${formatDuration(Date.now() - started)})`);

    const apiConfig = {
      binary: binaries.kubeApiserver,
      dir,
      port,
      etcdUrl: etcd.clientUrl,
      pki,
      issuer: server,
      extraArgs: opts.apiServerArgs ?? [],
    };
    let apiServer: ServiceProcess | undefined;
    let controllerManager: ServiceProcess | undefined;
    const bootApiServer = async () => {
      const service = await launchApiServer(apiConfig);
      apiServer = service;
      await stopIfFailing(service, waitForReadyz(admin, service));
    };
    await bootApiServer();
    log(`kube-apiserver ready at ${server} (${formatDuration(Date.now() - started)})`);

    let stopped = false;
    return {
      kubeconfigPath,
      server,
      caPem: pki.caPem,
      issuer: server,
      dir,
      etcd: etcdKv(etcd.clientUrl),
      async stopApiServer() {
        await apiServer?.stop();
      },
      async startApiServer() {
        if (apiServer?.isRunning()) throw new Error("kube-apiserver is already running");
        await bootApiServer();
      },
      async startControllerManager(controllers) {
        if (controllerManager?.isRunning()) throw new Error("kube-controller-manager is already running");
        controllerManager = await launchControllerManager({
          binary: binaries.kubeControllerManager,
          dir,
          kubeconfigPath,
          pki,
          controllers,
        });
      },
      async writeKubeconfigFor(user) {
        const path = join(dir, `${user.name.replace(/[^A-Za-z0-9_.-]/g, "_")}.kubeconfig`);
        await writeKubeconfig(path, {
          server,
          caPem: pki.caPem,
          userName: user.name,
          user: { token: user.token },
        });
        return path;
      },
      pids: () =>
        [etcd.service, apiServer, controllerManager].filter((s) => s?.isRunning()).map((s) => s!.pid),
      async stop() {
        if (stopped) return;
        stopped = true;
        // Clients first, storage last, so no component logs a storm of errors about the others.
        await controllerManager?.stop();
        await apiServer?.stop();
        await etcd.service.stop();
        removeTempDir(dir);
      },
    };
  } catch (err) {
    for (const service of services.reverse()) await service.stop();
    removeTempDir(dir);
    throw err;
  }
}
