import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../../src/runtime/types.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import type { NodeNamespace } from "./node.js";

/** A rendered object: its kind is always there. */
export type Rendered = KubeObject & { kind: string };

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));

/**
 * The chart as the real helm renders it with only the openbao target and `admissionPolicies.enabled`,
 * the target (and so every binding) scoped to `targetNamespaces`.
 */
export async function renderOpenBaoChart(
  release: string,
  releaseNamespace: string,
  targetNamespaces: string[],
): Promise<Rendered[]> {
  const helm = await ensureHelm();
  const out = await runCommand(helm, [
    "template",
    release,
    CHART,
    "--namespace",
    releaseNamespace,
    "--set=targets.vault.enabled=false",
    "--set=targets.openbao.enabled=true",
    `--set=targets.openbao.namespaces={${targetNamespaces.join(",")}}`,
    "--set=admissionPolicies.enabled=true",
  ]);
  return parseAllDocuments(out.stdout)
    .map((d) => d.toJSON() as KubeObject | null)
    .filter((o): o is Rendered => o !== null && typeof o === "object" && typeof o.kind === "string");
}

export const POLICY_KINDS = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"];
const ACCESS_KINDS = ["ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"];

export interface ChartAccess {
  /** `<release>-`, what the chart puts in the target's `admissionPolicies.prefix`. */
  prefix: string;
  /** The identity the locks exempt: system:serviceaccount:<release namespace>:<release>-openbao. */
  operatorUser: string;
  /** A kubeconfig acting as that ServiceAccount (a token requested for it). */
  kubeconfigPath: string;
  policies: KubeObject[];
  /** Deletes the cluster-scoped objects (policies, bindings, ClusterRoles), the release namespace and the kubeconfig. */
  remove(): Promise<void>;
}

/**
 * On the node, with the test's namespace as the only target namespace: the chart's admission
 * policies with their bindings, and the openbao process's ServiceAccount with exactly the chart's
 * RBAC, in a release namespace of its own (`<ns>-op`: as in a cluster, the operator's identity does
 * not go when a namespace it manages is deleted). Returns a kubeconfig to run the operator as that
 * ServiceAccount, so the locks see the operator's own identity. Nothing outside the test's
 * namespace is matched by the bindings.
 */
export async function installChartAccess(ctx: NodeNamespace, release: string): Promise<ChartAccess> {
  const releaseNamespace = `${ctx.namespace}-op`;
  await ctx.kubectl(["create", "namespace", releaseNamespace]);
  const rendered = await renderOpenBaoChart(release, releaseNamespace, [ctx.namespace]);
  const wanted = rendered.filter((o) => ACCESS_KINDS.includes(o.kind) || POLICY_KINDS.includes(o.kind));
  const sa = wanted.find((o) => o.kind === "ServiceAccount");
  if (!sa?.metadata.name) throw new Error("the chart rendered no ServiceAccount for the openbao process");
  const policies = wanted.filter((o) => POLICY_KINDS.includes(o.kind));
  if (policies.length !== 10)
    throw new Error(`expected five policies and five bindings, got ${policies.length}`);
  // Cluster-scoped objects and those in other namespaces (the release namespace's are removed with
  // it; the Role that reads the `kubernetes` Service in default) are removed by name.
  const elsewhere = wanted.filter((o) => (o.metadata.namespace ?? ctx.namespace) !== ctx.namespace);
  const clusterScoped = wanted.filter((o) => o.kind.startsWith("Cluster") || POLICY_KINDS.includes(o.kind));
  const dir = mkdtempSync(join(tmpdir(), "openbao-chart-"));
  const remove = async () => {
    for (const o of [...clusterScoped, ...elsewhere.filter((o) => o.metadata.namespace !== releaseNamespace)])
      await ctx
        .kubectl([
          "delete",
          ...(o.metadata.namespace ? ["-n", o.metadata.namespace] : []),
          o.kind,
          o.metadata.name!,
          "--ignore-not-found",
          "--wait=false",
        ])
        .catch(() => {});
    await ctx.kubectl(["delete", "namespace", releaseNamespace, "--wait=false"]).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const ns of new Set(wanted.map((o) => o.metadata.namespace ?? ctx.namespace)))
      await ctx.kubectl(
        ["apply", "-n", ns, "-f", "-"],
        JSON.stringify({
          apiVersion: "v1",
          kind: "List",
          items: wanted.filter((o) => (o.metadata.namespace ?? ctx.namespace) === ns),
        }),
      );
    const token = (
      await ctx.kubectl(["create", "token", "-n", releaseNamespace, sa.metadata.name, "--duration=4h"])
    ).trim();
    const kubeconfigPath = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfigPath,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "node",
            cluster: {
              server: ctx.node.server,
              "certificate-authority-data": Buffer.from(ctx.node.caPem).toString("base64"),
            },
          },
        ],
        users: [{ name: "operator", user: { token } }],
        contexts: [{ name: "operator", context: { cluster: "node", user: "operator" } }],
        "current-context": "operator",
      }),
      { mode: 0o600 },
    );
    chmodSync(kubeconfigPath, 0o600);
    return {
      prefix: `${release}-`,
      operatorUser: `system:serviceaccount:${releaseNamespace}:${sa.metadata.name}`,
      kubeconfigPath,
      policies,
      remove,
    };
  } catch (e) {
    await remove();
    throw e;
  }
}
