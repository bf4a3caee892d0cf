import { join } from "node:path";
import type { KubeHttp } from "./kubehttp.js";
import type { ControlPlanePki } from "./pki.js";
import { LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService } from "./processes.js";
import { waitUntil } from "./wait.js";

export interface ApiServerConfig {
  binary: string;
  dir: string;
  port: number;
  etcdUrl: string;
  pki: ControlPlanePki;
  issuer: string;
  extraArgs: string[];
}

function apiServerArgs(c: ApiServerConfig): string[] {
  return [
    `--bind-address=${LOOPBACK}`,
    `--advertise-address=${LOOPBACK}`,
    `--secure-port=${c.port}`,
    `--etcd-servers=${c.etcdUrl}`,
    `--cert-dir=${join(c.dir, "apiserver-certs")}`,
    `--tls-cert-file=${c.pki.servingCert}`,
    `--tls-private-key-file=${c.pki.servingKey}`,
    `--client-ca-file=${c.pki.caCert}`,
    `--service-account-issuer=${c.issuer}`,
    `--service-account-key-file=${c.pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${c.pki.serviceAccountKey}`,
    "--authorization-mode=RBAC",
    "--service-cluster-ip-range=10.0.0.0/24",
    // A loopback advertise address cannot back the `kubernetes` Service's endpoints; the reconciler
    // would only log errors about it.
    "--endpoint-reconciler-type=none",
    "--allow-privileged=true",
    "--profiling=false",
    // The ServiceAccount admission plugin stays on, as in any real cluster: it only gets in the way of
    // Pods (their ServiceAccount must exist), which nothing can run here anyway without a kubelet.
    // ConfigMaps, Secrets, custom resources and workload objects are unaffected by it.
    ...c.extraArgs,
  ];
}

export async function startApiServer(c: ApiServerConfig): Promise<ServiceProcess> {
  return startService({
    name: "kube-apiserver",
    command: c.binary,
    args: apiServerArgs(c),
    logPath: join(c.dir, "kube-apiserver.log"),
    cwd: c.dir,
  });
}

export async function waitForReadyz(
  admin: KubeHttp,
  service: ServiceProcess,
  timeoutMs = 60_000,
): Promise<void> {
  await waitUntil(
    async () => {
      const res = await admin.request("GET", "/readyz", undefined, 2000);
      return res.status === 200;
    },
    { what: "kube-apiserver /readyz", timeoutMs, intervalMs: 200, service },
  );
}
