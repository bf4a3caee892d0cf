import { request } from "node:https";
import { join } from "node:path";
import type { ControlPlanePki } from "./pki.js";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing } from "./processes.js";
import { waitUntil } from "./wait.js";

export interface ControllerManagerConfig {
  binary: string;
  dir: string;
  kubeconfigPath: string;
  pki: ControlPlanePki;
  controllers: string[];
}

export async function startControllerManager(c: ControllerManagerConfig): Promise<ServiceProcess> {
  const port = await freePort();
  const service = await startService({
    name: "kube-controller-manager",
    command: c.binary,
    args: [
      `--kubeconfig=${c.kubeconfigPath}`,
      `--authentication-kubeconfig=${c.kubeconfigPath}`,
      `--authorization-kubeconfig=${c.kubeconfigPath}`,
      `--bind-address=${LOOPBACK}`,
      `--secure-port=${port}`,
      `--cert-dir=${join(c.dir, "controller-manager-certs")}`,
      `--controllers=${c.controllers.join(",")}`,
      // The token controller signs legacy token Secrets and publishes the CA into them.
      `--service-account-private-key-file=${c.pki.serviceAccountKey}`,
      `--root-ca-file=${c.pki.caCert}`,
      "--leader-elect=false",
      "--use-service-account-credentials=false",
      "--profiling=false",
    ],
    logPath: join(c.dir, "kube-controller-manager.log"),
    cwd: c.dir,
  });
  const healthy = waitUntil(() => healthz(port), {
    what: "kube-controller-manager /healthz",
    timeoutMs: 30_000,
    intervalMs: 200,
    service,
  });
  await stopIfFailing(service, healthy);
  return service;
}

// Its serving certificate is self-signed on the fly, and /healthz carries no secret, so the probe
// does not verify it.
function healthz(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: LOOPBACK, port, path: "/healthz", rejectUnauthorized: false, timeout: 2000, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}
