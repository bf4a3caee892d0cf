/**
 * The merged kubeconfig as the loader builds it, in a file of its own: the loader (kubeconfig.ts)
 * builds it and the client-node credentials read it, and each imports it from here rather than
 * from the other.
 */

/** One kubeconfig entry (cluster, user or context) with the file it came from. */
export interface KubeconfigEntry {
  kind: "cluster" | "user" | "context";
  name: string;
  fields: Record<string, unknown>;
  file: string;
}

/** Kubeconfig files merged the way kubectl merges $KUBECONFIG: the first file to name a thing wins. */
export interface Kubeconfig {
  files: string[];
  clusters: Map<string, KubeconfigEntry>;
  users: Map<string, KubeconfigEntry>;
  contexts: Map<string, KubeconfigEntry>;
  currentContext?: string;
}
