import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import {
  capabilitiesFromDiscovery,
  HelmRunner,
  type RenderResult,
  renderChart,
} from "../../src/targets/gitlab/render/index.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { writeFixtureCharts } from "../support/chart-repo.js";
import { clientFor } from "../support/kube.js";
import { deleteNamespace, type Manifest, type NodeNamespace, nodeNamespace } from "../support/node.js";

// The fixture chart's hooks and workloads really run: played here the way helm would (hooks by
// weight, RBAC included, then the release), on the local node. The operator's own hook runner is
// tested with the reconciler; this proves the fixture it is tested with behaves like the real chart.

const SECRETS = ["gitlab-initial-root-password", "gitlab-shell-secret", "rails-secret", "kas-secret"];

describe("gitlab fixture chart on the node: shared-secrets hook creates Secrets, workloads start", () => {
  let ctx: NodeNamespace;
  let client: KubeClient;
  let dir: string;
  let rendered: RenderResult;

  before(async () => {
    ctx = await nodeNamespace("gl-hooks");
    client = clientFor(ctx.node.kubeconfigPath);
    dir = makeTempDir("gitlab-hooks");
    await writeFixtureCharts(dir, ["10.4.0"]);
    const helm = new HelmRunner({ binary: await ensureHelm() });
    rendered = await renderChart(helm, {
      chartDir: join(dir, "gitlab", "10.4.0"),
      releaseName: "gl",
      namespace: ctx.namespace,
      values: {
        global: {
          hosts: { domain: "example.test" },
          gatewayApi: { enabled: false },
          ingress: { enabled: false },
        },
        gitlab: { sidekiq: { replicas: 0 } },
      },
      capabilities: await capabilitiesFromDiscovery(client),
    });
  });
  after(async () => {
    client?.close();
    await deleteNamespace(ctx);
    if (dir) removeTempDir(dir);
  });

  const secretData = async () => {
    const out: Record<string, Record<string, string>> = {};
    for (const s of SECRETS) out[s] = (await ctx.getJson(`secret/gl-${s}`))["data"];
    return out;
  };

  it("runs the pre-install hooks in weight order; the Job creates the Secrets through the API with kubectl", async () => {
    const preInstall = rendered.hooks.filter((h) => h.events.includes("pre-install"));
    assert.deepEqual(
      preInstall.map((h) => h.weight),
      [-5, -5, -5, -3, 0],
    );
    // Weight groups in order, each group applied together, as helm does.
    for (const weight of [...new Set(preInstall.map((h) => h.weight))]) {
      const group = preInstall.filter((h) => h.weight === weight);
      await ctx.apply(...group.map((h) => h.object as Manifest));
      for (const h of group) {
        if (h.object.kind === "Job")
          await ctx.waitFor(`job/${h.object.metadata.name}`, "condition=Complete", 300);
      }
    }
    const data = await secretData();
    for (const s of SECRETS) {
      const values = Object.values(data[s] ?? {});
      assert.equal(values.length, 1, `gl-${s} has one key`);
      assert.ok(Buffer.from(values[0]!, "base64").toString().length >= 16, `gl-${s} has a generated value`);
    }

    // before-hook-creation: the next run replaces the Job; the script keeps existing Secrets.
    const job = preInstall.find((h) => h.object.kind === "Job")!;
    assert.deepEqual(job.deletePolicies, ["hook-succeeded", "before-hook-creation"]);
    await ctx.kubectl(["delete", "job", job.object.metadata.name, "--wait=true"]);
    await ctx.apply(job.object as Manifest);
    await ctx.waitFor(`job/${job.object.metadata.name}`, "condition=Complete", 300);
    assert.deepEqual(await secretData(), data, "a rerun rotates nothing");
  });

  it("the release's workloads start once the Secrets exist; the migrations Job completes", async () => {
    const objects = rendered.objects.filter((o) => o.kind !== "CustomResourceDefinition");
    assert.ok(
      rendered.objects.some((o) => o.kind === "CustomResourceDefinition"),
      "10.4 renders its CRD template",
    );
    await ctx.apply(...(objects as Manifest[]));
    await ctx.waitFor("job/gl-migrations-10-4-0", "condition=Complete", 300);
    await ctx.waitFor("deployment/gl-webservice", "condition=Available", 300);
    await ctx.kubectl(["rollout", "status", "statefulset/gl-gitaly", "--timeout=300s"]);
    const job = await ctx.getJson("job/gl-migrations-10-4-0");
    assert.equal(job["metadata"]["labels"]["gitlab.com/target-version"], "19.4.0");
  });
});
