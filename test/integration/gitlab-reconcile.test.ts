import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../src/apis/gitlabcore.js";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { renders } from "../../src/targets/gitlab/metrics.js";
import { releaseInfo, releasePhase } from "../../src/targets/gitlab/release-metrics.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  type RunningGitLab,
  waitForGitLab,
} from "../support/gitlab.js";
import { type FixtureGitLab, startFixtureGitLab } from "../support/gitlab-fixture.js";
import { clientFor, eventually } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";

// The GitLabCore reconciler against a real cluster (the local node's: API server, controller
// manager, kubelet), real helm and the fixture chart: hook Jobs really run and create Secrets.

const t = (
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceType => ({
  group,
  version,
  kind,
  plural,
  namespaced,
});
const DEPLOYMENT = t("apps", "v1", "Deployment", "deployments");
const STATEFULSET = t("apps", "v1", "StatefulSet", "statefulsets");
const SERVICE = t("", "v1", "Service", "services");
const SECRET = t("", "v1", "Secret", "secrets");
const JOB = t("batch", "v1", "Job", "jobs");
const ROLE = t("rbac.authorization.k8s.io", "v1", "Role", "roles");
const INGRESS = t("networking.k8s.io", "v1", "Ingress", "ingresses");
const GATEWAY = t("gateway.networking.k8s.io", "v1", "Gateway", "gateways");
const HTTPROUTE = t("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes");
const GATEWAYCLASS = t("gateway.networking.k8s.io", "v1", "GatewayClass", "gatewayclasses", false);

const NAME = "gl";
const SA = "gitlab-manager";

/** What the operator's derived values set for shared-secrets: the administrator's account, no RBAC. */
const baseValues = {
  "shared-secrets": { serviceAccount: { create: false, name: SA }, rbac: { create: false } },
  // The derived layer turns the Gateway API off when spec.networking is unset; the free-form values win.
  global: { ingress: { enabled: false }, gatewayApi: { enabled: true } },
};

describe("GitLabCore reconcile on a real cluster", () => {
  let ctx: NodeNamespace;
  let ns: string;
  let client: ReturnType<typeof clientFor>;
  let gl: FixtureGitLab | undefined;
  let op: RunningGitLab;
  const key = () => `${ns}/${NAME}`;

  before(async () => {
    ctx = await nodeNamespace("gl-rec");
    ns = ctx.namespace;
    client = clientFor(ctx.node.kubeconfigPath);
    gl = await startFixtureGitLab(client, ctx.node.kubeconfigPath, ns, { hookAccount: SA });
    op = gl.op;
  });
  after(async () => {
    await gl?.stop();
    // The GatewayClass is cluster-scoped: make sure no run leaves one behind.
    await client?.delete(GATEWAYCLASS, `${ns}-${NAME}-gitlab`).catch(() => {});
    await deleteNamespace(ctx);
    client?.close();
  });

  it("first install: hooks run once, every object applied with owner reference and release labels", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: { values: baseValues },
      }),
    );
    const o = await waitForGitLab(client, ns, NAME, (g) => g.status?.phase === "Running", "phase Running");
    const owner = await client.get<GitLabCore>(GITLABCORE, NAME, ns);
    assert.equal(o.status?.version, "10.3.0");
    assert.equal(o.status?.targetVersion, "10.3.0");
    assert.equal(o.status?.hooksVersion, "10.3.0");
    assert.equal(o.status?.gitlabVersion, "19.3.0", "read off the migrations Job label");
    // The release's own series say the same (the status write publishes them).
    assert.deepEqual(
      (await releaseInfo.get()).values.filter((v) => v.labels["namespace"] === ns).map((v) => v.labels),
      [{ namespace: ns, name: NAME, chart_version: "10.3.0", gitlab_version: "19.3.0" }],
    );
    assert.deepEqual(
      (await releasePhase.get()).values
        .filter((v) => v.labels["namespace"] === ns && v.value === 1)
        .map((v) => v.labels["phase"]),
      ["Running"],
    );
    assert.equal(conditionOf(o, "Initialized")?.status, "True");
    assert.equal(conditionOf(o, "Initialized")?.observedGeneration, o.metadata.generation);
    assert.equal(conditionOf(o, "Available")?.reason, "WorkloadsReady");
    assert.ok(o.metadata.finalizers?.includes("gitlabcore.apps.gitlab.com/finalizer"));
    assert.deepEqual(o.status?.renderedKinds, [
      "apps/v1/Deployment",
      "apps/v1/StatefulSet",
      "batch/v1/Job",
      "gateway.networking.k8s.io/v1/Gateway",
      "gateway.networking.k8s.io/v1/GatewayClass",
      "gateway.networking.k8s.io/v1/HTTPRoute",
      "policy/v1/PodDisruptionBudget",
      "v1/ConfigMap",
      "v1/Service",
    ]);

    // The shared-secrets hook Job really ran in the cluster and created the Secrets through the API.
    for (const s of ["gl-gitlab-initial-root-password", "gl-gitlab-shell-secret", "gl-rails-secret"])
      assert.ok(await client.get(SECRET, s, ns), `hook-created Secret ${s}`);
    const hooks = op.lines("hook started", key()).map((l) => l["hook"]);
    assert.deepEqual(hooks, [`ConfigMap ${ns}/gl-shared-secrets`, `Job ${ns}/gl-shared-secrets`]);
    assert.equal(op.lines("hook completed", key()).length, 2);

    // Every namespaced object carries the owner as controller and the release labels.
    const objects: [ResourceType, string][] = [
      [DEPLOYMENT, "gl-webservice"],
      [DEPLOYMENT, "gl-sidekiq"],
      [STATEFULSET, "gl-gitaly"],
      [SERVICE, "gl-webservice"],
      [CONFIGMAP, "gl-webservice"],
      [JOB, "gl-migrations-10-3-0"],
      [GATEWAY, "gl-gw"],
      [HTTPROUTE, "gl-gitlab"],
    ];
    for (const [type, name] of objects) {
      const live = await client.get<KubeObject>(type, name, ns);
      const ref = live.metadata.ownerReferences?.find((r) => r.controller);
      assert.equal(ref?.uid, owner.metadata.uid, `${type.kind} ${name} controlled by the GitLabCore`);
      assert.equal(live.metadata.labels?.[GitLabReleaseNameLabel], NAME);
      assert.equal(live.metadata.labels?.[GitLabReleaseNamespaceLabel], ns);
      const managers = (live.metadata.managedFields as { manager: string; operation: string }[]).filter(
        (m) => m.operation === "Apply",
      );
      assert.ok(managers.some((m) => m.manager === "gitlabcore-controller"));
    }
    // Cluster-scoped: labels, no owner reference.
    const gc = await client.get<KubeObject>(GATEWAYCLASS, `${ns}-${NAME}-gitlab`);
    assert.equal(gc.metadata.labels?.[GitLabReleaseNameLabel], NAME);
    assert.equal(gc.metadata.ownerReferences, undefined);
    // Hook RBAC is never applied (the chart renders none with rbac.create false; the admin's Role stays theirs).
    const role = await client.get<KubeObject>(ROLE, SA, ns);
    assert.ok(
      !(role.metadata.managedFields as { manager: string }[]).some(
        (m) => m.manager === "gitlabcore-controller",
      ),
    );
  });

  it("a second pass over unchanged inputs renders nothing new and writes nothing", async () => {
    const helmRuns = async () =>
      ((await renders.get()).values ?? [])
        .filter((v) => v.labels.cached === "false")
        .reduce((n, v) => n + v.value, 0);
    const helmBefore = await helmRuns();
    const writes = op.client.writeCount;
    const passes = op.passes(key());
    const hooksBefore = op.lines("hook started").length;
    await eventually(() => (op.passes(key()) >= passes + 3 ? true : undefined), 120_000, "three more passes");
    assert.equal(
      op.client.writeCount - writes,
      0,
      `writes in quiet passes: ${JSON.stringify([...op.client.writes])}`,
    );
    assert.equal(op.lines("hook started").length, hooksBefore, "no hook ran again");
    assert.equal((await helmRuns()) - helmBefore, 0, "the render cache answered: helm did not run");
  });

  it("an object deleted by hand and one edited by hand come back on the next pass", async () => {
    await client.delete(CONFIGMAP, "gl-sidekiq", ns);
    await client.mergePatch(SERVICE, "gl-webservice", ns, {
      metadata: { labels: { [GitLabReleaseNameLabel]: "someone-else" } },
    });
    const cm = await client.get<KubeObject>(CONFIGMAP, "gl-webservice", ns);
    const data = cm["data"] as Record<string, string>;
    const [firstKey] = Object.keys(data);
    await client.mergePatch(CONFIGMAP, "gl-webservice", ns, { data: { [firstKey!]: "edited by hand" } });
    await eventually(
      async () => {
        const back = await client.getOrUndefined<KubeObject>(CONFIGMAP, "gl-sidekiq", ns);
        const svc = await client.get<KubeObject>(SERVICE, "gl-webservice", ns);
        const edited = await client.get<KubeObject>(CONFIGMAP, "gl-webservice", ns);
        return back &&
          svc.metadata.labels?.[GitLabReleaseNameLabel] === NAME &&
          (edited["data"] as Record<string, string>)[firstKey!] === data[firstKey!]
          ? true
          : undefined;
      },
      120_000,
      "the deleted ConfigMap, the Service's label and the ConfigMap's data to be restored",
    );
  });

  it("switching the networking mode prunes what the old mode rendered", async () => {
    const gcName = `${ns}-${NAME}-gitlab`;
    await applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: {
          values: { ...baseValues, global: { ingress: { enabled: true }, gatewayApi: { enabled: false } } },
        },
      }),
    );
    const o = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => g.status?.phase === "Running" && !g.status.renderedKinds?.some((k) => k.includes("gateway")),
      "the Gateway API kinds dropped from renderedKinds",
    );
    assert.ok(o.status?.renderedKinds?.includes("networking.k8s.io/v1/Ingress"));
    assert.ok(await client.get(INGRESS, "gl-webservice", ns));
    for (const [type, name, where] of [
      [GATEWAY, "gl-gw", ns],
      [HTTPROUTE, "gl-gitlab", ns],
      [HTTPROUTE, "gl-registry", ns],
      [GATEWAYCLASS, gcName, undefined],
    ] as const) {
      await eventually(
        async () =>
          isNotFound(await client.get(type, name, where).catch((e: unknown) => e)) ? true : undefined,
        60_000,
        `${type.kind} ${name} to be pruned`,
      );
    }
    // Secrets (hook-made or not) are never pruned.
    assert.ok(await client.get(SECRET, "gl-rails-secret", ns));
  });

  it("deletion removes the cluster-scoped GatewayClass by its labels and lets the object go", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: { values: baseValues },
      }),
    );
    const gcName = `${ns}-${NAME}-gitlab`;
    await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => !!g.status?.renderedKinds?.includes("gateway.networking.k8s.io/v1/GatewayClass"),
      "the GatewayClass back in renderedKinds",
    );
    assert.ok(await client.get(GATEWAYCLASS, gcName));
    await client.delete(GITLABCORE, NAME, ns);
    await eventually(
      async () =>
        isNotFound(await client.get(GITLABCORE, NAME, ns).catch((e: unknown) => e)) ? true : undefined,
      120_000,
      "the GitLabCore to be gone",
    );
    assert.ok(
      isNotFound(await client.get(GATEWAYCLASS, gcName).catch((e: unknown) => e)),
      "GatewayClass deleted",
    );
    // Its series go with it, once the informer has seen the deletion.
    await eventually(
      async () =>
        (await releasePhase.get()).values.some((v) => v.labels["namespace"] === ns) ? undefined : true,
      30_000,
      "the release's metric series to be removed",
    );
    assert.deepEqual(
      (await releaseInfo.get()).values.filter((v) => v.labels["namespace"] === ns),
      [],
    );
  });
});
