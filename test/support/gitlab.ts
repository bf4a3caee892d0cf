import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../../src/runtime/client.js";
import { findCondition } from "../../src/runtime/conditions.js";
import type { Credentials } from "../../src/runtime/credentials/types.js";
import { isConflict } from "../../src/runtime/errors.js";
import { createLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import type { ReleaseSource } from "../../src/targets/gitlab/reconciler.js";
import { GITLABCORE, gitlabTarget } from "../../src/targets/gitlab/target.js";
import { releaseSourceFromEnv } from "../../src/targets/gitlab/wiring.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { eventually } from "./kube.js";

const GITLAB_CRD = fileURLToPath(
  new URL("../../../deploy/crds/apps.gitlab.com_gitlabcores.yaml", import.meta.url),
);
const GITLABSECRETS_CRD = fileURLToPath(
  new URL("../../../deploy/crds/apps.gitlab.com_gitlabsecrets.yaml", import.meta.url),
);

type RequestSpec = Parameters<KubeClient["request"]>[0];

/**
 * A KubeClient that counts its requests (watches aside), and those that write (anything but GET) by
 * method; the paths it read (GET), in order, so a test can count the reads of one object.
 */
export class CountingClient extends KubeClient {
  readonly writes = new Map<string, number>();
  readonly reads: string[] = [];
  requestCount = 0;
  override request<T = unknown>(spec: RequestSpec): Promise<T> {
    this.requestCount++;
    if (spec.method !== "GET") this.writes.set(spec.method, (this.writes.get(spec.method) ?? 0) + 1);
    else this.reads.push(spec.path);
    return super.request<T>(spec);
  }
  get writeCount(): number {
    let n = 0;
    for (const v of this.writes.values()) n += v;
    return n;
  }
}

export { fixtureChartsDir, fixtureVersions } from "../../src/testenv/gitlab-fixture-chart.js";

export const looseCrd = (
  group: string,
  kind: string,
  plural: string,
  scope: "Namespaced" | "Cluster",
): KubeObject => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  // The group is a protected one (*.k8s.io): the API server wants the approval annotation.
  metadata: {
    name: `${plural}.${group}`,
    annotations: { "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/1538" },
  },
  spec: {
    group,
    scope,
    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
});

/**
 * The GitLabCore and GitLabSecrets definitions (as the chart installs them), and the Gateway API kinds the chart renders (loose schemas: this
 * cluster runs no gateway controller; only the objects' lifecycle matters). The Gateway API ones are
 * created only when absent, so a fuller definition another suite installed is left alone.
 */
export async function installGitLabCrds(client: KubeClient, gatewayApi = true): Promise<void> {
  for (const file of [GITLAB_CRD, GITLABSECRETS_CRD]) {
    const crd = parse(readFileSync(file, "utf8")) as KubeObject;
    await client.apply(CUSTOM_RESOURCE_DEFINITION, crd, { fieldManager: "test-setup", force: true });
  }
  const gw = "gateway.networking.k8s.io";
  for (const c of !gatewayApi
    ? []
    : [
        looseCrd(gw, "GatewayClass", "gatewayclasses", "Cluster"),
        looseCrd(gw, "Gateway", "gateways", "Namespaced"),
        looseCrd(gw, "HTTPRoute", "httproutes", "Namespaced"),
      ]) {
    await client.create(CUSTOM_RESOURCE_DEFINITION, c).catch((e: unknown) => {
      if (!isConflict(e)) throw e;
    });
  }
  const kinds: [string, string][] = [
    ["apps.gitlab.com/v2alpha1", "GitLabCore"],
    ["apps.gitlab.com/v2alpha1", "GitLabSecrets"],
  ];
  if (gatewayApi) kinds.push([`${gw}/v1`, "GatewayClass"], [`${gw}/v1`, "HTTPRoute"]);
  for (const [apiVersion, kind] of kinds) {
    await eventually(
      async () => {
        client.resources.refresh();
        return client.resources.find(apiVersion, kind);
      },
      60_000,
      `${kind} to be served`,
    );
  }
}

/**
 * What an administrator provisions before the first reconcile (the operator applies no RBAC): the
 * ServiceAccount the shared-secrets hook runs as, allowed to read and create Secrets here.
 */
export async function provisionSharedSecretsAccount(
  client: KubeClient,
  ns: string,
  name: string,
): Promise<void> {
  const t = (group: string, kind: string, plural: string): ResourceType => ({
    group,
    version: "v1",
    kind,
    plural,
    namespaced: true,
  });
  const rbac = "rbac.authorization.k8s.io";
  const opts = { fieldManager: "test-admin", force: true };
  await client.apply(
    t("", "ServiceAccount", "serviceaccounts"),
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: ns } },
    opts,
  );
  await client.apply(
    t(rbac, "Role", "roles"),
    {
      apiVersion: `${rbac}/v1`,
      kind: "Role",
      metadata: { name, namespace: ns },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "create"] }],
    },
    opts,
  );
  await client.apply(
    t(rbac, "RoleBinding", "rolebindings"),
    {
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: { name, namespace: ns },
      roleRef: { apiGroup: rbac, kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
    },
    opts,
  );
}

export interface RunningGitLab {
  manager: Manager;
  client: CountingClient;
  logs: string[];
  /** Finished passes of one object so far (the controller's "reconciled" debug line). */
  passes(key: string): number;
  /** Log lines of one kind ("hook started", ...) for one object. */
  lines(msg: string, key?: string): Record<string, unknown>[];
  stop(): Promise<void>;
}

/** Runs the gitlab target in this process against `kubeconfigPath`, watching `ns` only. */
export async function startGitLabTarget(
  kubeconfigPath: string,
  ns: string,
  chartsDir: string | ((m: Manager) => ReleaseSource),
  settings: Record<string, unknown> = {},
  /** Who the operator authenticates as: the kubeconfig's user unless given (a ServiceAccount's token, say, for the audit log). */
  credentials?: Credentials,
): Promise<RunningGitLab> {
  const helm = typeof chartsDir === "string" ? await ensureHelm() : "";
  const client = new CountingClient(
    credentials ?? loadKubeConfig(kubeconfigPath),
    "gitlab-operator-under-test",
  );
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  // The operator's own logger, safety net included: what a deployed operator would print.
  const log = createLogger({ level: "debug", stream: sink });
  const def = gitlabTarget({
    release: (m) =>
      typeof chartsDir === "string"
        ? releaseSourceFromEnv(m, {
            HELM_CHARTS: chartsDir,
            ENABLE_DYNAMIC_CHART_PULL: "false",
            HELM_BINARY: helm,
          })
        : chartsDir(m),
  });
  const config = def.parseConfig(
    { requeueInterval: "2s", stepInterval: "1s", hookTimeout: "5m", ...settings },
    "targets.gitlab",
  );
  const manager = new Manager({ target: "gitlab", client, log, namespaces: [ns] });
  await def.setup(manager, config);
  await manager.start();
  const parsed = () => logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    manager,
    client,
    logs,
    passes: (key) => parsed().filter((l) => l["msg"] === "reconciled" && l["object"] === key).length,
    lines: (msg, key) =>
      parsed().filter((l) => l["msg"] === msg && (key === undefined || l["object"] === key)),
    async stop() {
      await manager.stop();
      client.close();
    },
  };
}

export function gitlabCore(ns: string, name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "apps.gitlab.com/v2alpha1",
    kind: "GitLabCore",
    metadata: { name, namespace: ns },
    spec,
  };
}

export async function applyGitLab(client: KubeClient, obj: KubeObject): Promise<GitLabCore> {
  return client.apply<GitLabCore>(GITLABCORE, obj, { fieldManager: "test-user", force: true });
}

export const conditionOf = (o: GitLabCore, type: string) =>
  findCondition(o.status?.conditions as never, type);

/** Waits (generously: pods run on a shared node) until `check` holds for the object's current generation. */
export async function waitForGitLab(
  client: KubeClient,
  ns: string,
  name: string,
  check: (o: GitLabCore) => boolean,
  what: string,
  timeoutMs = 300_000,
): Promise<GitLabCore> {
  let last: GitLabCore | undefined;
  try {
    return await eventually(
      async () => {
        const o = await client.get<GitLabCore>(GITLABCORE, name, ns);
        last = o;
        return o.status?.observedGeneration === o.metadata.generation && check(o) ? o : undefined;
      },
      timeoutMs,
      `${ns}/${name}: ${what}`,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}\nlast status: ${JSON.stringify(last?.status ?? null)}`);
  }
}
