import { GitLabCoreCondition } from "../apis/gitlabcore-names.js";
import { ROLE, ROLE_BINDING } from "../runtime/builtin-types.js";
import type { KubeClient } from "../runtime/client.js";
import { findCondition } from "../runtime/conditions.js";
import { errorMessage } from "../runtime/errors.js";
import type { KubeObject } from "../runtime/types.js";
import { GITLABCORE } from "../targets/gitlab/target.js";
import { fixtureChartsDir, fixtureVersions } from "../testenv/gitlab-fixture-chart.js";
import { ensureHelm } from "../testenv/helm.js";

// The gitlab target in `npm start`: on the local node, with the project's fixture GitLab chart
// (test/fixtures/charts/gitlab — NOT GitLab: tiny busybox workloads, but the real chart's hooks,
// values and kinds), so a GitLabCore goes through version resolution, Helm's hook lifecycle, apply
// and readiness on this machine without pulling anything.

/** The ServiceAccount the shared-secrets hook Job runs as, provisioned here as an administrator would. */
export const GITLAB_HOOK_ACCOUNT = "gitlab-manager";

/**
 * The GitLabCore sample is written for a real cluster; on the local node a copy is applied, and
 * every change is printed:
 *
 * - the version becomes one the bundled fixture chart has, if the sample's is not among them;
 * - spec.networking is left out: its GatewayClass and cert-manager issuer are not on the node (the
 *   node serves no Gateway API), so the release is reached through the chart's Ingress instead.
 */
export function gitlabSampleForLocalNode(sample: KubeObject): { doc: KubeObject; changes: string[] } {
  const doc = structuredClone(sample);
  const spec = (doc["spec"] ?? {}) as Record<string, unknown>;
  doc["spec"] = spec;
  const changes: string[] = [];
  const versions = fixtureVersions().map((v) => v.version);
  const version = (spec["version"] ?? {}) as Record<string, unknown>;
  if (version["type"] !== "Static" || !versions.includes(String(version["version"]))) {
    const newest = versions.at(-1)!;
    changes.push(
      `spec.version → Static ${newest} (the bundled fixture chart's newest; it has ${versions.join(", ")})`,
    );
    spec["version"] = { type: "Static", version: newest };
  }
  if (spec["networking"] !== undefined) {
    changes.push("spec.networking left out (no Gateway API, GatewayClass or cert-manager on the node)");
    delete spec["networking"];
  }
  return { doc, changes };
}

/**
 * What the gitlab target needs on this machine: helm, a charts directory with the fixture chart
 * under each of its versions, and the hook account with its Role (an administrator's job: the
 * operator never writes RBAC). Returns the environment the target reads and the cleanup.
 */
export async function prepareGitLab(
  client: KubeClient,
  namespaces: string[],
  say: (line: string) => void,
): Promise<{ env: Record<string, string>; remove(): void }> {
  const helm = await ensureHelm(say);
  const charts = fixtureChartsDir();
  say(
    `gitlab target: the bundled fixture chart (not GitLab itself: the real chart's hook shapes) in ${charts.dir}`,
  );
  for (const ns of namespaces) await provisionHookAccount(client, ns);
  return {
    env: { HELM_BINARY: helm, HELM_CHARTS: charts.dir, ENABLE_DYNAMIC_CHART_PULL: "false" },
    remove: () => charts.remove(),
  };
}

async function provisionHookAccount(client: KubeClient, ns: string): Promise<void> {
  const opts = { fieldManager: "platform-operator-dev", force: true };
  const name = GITLAB_HOOK_ACCOUNT;
  await client.apply(
    { group: "", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: ns } },
    opts,
  );
  await client.apply(
    ROLE,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace: ns },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "create"] }],
    },
    opts,
  );
  await client.apply(
    ROLE_BINDING,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
    },
    opts,
  );
}

interface GitLabView {
  phase?: string;
  targetVersion?: string;
  version?: string;
  hooksVersion?: string;
  initialized?: string;
  available?: string;
}

/** One line per GitLabCore progress step (version resolved, hooks, applied, ready), as it happens. */
export function describeGitLab(prev: GitLabView, now: GitLabView): string[] {
  const out: string[] = [];
  if (now.targetVersion && now.targetVersion !== prev.targetVersion)
    out.push(`version resolved: chart ${now.targetVersion}`);
  if (now.initialized && now.initialized !== prev.initialized) out.push(`hooks: ${now.initialized}`);
  if (now.version && now.version !== prev.version) out.push(`objects applied: chart ${now.version}`);
  if (now.available && now.available !== prev.available) out.push(`readiness: ${now.available}`);
  if (now.phase && now.phase !== prev.phase) out.push(`phase ${now.phase}`);
  return out;
}

function viewOf(o: KubeObject): GitLabView {
  const status = (o["status"] ?? {}) as Record<string, unknown> & { conditions?: never };
  const c = (type: string) => {
    const x = findCondition(status.conditions, type);
    return x
      ? `${x.status === "True" ? "" : "not "}${x.reason}${x.message ? ` (${x.message})` : ""}`
      : undefined;
  };
  return {
    phase: status["phase"] as string | undefined,
    targetVersion: status["targetVersion"] as string | undefined,
    version: status["version"] as string | undefined,
    hooksVersion: status["hooksVersion"] as string | undefined,
    initialized: c(GitLabCoreCondition.Initialized),
    available: c(GitLabCoreCondition.Available),
  };
}

/** Prints a GitLabCore's progress every time its status moves; returns its stop. */
export function watchGitLab(
  client: KubeClient,
  ref: { name: string; namespace: string },
  say: (line: string) => void,
): () => Promise<void> {
  let stopped = false;
  let prev: GitLabView = {};
  let lastError = "";
  const loop = (async () => {
    while (!stopped) {
      try {
        const o = await client.get<KubeObject>(GITLABCORE, ref.name, ref.namespace);
        const now = viewOf(o);
        for (const line of describeGitLab(prev, now)) say(`gitlab ${ref.namespace}/${ref.name}: ${line}`);
        prev = now;
        lastError = "";
      } catch (e) {
        const msg = errorMessage(e);
        if (msg !== lastError) say(`gitlab ${ref.namespace}/${ref.name}: cannot read it: ${msg}`);
        lastError = msg;
      }
      await new Promise((r) => setTimeout(r, 2000).unref());
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}
