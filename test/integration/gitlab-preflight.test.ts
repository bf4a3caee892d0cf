import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import type { Rendered, RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
import type { ReleaseSource } from "../../src/targets/gitlab/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  installGitLabCrds,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// The upgrade preflight (spec 001, Preflight) on the shared API server, with hand-written renders:
// before an upgrade step runs a hook or applies an object, the step's first pass (the gated
// workloads paused, the pre-migrations Job) is applied with dryRun=All. A step the server refuses
// changes nothing and says why; a good one proceeds; observe-only reports the refusal too.

const DEPLOYMENT: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};
const JOB: ResourceType = { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true };
const EVENTS: ResourceType = {
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};

const labels = (release: string, component: string) => ({
  "app.kubernetes.io/name": component,
  "app.kubernetes.io/instance": release,
});
const cm = (name: string): RenderedObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: {},
});
const container = (name: string) => ({ name, image: "docker.io/library/busybox:1.35.0", command: ["true"] });

function webservice(release: string, replicas: number, tag: string): RenderedObject {
  const l = labels(release, "webservice");
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: `${release}-webservice`, labels: l },
    spec: {
      replicas,
      selector: { matchLabels: l },
      template: { metadata: { labels: { ...l, tag } }, spec: { containers: [container("webservice")] } },
    },
  };
}

function migrations(release: string, version: string, backoffLimit: number): RenderedObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: `${release}-migrations-${version.replaceAll(".", "-")}`,
      labels: labels(release, "migrations"),
    },
    spec: {
      backoffLimit,
      template: { spec: { restartPolicy: "Never", containers: [container("migrations")] } },
    },
  };
}

/** One chart version of the release: a hook, a ConfigMap only this version has, webservice, migrations. */
function release(
  name: string,
  version: string,
  bad: { replicas?: number; backoffLimit?: number } = {},
): Rendered {
  const slug = version.replaceAll(".", "-");
  return {
    chart: {
      name: "gitlab",
      version,
      appVersion: `19.${version}`,
      digest: `d-${version}-${JSON.stringify(bad)}`,
    },
    hooks: [
      {
        object: cm(`${name}-hook-${slug}`),
        events: ["pre-install", "pre-upgrade"],
        weight: 0,
        deletePolicies: [],
      },
    ],
    objects: [
      cm(`${name}-config-${slug}`),
      webservice(name, bad.replicas ?? 1, slug),
      migrations(name, version, bad.backoffLimit ?? 0),
    ],
  };
}

describe("GitLabCore upgrade preflight", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab | undefined;
  /** What each release renders at each version (`<release>@<version>`); tests change it between passes. */
  const renders = new Map<string, Rendered>();
  const source = (): ReleaseSource => ({
    capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1", "apps/v1", "batch/v1"] }),
    versions: async () => ["1.0.0", "1.1.0"],
    render: async (req) => {
      const r = renders.get(`${req.releaseName}@${req.version}`);
      if (!r) throw new Error(`no render for ${req.releaseName}@${req.version}`);
      return structuredClone(r);
    },
  });
  const setVersion = (name: string, version: string) =>
    applyGitLab(
      client,
      gitlabCore(ns, name, {
        version: { type: "Static", version },
        hostname: "gitlab.example.com",
        // The migrations Jobs never run here (no node): the step must not wait for them.
        upgrade: { skipBatchedMigrationCheck: true },
      }),
    );
  const absent = async (type: ResourceType, name: string) =>
    isNotFound(await client.get(type, name, ns).catch((e: unknown) => e));
  const start = async (settings: Record<string, unknown> = {}) => {
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, source, {
      requeueInterval: "1s",
      ...settings,
    });
  };
  const installed = async (name: string): Promise<GitLabCore> => {
    renders.set(`${name}@1.0.0`, release(name, "1.0.0"));
    await setVersion(name, "1.0.0");
    return waitForGitLab(client, ns, name, (g) => g.status?.version === "1.0.0", "1.0.0 applied", 60_000);
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-preflight");
    await start();
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  it("a step the API server refuses changes nothing, and says which objects and why", async () => {
    await installed("pf");
    const webBefore = await client.get<KubeObject>(DEPLOYMENT, "pf-webservice", ns);

    // 1.1.0 renders a webservice with a negative replica count and a migrations Job with a negative
    // backoffLimit: valid YAML the renderer passes, refused by the API server's validation.
    renders.set("pf@1.1.0", release("pf", "1.1.0", { replicas: -1, backoffLimit: -1 }));
    await setVersion("pf", "1.1.0");
    const o = await waitForGitLab(
      client,
      ns,
      "pf",
      (g) => conditionOf(g, "Upgradeable")?.reason === "PreflightFailed",
      "PreflightFailed",
      60_000,
    );
    const upgradeable = conditionOf(o, "Upgradeable")!;
    assert.equal(upgradeable.status, "False");
    assert.match(upgradeable.message, /^preflight of chart 1\.1\.0 refused/);
    assert.match(upgradeable.message, new RegExp(`Deployment ${ns}/pf-webservice: .*spec\\.replicas`));
    assert.match(upgradeable.message, new RegExp(`Job ${ns}/pf-migrations-1-1-0-pre: .*spec\\.backoffLimit`));
    assert.equal(conditionOf(o, "Progressing")?.reason, "PreflightFailed");
    assert.equal(conditionOf(o, "Progressing")?.status, "False");
    assert.equal(conditionOf(o, "Initialized")?.status, "True", "no hook ran: the 1.0.0 record stands");
    assert.equal(o.status?.version, "1.0.0");
    assert.equal(o.status?.hooksVersion, "1.0.0");
    assert.equal(o.status?.targetVersion, "1.1.0");

    // Nothing of 1.1.0 reached the cluster: not its hook, not its objects, not the paused workload.
    assert.ok(await absent(CONFIGMAP, "pf-hook-1-1-0"), "the step's hook did not run");
    assert.ok(await absent(CONFIGMAP, "pf-config-1-1-0"));
    assert.ok(await absent(JOB, "pf-migrations-1-1-0"));
    assert.ok(await absent(JOB, "pf-migrations-1-1-0-pre"));
    // The generation moves with every spec change (status updates by the controllers do not).
    const webAfter = await client.get<KubeObject>(DEPLOYMENT, "pf-webservice", ns);
    assert.equal(webAfter.metadata.generation, webBefore.metadata.generation);
    assert.equal((webAfter as { spec?: { paused?: boolean } }).spec?.paused, undefined);

    const event = await eventually(
      async () => {
        const list = await client.list<KubeObject>(EVENTS, { namespace: ns });
        return list.items.find(
          (e) => e["reason"] === "PreflightFailed" && (e["regarding"] as { name?: string })?.name === "pf",
        );
      },
      30_000,
      "a PreflightFailed event",
    );
    assert.equal(event["type"], "Warning");
    assert.match(String(event["note"]), /pf-webservice/);
  });

  it("once the render is fixed, the step passes its preflight and proceeds; the dry run stored nothing", async () => {
    renders.set("pf@1.1.0", release("pf", "1.1.0"));
    // A spec change reconciles now rather than at the next backoff; the version stays 1.1.0.
    await applyGitLab(
      client,
      gitlabCore(ns, "pf", {
        version: { type: "Static", version: "1.1.0" },
        hostname: "gitlab.example.com",
        upgrade: { skipBatchedMigrationCheck: true },
        chart: { values: { retry: true } },
      }),
    );
    const o = await waitForGitLab(
      client,
      ns,
      "pf",
      (g) => g.status?.version === "1.1.0",
      "1.1.0 applied",
      60_000,
    );
    assert.equal(conditionOf(o, "Upgradeable")?.status, "True");
    assert.ok(await client.get(CONFIGMAP, "pf-hook-1-1-0", ns), "the step's hook ran");
    assert.ok(await client.get(CONFIGMAP, "pf-config-1-1-0", ns));
    assert.ok(await client.get(JOB, "pf-migrations-1-1-0", ns));
    assert.ok(await absent(JOB, "pf-migrations-1-1-0-pre"), "the pre-migrations Job was only dry-run");
    const web = await client.get<KubeObject & { spec: { paused?: boolean } }>(
      DEPLOYMENT,
      "pf-webservice",
      ns,
    );
    assert.equal(web.spec.paused, undefined, "the real apply is the chart's Deployment, not the paused one");
    const passed = op!.lines("upgrade preflight passed", `${ns}/pf`);
    assert.equal(passed.length, 1);
    assert.deepEqual(passed[0]!["accepted"], [
      `Deployment ${ns}/pf-webservice`,
      `Job ${ns}/pf-migrations-1-1-0-pre`,
    ]);
  });

  it("observe-only runs the preflight and reports a refused step, writing nothing else", async () => {
    await installed("obs");
    await op!.stop();
    op = undefined;
    await start({ observeOnly: true });
    renders.set("obs@1.1.0", release("obs", "1.1.0", { replicas: -1 }));
    await setVersion("obs", "1.1.0");
    const o = await waitForGitLab(
      client,
      ns,
      "obs",
      (g) => conditionOf(g, "Upgradeable")?.reason === "PreflightFailed",
      "PreflightFailed in observe-only",
      60_000,
    );
    assert.match(conditionOf(o, "Upgradeable")!.message, /Deployment .*obs-webservice: .*spec\.replicas/);
    assert.equal(o.status?.version, "1.0.0");
    assert.ok(await absent(CONFIGMAP, "obs-hook-1-1-0"));
    assert.ok(await absent(CONFIGMAP, "obs-config-1-1-0"));
  });
});
