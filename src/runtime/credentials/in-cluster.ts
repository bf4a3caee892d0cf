import { join } from "node:path";
import { FileCredentials } from "./file-credentials.js";
import type { Credentials } from "./types.js";
import { WatchedFile } from "./watched-file.js";

/** Where kubelet mounts a pod's ServiceAccount token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface InClusterOptions {
  /** Environment to read KUBERNETES_SERVICE_HOST/PORT from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Folder holding `token` and `ca.crt` (default: the ServiceAccount mount). */
  dir?: string;
  /** How often, at most, the token file is checked for rotation (default 1 s). */
  checkEveryMs?: number;
}

/** True when the process looks like it runs in a pod: the service variables are set. */
export function inClusterAvailable(env: Record<string, string | undefined> = process.env): boolean {
  return Boolean(env["KUBERNETES_SERVICE_HOST"] && env["KUBERNETES_SERVICE_PORT"]);
}

/**
 * The pod's own ServiceAccount, as client-go's in-cluster config finds it: the API server from the
 * KUBERNETES_SERVICE_HOST/PORT variables, the CA and token from the mounted folder. The projected
 * token is rotated by kubelet (hourly by default); the new one is picked up without a restart.
 */
export function inClusterCredentials(opts: InClusterOptions = {}): Credentials {
  const env = opts.env ?? process.env;
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (!host || !port)
    throw new Error(
      "in-cluster credentials: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set " +
        "(they are, inside a pod); outside a cluster pass --kubeconfig or set KUBECONFIG",
    );
  if (!/^\d{1,5}$/.test(port))
    throw new Error(`in-cluster credentials: KUBERNETES_SERVICE_PORT "${port}" is not a port number`);
  const dir = opts.dir ?? SERVICE_ACCOUNT_DIR;
  const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const server = `https://${hostPart}:${port}`;
  const prefix = "in-cluster credentials: ";
  const watched = (file: string, what: string) => {
    try {
      return new WatchedFile(join(dir, file), what, opts.checkEveryMs);
    } catch (e) {
      throw new Error(`${prefix}${(e as Error).message}`);
    }
  };
  return new FileCredentials({
    server,
    source: `in-cluster (${server}, ServiceAccount files in ${dir})`,
    token: { file: watched("token", "ServiceAccount token") },
    ca: { file: watched("ca.crt", "cluster CA certificate") },
  });
}
