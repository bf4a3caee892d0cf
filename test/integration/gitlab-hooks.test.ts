import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, JOB, POD, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { auditLogPath } from "../../src/testenv/node/components.js";
import { tokenCredentials } from "../support/credentials.js";
import {
  applyGitLab,
  conditionOf,
  fixtureChartsDir,
  fixtureVersions,
  gitlabCore,
  installGitLabCrds,
  provisionSharedSecretsAccount,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { clientFor, eventually } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { CLUSTER_ROLE_BINDING, serviceAccountToken } from "../support/rbac.js";

// Helm's hook lifecycle on the local node with the fixture chart's copies of the real GitLab chart's
// hooks: the shared-secrets ServiceAccount (-5), its script ConfigMap (-3) and the Job that mounts
// and runs that script (unweighted) to create Secrets through the API, all
// hook-succeeded,before-hook-creation; a hook-failed pair after them (the fixture's hookProbe); a
// `test` Pod. The Job only completes when its ConfigMap is still there, so deleting a hook-succeeded
// hook before the whole event succeeded fails this file (as it failed the real chart's install).

const GATEWAYCLASS: ResourceType = {
  group: "gateway.networking.k8s.io",
  version: "v1",
  kind: "GatewayClass",
  plural: "gatewayclasses",
  namespaced: false,
};

const NAME = "gl";
const FAILING = "gf";
/** The hook ServiceAccount's name: the operator creates it as a hook; its Role and binding are the admin's. */
const SA = "gl-hooks";

const values = (probeExit: number) => ({
  "shared-secrets": { serviceAccount: { create: true, name: SA }, rbac: { create: false } },
  hookProbe: { enabled: true, exitCode: probeExit },
  postHook: { enabled: true },
  global: { ingress: { enabled: false }, gatewayApi: { enabled: false } },
});

const OPERATOR_SA = "gl-operator";
const OPERATOR_USER = (ns: string) => `system:serviceaccount:${ns}:${OPERATOR_SA}`;

/** Requests (watches aside: they are the objects' own) `user` made between two moments, from the audit log. */
function requestsBy(logPath: string, user: string, from: Date, to: Date): string[] {
  const out: string[] = [];
  for (const line of readFileSync(logPath, "utf8").split("\n")) {
    if (!line.includes(user)) continue;
    let e: {
      user?: { username?: string };
      verb?: string;
      stage?: string;
      requestURI?: string;
      requestReceivedTimestamp?: string;
    };
    try {
      e = JSON.parse(line);
    } catch {
      continue; // the line the API server is writing right now
    }
    if (e.user?.username !== user || e.stage !== "ResponseComplete" || e.verb === "watch") continue;
    const at = new Date(e.requestReceivedTimestamp ?? 0);
    if (at >= from && at <= to) out.push(`${e.verb} ${e.requestURI}`);
  }
  return out;
}

const gone = async (type: ResourceType, name: string, ns: string, client: ReturnType<typeof clientFor>) =>
  isNotFound(await client.get(type, name, ns).catch((e: unknown) => e));

describe("GitLabCore hooks as Helm runs them, on the local node", () => {
  let ctx: NodeNamespace;
  let ns: string;
  let client: ReturnType<typeof clientFor>;
  let charts: { dir: string; remove(): void };
  let op: RunningGitLab;
  const key = (name = NAME) => `${ns}/${name}`;
  const binding = () => `${ns}-${OPERATOR_SA}`;

  /** The operator's credentials as a ServiceAccount bound to cluster-admin (what it may do is chart-install's test). */
  async function operatorAccount() {
    const token = await serviceAccountToken(client, ns, OPERATOR_SA);
    await client.apply(
      CLUSTER_ROLE_BINDING,
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: binding() },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: OPERATOR_SA, namespace: ns }],
      },
      { fieldManager: "tests" },
    );
    const credentials = tokenCredentials(client.credentials, token);
    const probe = new KubeClient(credentials, "gl-hooks-probe");
    await eventually(
      () =>
        probe.list(GITLABCORE, { namespace: ns }).then(
          () => true,
          () => undefined,
        ),
      30_000,
      "the ServiceAccount's binding to take effect",
    );
    probe.close();
    return credentials;
  }

  before(async () => {
    ctx = await nodeNamespace("gl-hooks");
    ns = ctx.namespace;
    client = clientFor(ctx.node.kubeconfigPath);
    await installGitLabCrds(client);
    // The administrator's Role and RoleBinding for the hook account; the account itself is the hook's.
    await provisionSharedSecretsAccount(client, ns, SA);
    await client.delete(SERVICE_ACCOUNT, SA, ns);
    charts = fixtureChartsDir(fixtureVersions());
    op = await startGitLabTarget(ctx.node.kubeconfigPath, ns, charts.dir);
  });
  after(async () => {
    await op?.stop();
    await client?.delete(GATEWAYCLASS, `${ns}-${NAME}-gitlab`).catch(() => {});
    await client?.delete(CLUSTER_ROLE_BINDING, binding()).catch(() => {});
    await deleteNamespace(ctx);
    charts?.remove();
    client?.close();
  });

  it("install: hooks in Helm's order, hook-succeeded ones deleted only after the last hook succeeded", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: { values: values(0) },
      }),
    );
    const o = await waitForGitLab(client, ns, NAME, (g) => g.status?.phase === "Running", "phase Running");
    assert.equal(conditionOf(o, "Initialized")?.status, "True");
    assert.equal(o.status?.hooksVersion, "10.3.0");

    const started = op.lines("hook started", key()).map((l) => l["hook"]);
    assert.deepEqual(started, [
      `ServiceAccount ${ns}/gl-hooks`,
      `ConfigMap ${ns}/gl-shared-secrets`,
      `Job ${ns}/gl-shared-secrets`,
      `ConfigMap ${ns}/gl-hook-probe`,
      `Job ${ns}/gl-hook-probe`,
      `ConfigMap ${ns}/gl-post-install`,
    ]);
    // post-install runs once the release's objects are applied, as Helm runs it, and is kept.
    const at = (msg: string, hook?: string) =>
      op.lines(msg, key()).find((l) => hook === undefined || l["hook"] === hook)?.["time"] as number;
    assert.ok(at("applied the release") <= at("hook started", `ConfigMap ${ns}/gl-post-install`));
    assert.ok(at("hook completed", `Job ${ns}/gl-hook-probe`) <= at("applied the release"));
    assert.ok(await client.get(CONFIGMAP, "gl-post-install", ns), "no delete policy: kept");
    // The Job really ran the script its ConfigMap holds, as the ServiceAccount the hook created.
    for (const s of ["gl-gitlab-initial-root-password", "gl-gitlab-shell-secret", "gl-rails-secret"])
      assert.ok(await client.get(SECRET, s, ns), `Secret ${s} written by the hook Job`);

    // Nothing was deleted before every hook of the event completed; then the hook-succeeded ones,
    // last first. The log line is written once the object is gone from the API.
    const events = op
      .lines("hook completed", key())
      .concat(op.lines("hook deleted", key()))
      .sort((a, b) => Number(a["time"]) - Number(b["time"]));
    const lastCompleted = events.findLastIndex((l) => l["msg"] === "hook completed");
    const firstDeleted = events.findIndex((l) => l["msg"] === "hook deleted");
    assert.ok(firstDeleted > lastCompleted, "no hook deleted while a hook of the event was still to run");
    assert.deepEqual(
      op.lines("hook deleted", key()).map((l) => l["hook"]),
      [`Job ${ns}/gl-shared-secrets`, `ConfigMap ${ns}/gl-shared-secrets`, `ServiceAccount ${ns}/gl-hooks`],
    );
    assert.ok(await gone(CONFIGMAP, "gl-shared-secrets", ns, client), "the script ConfigMap is deleted");
    assert.ok(await gone(JOB, "gl-shared-secrets", ns, client));
    assert.ok(await gone(SERVICE_ACCOUNT, SA, ns, client));
    // hook-failed only, and they succeeded: kept, and not pruned as if they were release objects
    // (a ConfigMap is a kind the release has, and the hook carries the release labels).
    assert.ok(await client.get(CONFIGMAP, "gl-hook-probe", ns));
    assert.ok(await client.get(JOB, "gl-hook-probe", ns));
    // `test` hooks belong to `helm test`: never created.
    const pods = await client.list<KubeObject>(POD, { namespace: ns });
    assert.ok(!pods.items.some((p) => p.metadata.name?.startsWith("gl-test-runner")));
    assert.ok(await gone(SECRET, "gl-test-ran", ns, client));
  });

  it("later passes and an operator restart run no hook and prune none of the kept ones", async () => {
    const passes = op.passes(key());
    const hooks = op.lines("hook started").length;
    await eventually(() => (op.passes(key()) >= passes + 3 ? true : undefined), 120_000, "three more passes");
    assert.equal(op.lines("hook started").length, hooks, "no hook ran again");
    assert.equal(op.lines("pruned", key()).length, 0, "nothing pruned");

    // Restarted as a ServiceAccount, so the API server's audit log records what it asks.
    await op.stop();
    op = await startGitLabTarget(ctx.node.kubeconfigPath, ns, charts.dir, {}, await operatorAccount());
    await eventually(() => (op.passes(key()) >= 2 ? true : undefined), 120_000, "two passes after a restart");
    assert.equal(op.lines("hook started").length, 0, "the restarted operator ran no hook");
    assert.equal(op.client.writeCount, 0, `writes after a restart: ${JSON.stringify([...op.client.writes])}`);
    assert.ok(
      await client.get(CONFIGMAP, "gl-hook-probe", ns),
      "the kept hook survived the restart's passes",
    );
  });

  it("a quiet pass asks the API server nothing (audit log), and an object deleted by hand is back", async () => {
    const from = op.passes(key());
    await eventually(() => (op.passes(key()) >= from + 1 ? true : undefined), 60_000, "a pass to start from");
    const start = new Date();
    const counted = op.passes(key());
    await eventually(
      () => (op.passes(key()) >= counted + 3 ? true : undefined),
      60_000,
      "three quiet passes",
    );
    const end = new Date();
    const asked = requestsBy(auditLogPath(ctx.node.dir), OPERATOR_USER(ns), start, end);
    assert.deepEqual(asked, [], `requests in 3 quiet passes: ${asked.join(", ")}`);
    console.log(`# quiet passes: 3, API requests (watches aside): ${asked.length}`);

    // Deleted by hand: its watch event reconciles the release, and the pass puts it back.
    await client.delete(CONFIGMAP, "gl-sidekiq", ns);
    await eventually(
      async () => ((await client.getOrUndefined(CONFIGMAP, "gl-sidekiq", ns)) ? true : undefined),
      60_000,
      "the deleted ConfigMap to be put back",
    );
  });

  it("a failed hook: deleted when it says hook-failed, with the earlier hook-succeeded ones; the rest kept", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, FAILING, {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: { values: values(3) },
      }),
    );
    const o = await waitForGitLab(
      client,
      ns,
      FAILING,
      (g) => conditionOf(g, "Initialized")?.reason === "HooksFailed",
      "Initialized False, HooksFailed",
    );
    assert.equal(conditionOf(o, "Initialized")?.status, "False");
    assert.match(conditionOf(o, "Initialized")?.message ?? "", /Job .*gf-hook-probe/);
    // The first run's deletions, from the log (later retries repeat them).
    const runs = op.lines("hook started", key(FAILING)).map((l) => String(l["hook"]));
    assert.deepEqual(runs.slice(0, 5), [
      `ServiceAccount ${ns}/gl-hooks`,
      `ConfigMap ${ns}/gf-shared-secrets`,
      `Job ${ns}/gf-shared-secrets`,
      `ConfigMap ${ns}/gf-hook-probe`,
      `Job ${ns}/gf-hook-probe`,
    ]);
    assert.deepEqual(
      op
        .lines("hook deleted", key(FAILING))
        .slice(0, 4)
        .map((l) => l["hook"]),
      [
        `Job ${ns}/gf-hook-probe`,
        `ServiceAccount ${ns}/gl-hooks`,
        `ConfigMap ${ns}/gf-shared-secrets`,
        `Job ${ns}/gf-shared-secrets`,
      ],
    );
    // The probe ConfigMap succeeded and says hook-failed only: no run ever deletes it.
    assert.ok(await client.get(CONFIGMAP, "gf-hook-probe", ns));
    // Nothing of the release was applied: the event stopped at the failed hook.
    assert.ok(await gone(CONFIGMAP, "gf-webservice", ns, client));
    await client.delete(GITLABCORE, FAILING, ns);
  });

  it("a version in no source is VersionUnresolved, not ChartPullFailed (dynamic pull is off)", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, "gv", {
        version: { type: "Static", version: "12.0.0" },
        hostname: "gitlab.example.com",
        chart: { values: values(0) },
      }),
    );
    const o = await waitForGitLab(
      client,
      ns,
      "gv",
      (g) => !!conditionOf(g, "Initialized")?.reason,
      "a reason on Initialized",
    );
    const init = conditionOf(o, "Initialized");
    assert.equal(init?.reason, "VersionUnresolved");
    assert.match(init?.message ?? "", /^spec\.version: chart gitlab 12\.0\.0 is not in the charts directory/);
    await client.delete(GITLABCORE, "gv", ns);
  });
});
