import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ServiceProcess, startService } from "../processes.js";
import type { NodeAddresses } from "./addresses.js";
import { NODE_ADMIN_USER, type NodePki } from "./pki.js";

/** Starts one component inside the node's namespaces, its output in `<dir>/<name>.log`. */
export function startInNode(
  enter: string[],
  dir: string,
  name: string,
  binary: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<ServiceProcess> {
  const [command, ...prefix] = enter;
  return startService({
    name,
    command: command!,
    args: [...prefix, binary, ...args],
    logPath: join(dir, `${name}.log`),
    cwd: dir,
    env: env ?? process.env,
  });
}

// Inside the node's own network namespace every port is ours, so the well-known ones are used.
export const ETCD_CLIENT_URL = "http://127.0.0.1:2379";
export const API_PORT = 6443;

export function etcdArgs(dir: string): string[] {
  return [
    "--name=node",
    `--data-dir=${join(dir, "etcd")}`,
    `--listen-client-urls=${ETCD_CLIENT_URL}`,
    `--advertise-client-urls=${ETCD_CLIENT_URL}`,
    "--listen-peer-urls=http://127.0.0.1:2380",
    "--initial-advertise-peer-urls=http://127.0.0.1:2380",
    "--initial-cluster=node=http://127.0.0.1:2380",
    "--unsafe-no-fsync",
    "--log-level=warn",
  ];
}

export function apiServerArgs(dir: string, a: NodeAddresses, pki: NodePki): string[] {
  const serving = pki.pair("apiserver");
  const kubeletClient = pki.pair("apiserver-kubelet-client");
  return [
    // The node's veth address: pods reach it as kubernetes.default (the Service's endpoint is the
    // advertise address), and the host reaches it through the veth route.
    `--bind-address=${a.nodeIp}`,
    `--advertise-address=${a.nodeIp}`,
    `--secure-port=${API_PORT}`,
    `--etcd-servers=${ETCD_CLIENT_URL}`,
    `--cert-dir=${join(dir, "apiserver-certs")}`,
    `--tls-cert-file=${serving.cert}`,
    `--tls-private-key-file=${serving.key}`,
    `--client-ca-file=${pki.caCert}`,
    `--service-account-issuer=${a.serviceAccountIssuer}`,
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    "--authorization-mode=Node,RBAC",
    "--enable-admission-plugins=NodeRestriction",
    `--kubelet-client-certificate=${kubeletClient.cert}`,
    `--kubelet-client-key=${kubeletClient.key}`,
    // Otherwise exec and logs resolve the node's name through the machine's DNS, which fails.
    "--kubelet-preferred-address-types=InternalIP",
    `--service-cluster-ip-range=${a.serviceCidr}`,
    "--allow-privileged=true",
    "--profiling=false",
    // Every request of a ServiceAccount, at Metadata level: what the least-privilege tests read to
    // compare the calls an installed operator made with what its chart grants.
    `--audit-policy-file=${writeAuditPolicy(dir)}`,
    `--audit-log-path=${auditLogPath(dir)}`,
    "--audit-log-format=json",
    "--audit-log-maxsize=200",
    "--audit-log-maxbackup=1",
  ];
}

/** The node API server's audit log (JSON lines, requests of ServiceAccounts and of the admin only). */
export function auditLogPath(dir: string): string {
  return join(dir, "audit.log");
}

function writeAuditPolicy(dir: string): string {
  const path = join(dir, "audit-policy.json");
  const policy = {
    apiVersion: "audit.k8s.io/v1",
    kind: "Policy",
    omitStages: ["RequestReceived"],
    rules: [
      { level: "Metadata", userGroups: ["system:serviceaccounts"] },
      // The admin too: bench:openbao runs its operator with the admin kubeconfig and reads what that
      // operator asked for in its quiet windows (bench/audit-window.ts).
      { level: "Metadata", users: [NODE_ADMIN_USER] },
      { level: "None" },
    ],
  };
  writeFileSync(path, JSON.stringify(policy));
  return path;
}

export function controllerManagerArgs(dir: string, kubeconfig: string, pki: NodePki): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    "--bind-address=127.0.0.1",
    "--secure-port=10257",
    `--cert-dir=${join(dir, "kcm-certs")}`,
    `--service-account-private-key-file=${pki.serviceAccountKey}`,
    `--root-ca-file=${pki.caCert}`,
    "--leader-elect=false",
    "--use-service-account-credentials=true",
    "--profiling=false",
    // In 1.37 naming a controller that is not built in is an error, so all of them it is.
    "--controllers=*",
  ];
}

export function schedulerArgs(dir: string, kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    "--bind-address=127.0.0.1",
    "--secure-port=10259",
    `--cert-dir=${join(dir, "scheduler-certs")}`,
    "--leader-elect=false",
    "--profiling=false",
  ];
}

export function kubeletArgs(dir: string, a: NodeAddresses, config: string, kubeconfig: string): string[] {
  return [
    `--config=${config}`,
    `--kubeconfig=${kubeconfig}`,
    `--root-dir=${join(dir, "kubelet")}`,
    `--cert-dir=${join(dir, "kubelet", "pki")}`,
    `--hostname-override=${a.nodeName}`,
    `--node-ip=${a.nodeIp}`,
    "-v=1",
  ];
}
