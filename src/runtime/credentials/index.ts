import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { inClusterAvailable, inClusterCredentials } from "./in-cluster.js";
import { credentialsFromKubeconfig, type KubeconfigOptions, readKubeconfigFiles } from "./kubeconfig.js";
import type { Credentials } from "./types.js";

export { type InClusterOptions, inClusterCredentials, SERVICE_ACCOUNT_DIR } from "./in-cluster.js";
export {
  credentialsFromKubeconfig,
  type KubeconfigOptions,
  kubeconfigFromDocument,
  mergeDocument,
  readKubeconfigFiles,
} from "./kubeconfig.js";
export type { Kubeconfig } from "./kubeconfig-model.js";
export type { Credentials, RequestAuth } from "./types.js";

/**
 * The cluster to talk to, found in controller-runtime's order: the file named (--kubeconfig), then
 * $KUBECONFIG (a list; the first file to define a name wins), then the pod's ServiceAccount, then
 * ~/.kube/config. Nothing found is an error that lists what was tried; there is no silent
 * localhost default.
 */
export function loadCredentials(kubeconfigPath?: string, opts: KubeconfigOptions = {}): Credentials {
  if (kubeconfigPath) return credentialsFromKubeconfig(readKubeconfigFiles([kubeconfigPath]), opts);
  const fromEnv = (process.env["KUBECONFIG"] ?? "").split(delimiter).filter(Boolean);
  if (fromEnv.length > 0) {
    const present = fromEnv.filter((p) => existsSync(p));
    if (present.length === 0)
      throw new Error(`KUBECONFIG names no file that exists (${fromEnv.join(delimiter)})`);
    return credentialsFromKubeconfig(readKubeconfigFiles(present), opts);
  }
  if (inClusterAvailable()) return inClusterCredentials();
  const home = join(homedir(), ".kube", "config");
  if (existsSync(home)) return credentialsFromKubeconfig(readKubeconfigFiles([home]), opts);
  throw new Error(
    "no cluster credentials: pass --kubeconfig FILE, set KUBECONFIG, run in a pod with a ServiceAccount, " +
      `or create ${home}`,
  );
}
