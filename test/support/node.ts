import { randomBytes } from "node:crypto";
import { runCommand } from "../../src/testenv/exec.js";
import { type SharedNode, sharedNode } from "../../src/testenv/node/shared.js";

// Helpers for tests that run workloads on the shared node. They drive the node's cluster with the
// real kubectl built alongside it; every wait is kubectl's own watch on the condition that proves
// the outcome, never a sleep.

export type Manifest = Record<string, unknown>;

export interface NodeNamespace {
  node: SharedNode;
  namespace: string;
  kubectl(args: string[], input?: string): Promise<string>;
  apply(...objects: Manifest[]): Promise<void>;
  /** `kubectl wait` for a condition (e.g. "condition=Ready", "jsonpath={.status.phase}=Succeeded"). */
  waitFor(resource: string, condition: string, timeoutSeconds?: number): Promise<void>;
  exec(pod: string, command: string[]): Promise<string>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary API objects
  getJson(resource: string): Promise<Record<string, any>>;
}

/** A fresh namespace on the shared node's cluster, with its default ServiceAccount in place. */
export async function nodeNamespace(prefix: string): Promise<NodeNamespace> {
  const node = await sharedNode();
  const namespace = `${prefix}-${randomBytes(3).toString("hex")}`;
  const kubectl = async (args: string[], input?: string) =>
    (
      await runCommand(node.kubectl, ["--kubeconfig", node.kubeconfigPath, "-n", namespace, ...args], {
        input,
      })
    ).stdout;
  await kubectl(["create", "namespace", namespace]);
  // Pods are refused until the ServiceAccount controller has created `default` here.
  await kubectl(["wait", "--for=create", "serviceaccount/default", "--timeout=120s"]);
  const ctx: NodeNamespace = {
    node,
    namespace,
    kubectl,
    async apply(...objects) {
      await kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
    },
    async waitFor(resource, condition, timeoutSeconds = 180) {
      await kubectl(["wait", `--for=${condition}`, resource, `--timeout=${timeoutSeconds}s`]);
    },
    exec: (pod, command) => kubectl(["exec", pod, "--", ...command]),
    async getJson(resource) {
      return JSON.parse(await kubectl(["get", resource, "-o", "json"]));
    },
  };
  return ctx;
}

export async function deleteNamespace(ctx: NodeNamespace | undefined): Promise<void> {
  if (!ctx) return;
  await ctx.kubectl(["delete", "namespace", ctx.namespace, "--wait=false"]).catch(() => {});
}

export const BUSYBOX = "docker.io/library/busybox:1.35.0";
