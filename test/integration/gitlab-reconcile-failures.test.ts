import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import { CONFIGMAP, JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import type { Rendered, RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
import type { ReleaseSource } from "../../src/targets/gitlab/reconciler.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
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

// Failure paths of one pass, on the shared API server with hand-written renders (no helm, no pods):
// what is not served, refused, or failing is named, the rest is not blocked, and the hooks are not
// run again for a failed apply.

const SERVICE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
const EVENTS: ResourceType = {
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};

const cm = (name: string, data: Record<string, string> = { a: "1" }): RenderedObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data,
});
const service = (name: string, port: number): RenderedObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ name: "http", port, targetPort: 8080 }] },
});
const migrate = (image: string): RenderedObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "jobs-migrate" },
  spec: {
    backoffLimit: 0,
    template: { spec: { restartPolicy: "Never", containers: [{ name: "migrate", image }] } },
  },
});
const chart = { name: "gitlab", version: "1.0.0", appVersion: "17.0.0", digest: "fixed" };

describe("GitLabCore pass failures", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab;
  /** What each release renders, by release name; tests change it between passes. */
  const renders = new Map<string, Rendered>();
  const source = (): ReleaseSource => ({
    capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1"] }),
    versions: async () => ["1.0.0"],
    render: async (req) => {
      const r = renders.get(req.releaseName);
      if (!r) throw new Error(`no render for ${req.releaseName}`);
      return structuredClone(r);
    },
  });
  const create = (name: string) =>
    applyGitLab(
      client,
      gitlabCore(ns, name, { version: { type: "Static", version: "1.0.0" }, hostname: "gitlab.example.com" }),
    );

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    // The shared API server: the GitLabCore definition only, nothing this suite does not need.
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-fail");
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, source, { requeueInterval: "1s" });
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  it("a kind the cluster does not serve fails the pass with the kind named in Available; the rest is applied", async () => {
    renders.set("unserved", {
      chart,
      hooks: [],
      objects: [
        cm("unserved-config"),
        { apiVersion: "widgets.example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: {} },
      ],
    });
    await create("unserved");
    const o = await waitForGitLab(
      client,
      ns,
      "unserved",
      (g) => conditionOf(g, "Available")?.reason === "ApplyFailed",
      "ApplyFailed",
      60_000,
    );
    assert.match(
      conditionOf(o, "Available")!.message,
      /kind widgets\.example\.com\/v1\/Widget is not served/,
    );
    assert.equal(o.status?.phase, "Failed");
    const applied = await client.get<KubeObject>(CONFIGMAP, "unserved-config", ns);
    assert.equal(applied.metadata.ownerReferences?.[0]?.name, "unserved");
    assert.ok(
      !o.status?.renderedKinds?.some((k) => k.includes("Widget")),
      "an unserved kind is not recorded",
    );
  });

  it("an apply that fails is retried without the hooks, and converges once the render is fixed", async () => {
    const hooks = [
      {
        object: cm("retry-hook"),
        events: ["pre-install", "pre-upgrade"],
        weight: 0,
        deletePolicies: ["before-hook-creation"],
      },
    ];
    renders.set("retry", { chart, hooks, objects: [cm("retry-config"), service("retry-svc", 70_000)] });
    await create("retry");
    const key = `${ns}/retry`;
    const o = await waitForGitLab(
      client,
      ns,
      "retry",
      (g) => conditionOf(g, "Available")?.reason === "ApplyFailed",
      "ApplyFailed",
      60_000,
    );
    assert.match(conditionOf(o, "Available")!.message, /Service .*retry-svc/);
    assert.equal(conditionOf(o, "Initialized")?.status, "True", "the hooks completed; only the apply failed");
    assert.equal(o.status?.hooksVersion, "1.0.0");
    assert.equal(op.lines("hook started", key).length, 1);
    const passes = op.passes(key);
    await eventually(
      () => (op.passes(key) >= passes + 2 ? true : undefined),
      120_000,
      "two more failed passes",
    );
    assert.equal(op.lines("hook started", key).length, 1, "failed applies were retried without the hooks");

    renders.set("retry", { chart, hooks, objects: [cm("retry-config"), service("retry-svc", 8080)] });
    await waitForGitLab(client, ns, "retry", (g) => g.status?.phase === "Running", "Running", 120_000);
    assert.ok(await client.get(SERVICE, "retry-svc", ns));
    assert.equal(op.lines("hook started", key).length, 1, "still one hook run for this generation and chart");
  });

  it("a hook that fails stops the pass before anything is applied, with HooksFailed in Initialized", async () => {
    renders.set("badhook", {
      chart,
      hooks: [
        {
          object: { apiVersion: "widgets.example.com/v1", kind: "Widget", metadata: { name: "w" } },
          events: ["pre-install"],
          weight: 0,
          deletePolicies: [],
        },
      ],
      objects: [cm("badhook-config")],
    });
    await create("badhook");
    const o = await waitForGitLab(
      client,
      ns,
      "badhook",
      (g) => conditionOf(g, "Initialized")?.reason === "HooksFailed",
      "HooksFailed",
      60_000,
    );
    assert.equal(conditionOf(o, "Initialized")?.status, "False");
    assert.match(conditionOf(o, "Initialized")!.message, /Widget/);
    assert.ok(isNotFound(await client.get(CONFIGMAP, "badhook-config", ns).catch((e: unknown) => e)));
  });

  it("a Job whose pod template changed is replaced; one a finalizer holds ends the pass waiting (JobReplacing), and its deletion brings the new one", async () => {
    const render = (image: string): Rendered => ({
      chart,
      hooks: [],
      objects: [cm("jobs-config"), migrate(image)],
    });
    const job = () => client.getOrUndefined<KubeObject>(JOB, "jobs-migrate", ns);
    const imageOf = (j: KubeObject | undefined) =>
      (j?.["spec"] as { template: { spec: { containers: { image: string }[] } } } | undefined)?.template.spec
        .containers[0]?.image;
    /** The Job once it is a new one (another uid) with this image. */
    const replaced = (from: string, image: string) =>
      eventually(
        async () => {
          const j = await job();
          return j && j.metadata.uid !== from && imageOf(j) === image ? j : undefined;
        },
        60_000,
        `Job jobs-migrate with ${image}`,
      );
    renders.set("jobs", render("busybox:1"));
    await create("jobs");
    const first = await eventually(job, 60_000, "Job jobs-migrate");

    // Nothing holds the old Job: deleted and created again within one pass, as before.
    renders.set("jobs", render("busybox:2"));
    const second = await replaced(first.metadata.uid!, "busybox:2");

    // A finalizer holds it: the pass deletes it and ends (the status can only be written at its end),
    // instead of polling inside the pass until the deletion ends.
    await client.mergePatch(JOB, "jobs-migrate", ns, { metadata: { finalizers: ["example.com/hold"] } });
    renders.set("jobs", render("busybox:3"));
    const waiting = await waitForGitLab(
      client,
      ns,
      "jobs",
      (g) => conditionOf(g, "Progressing")?.reason === "JobReplacing",
      "JobReplacing",
      60_000,
    );
    assert.equal(conditionOf(waiting, "Progressing")?.status, "True");
    assert.match(
      conditionOf(waiting, "Progressing")!.message,
      /Job .*jobs-migrate \(held by finalizer example\.com\/hold\)/,
    );
    const held = await job();
    assert.equal(held?.metadata.uid, second.metadata.uid, "the old Job is still there");
    assert.ok(held?.metadata.deletionTimestamp, "and being deleted");
    // The passes go on while it is held (each ends at once, woken by the step interval).
    const passes = op.passes(`${ns}/jobs`);
    await eventually(
      () => (op.passes(`${ns}/jobs`) > passes ? true : undefined),
      60_000,
      "another pass while the Job is held",
    );

    await client.mergePatch(JOB, "jobs-migrate", ns, { metadata: { finalizers: null } });
    await replaced(second.metadata.uid!, "busybox:3");
    const after = await waitForGitLab(
      client,
      ns,
      "jobs",
      (g) => conditionOf(g, "Progressing")?.reason !== "JobReplacing",
      "the pass that created the new Job",
      60_000,
    );
    assert.equal(after.status?.phase, "Running");
  });

  it("a Secret the server refuses is reported without its values (status, events, logs)", async () => {
    const value = "s3cr3t-VALUE-not-base64!";
    renders.set("secret", {
      chart,
      hooks: [],
      objects: [
        { apiVersion: "v1", kind: "Secret", metadata: { name: "bad-secret" }, data: { password: value } },
      ],
    });
    await create("secret");
    const o = await waitForGitLab(
      client,
      ns,
      "secret",
      (g) => conditionOf(g, "Available")?.reason === "ApplyFailed",
      "ApplyFailed",
      60_000,
    );
    assert.match(conditionOf(o, "Available")!.message, /Secret .*bad-secret.*message withheld/);
    assert.ok(!JSON.stringify(o.status).includes("s3cr3t"));
    await eventually(
      async () => {
        const list = await client.list<KubeObject>(EVENTS, { namespace: ns });
        return list.items.some((e) => (e["regarding"] as { name?: string })?.name === "secret")
          ? list
          : undefined;
      },
      30_000,
      "an event about it",
    ).then((list) => assert.ok(!JSON.stringify(list).includes("s3cr3t")));
    assert.ok(!op.logs.join("").includes("s3cr3t"));
    const gl = await client.get<GitLabCore>(GITLABCORE, "secret", ns);
    assert.ok(!JSON.stringify(gl).includes("s3cr3t"));
  });
});
