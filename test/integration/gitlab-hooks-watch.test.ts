import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import {
  GitLabHookRunAnnotation,
  GitLabReleaseNameLabel,
  GitLabReleaseNamespaceLabel,
} from "../../src/apis/gitlabcore-names.js";
import { CONFIGMAP, JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { Rendered, RenderedHook, RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
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

// Hook Jobs are waited for by a watch, not by polling inside the pass (issue 43). On the shared API
// server no kubelet or Job controller runs, so the test plays the Job controller: it writes each
// hook Job's status (Complete, Failed) and the operator must notice through its watch. Meanwhile
// the operator's own client records every read, so "no GET of the Job while it runs" is counted,
// not assumed.

const meta = (release: string, ns: string, name: string, hook?: string) => ({
  name: `${release}-${name}`,
  namespace: ns,
  labels: { [GitLabReleaseNameLabel]: release, [GitLabReleaseNamespaceLabel]: ns },
  ...(hook ? { annotations: { "helm.sh/hook": hook } } : {}),
});

const job = (release: string, ns: string, name: string, hook: string): RenderedObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: meta(release, ns, name, hook),
  spec: {
    backoffLimit: 0,
    template: {
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "run", image: "busybox:1.36", command: ["true"] }],
      },
    },
  },
});

const configMap = (release: string, ns: string, name: string, hook?: string): RenderedObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: meta(release, ns, name, hook),
  data: { a: "1" },
});

/**
 * The real chart's shapes in small: a script ConfigMap (-5) and the Job that would mount it (0),
 * both deleted once the event succeeded; a second Job (5) kept; a post-install ConfigMap. The
 * first Job says hook-failed too, so a failure deletes it.
 */
function renderFor(release: string, ns: string): Rendered {
  const pre = "pre-install,pre-upgrade";
  const hook = (
    object: RenderedObject,
    weight: number,
    deletePolicies: string[],
    events = ["pre-install", "pre-upgrade"],
  ): RenderedHook => ({
    object,
    events,
    weight,
    deletePolicies,
  });
  return {
    chart: { name: "gitlab", version: "1.0.0", appVersion: "17.0.0", digest: "fixed" },
    objects: [configMap(release, ns, "config")],
    hooks: [
      hook(configMap(release, ns, "script", pre), -5, ["hook-succeeded", "before-hook-creation"]),
      hook(job(release, ns, "first", pre), 0, ["hook-succeeded", "hook-failed", "before-hook-creation"]),
      hook(job(release, ns, "second", pre), 5, ["before-hook-creation"]),
      hook(configMap(release, ns, "post", "post-install"), 0, [], ["post-install"]),
    ],
  };
}

const source = (): ReleaseSource => ({
  capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1", "batch/v1"] }),
  versions: async () => ["1.0.0"],
  render: async (req) => renderFor(req.releaseName, req.namespace),
});

type JobObject = KubeObject & { status?: Record<string, unknown> };

/** What the Job controller writes when a Job ends: the conditions the API server requires in order. */
async function finishJob(client: KubeClient, ns: string, name: string, outcome: "Complete" | "Failed") {
  const now = new Date().toISOString();
  const c = (type: string, reason: string, message: string) => ({
    type,
    status: "True",
    reason,
    message,
    lastProbeTime: now,
    lastTransitionTime: now,
  });
  const status =
    outcome === "Complete"
      ? {
          startTime: now,
          completionTime: now,
          succeeded: 1,
          conditions: [
            c("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
            c("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
          ],
        }
      : {
          startTime: now,
          failed: 1,
          conditions: [
            c("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
            c("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
          ],
        };
  await client.applyStatus(
    JOB,
    { apiVersion: "batch/v1", kind: "Job", metadata: { name, namespace: ns }, status },
    { fieldManager: "test-job-controller", force: true },
  );
}

describe("GitLabCore hook Jobs waited for by watch", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab;
  const key = (name: string) => `${ns}/${name}`;
  const jobPath = (name: string) => `/apis/batch/v1/namespaces/${ns}/jobs/${name}`;
  const readsOf = (o: RunningGitLab, name: string) =>
    o.client.reads.filter((p) => p.split("?")[0] === jobPath(name)).length;
  const start = (hookTimeout = "5m") =>
    startGitLabTarget(sharedEnv().kubeconfigPath, ns, source, { requeueInterval: "2s", hookTimeout });
  const created = (name: string) =>
    eventually(() => client.getOrUndefined<JobObject>(JOB, name, ns), 60_000, `Job ${name} to be created`);
  const gone = async (type: typeof JOB, name: string) =>
    isNotFound(await client.get(type, name, ns).catch((e: unknown) => e));

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-hookwatch");
    op = await start();
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  it("hooks run in Helm's order; while a hook Job runs the operator never reads it, its watch wakes the pass", async () => {
    const name = "hw";
    await applyGitLab(
      client,
      gitlabCore(ns, name, { version: { type: "Static", version: "1.0.0" }, hostname: "gitlab.example.com" }),
    );
    const first = await created("hw-first");
    const running = await waitForGitLab(
      client,
      ns,
      name,
      (g) => conditionOf(g, "Progressing")?.reason === "HooksRunning",
      "Progressing HooksRunning",
      60_000,
    );
    const runId = running.status?.hookRun?.id;
    assert.ok(runId, "the run is recorded in status before its hooks exist");
    assert.equal(first.metadata.annotations?.[GitLabHookRunAnnotation], runId);
    assert.equal(running.status?.phase, "Preparing");

    // The Job runs, for about 10 s (the old poll read it every second). Changes to it (what a
    // Job controller's status updates look like to a watch) each wake a pass; none of them reads
    // the Job, and none writes anything.
    const startedAt = performance.now();
    const reads0 = readsOf(op, "hw-first");
    const writes0 = op.client.writeCount;
    const touches = 5;
    for (let i = 1; i <= touches; i++) {
      // Spaced out only to make the window the Job runs in long enough for a poll to show; the
      // outcome is decided by the counts below, not by this pause.
      if (i > 1) await new Promise((r) => setTimeout(r, 2_000));
      const passes = op.passes(key(name));
      await client.apply(
        JOB,
        {
          apiVersion: "batch/v1",
          kind: "Job",
          metadata: { name: "hw-first", namespace: ns, labels: { touched: String(i) } },
        },
        { fieldManager: "test-toucher", force: true },
      );
      await eventually(
        () => (op.passes(key(name)) > passes ? true : undefined),
        60_000,
        `a pass after change ${i}`,
      );
    }
    const reads = readsOf(op, "hw-first") - reads0;
    const seconds = (performance.now() - startedAt) / 1000;
    process.stdout.write(
      `# hook Job hw-first running ${seconds.toFixed(1)} s, ${touches} watch-woken passes: ${reads} GETs of it, ${op.client.writeCount - writes0} writes\n`,
    );
    assert.equal(reads, 0, "no GET of the running hook Job");
    assert.equal(op.client.writeCount, writes0, "a pass that finds the hook still running writes nothing");
    assert.equal(
      op.lines("hook started", key(name)).length,
      2,
      "script ConfigMap and first Job only, once each",
    );
    assert.ok(!(await client.getOrUndefined(JOB, "hw-second", ns)), "the next hook waits for this one");

    // The Job completes: the watch brings the pass that creates the next hook.
    await finishJob(client, ns, "hw-first", "Complete");
    const second = await created("hw-second");
    assert.equal(second.metadata.annotations?.[GitLabHookRunAnnotation], runId, "the same run");
    await finishJob(client, ns, "hw-second", "Complete");
    const o = await waitForGitLab(
      client,
      ns,
      name,
      (g) => g.status?.version === "1.0.0",
      "1.0.0 applied",
      60_000,
    );
    assert.equal(conditionOf(o, "Initialized")?.status, "True");
    assert.equal(o.status?.hooksVersion, "1.0.0");
    assert.equal(o.status?.hookRun, undefined, "the run is over");

    assert.deepEqual(
      op.lines("hook started", key(name)).map((l) => l["hook"]),
      [`ConfigMap ${ns}/hw-script`, `Job ${ns}/hw-first`, `Job ${ns}/hw-second`, `ConfigMap ${ns}/hw-post`],
    );
    // hook-succeeded ones deleted once the whole event succeeded, last first; the others kept.
    assert.deepEqual(
      op.lines("hook deleted", key(name)).map((l) => l["hook"]),
      [`Job ${ns}/hw-first`, `ConfigMap ${ns}/hw-script`],
    );
    const at = (msg: string, hook?: string) =>
      op.lines(msg, key(name)).find((l) => hook === undefined || l["hook"] === hook)?.["time"] as number;
    assert.ok(at("hook completed", `Job ${ns}/hw-second`) <= at("hook deleted", `Job ${ns}/hw-first`));
    assert.ok(at("applied the release") <= at("hook started", `ConfigMap ${ns}/hw-post`));
    await eventually(
      async () => ((await gone(JOB, "hw-first")) ? true : undefined),
      30_000,
      "hw-first deleted",
    );
    assert.ok(await gone(CONFIGMAP, "hw-script"));
    assert.ok(await client.get(JOB, "hw-second", ns), "before-hook-creation only: kept");
    assert.ok(await client.get(CONFIGMAP, "hw-post", ns), "no policy: kept");
    const total = op.client.reads.filter((p) =>
      p.split("?")[0].startsWith(`/apis/batch/v1/namespaces/${ns}/jobs/hw-`),
    ).length;
    process.stdout.write(`# GETs of hook Jobs over the whole run (2 Jobs): ${total}\n`);
  });

  it("an operator restarted while a hook runs finds the hook by its run and does not create it again", async () => {
    const name = "hr";
    await applyGitLab(
      client,
      gitlabCore(ns, name, { version: { type: "Static", version: "1.0.0" }, hostname: "gitlab.example.com" }),
    );
    const first = await created("hr-first");
    const runId = first.metadata.annotations?.[GitLabHookRunAnnotation];
    await op.stop();
    op = await start();
    await eventually(
      () => (op.passes(key(name)) >= 1 ? true : undefined),
      60_000,
      "a pass of the restarted operator",
    );
    assert.equal(op.lines("hook started", key(name)).length, 0, "the restarted operator created no hook");
    const still = await client.get<JobObject>(JOB, "hr-first", ns);
    assert.equal(still.metadata.uid, first.metadata.uid, "the same Job");
    const o = await client.get<GitLabCore>(GITLABCORE, name, ns);
    assert.equal(o.status?.hookRun?.id, runId, "the same run");

    await finishJob(client, ns, "hr-first", "Complete");
    await created("hr-second");
    await finishJob(client, ns, "hr-second", "Complete");
    await waitForGitLab(client, ns, name, (g) => g.status?.version === "1.0.0", "1.0.0 applied", 60_000);
    assert.deepEqual(
      op.lines("hook started", key(name)).map((l) => l["hook"]),
      [`Job ${ns}/hr-second`, `ConfigMap ${ns}/hr-post`],
      "only the hooks the first process had not reached",
    );
  });

  it("a failed hook Job (Failed=True) is reported as before, deleted by its policy, and the next run starts anew", async () => {
    const name = "hf";
    await applyGitLab(
      client,
      gitlabCore(ns, name, { version: { type: "Static", version: "1.0.0" }, hostname: "gitlab.example.com" }),
    );
    const first = await created("hf-first");
    await finishJob(client, ns, "hf-first", "Failed");
    const o = await waitForGitLab(
      client,
      ns,
      name,
      (g) => conditionOf(g, "Initialized")?.reason === "HooksFailed",
      "Initialized False, HooksFailed",
      60_000,
    );
    assert.equal(conditionOf(o, "Initialized")?.status, "False");
    assert.match(
      conditionOf(o, "Initialized")?.message ?? "",
      new RegExp(`^hook Job ${ns}/hf-first: Job hf-first failed: BackoffLimitExceeded`),
    );
    assert.equal(o.status?.phase, "Failed", "and stays so until the runtime's backoff retries it");
    // hook-failed: the failed Job goes; hook-succeeded: the script ConfigMap that succeeded before it.
    assert.deepEqual(
      op
        .lines("hook deleted", key(name))
        .slice(0, 2)
        .map((l) => l["hook"]),
      [`Job ${ns}/hf-first`, `ConfigMap ${ns}/hf-script`],
    );
    // The runtime's backoff brings a new run: a new Job with a new run id.
    const again = await eventually(
      async () => {
        const j = await client.getOrUndefined<JobObject>(JOB, "hf-first", ns);
        return j && j.metadata.uid !== first.metadata.uid ? j : undefined;
      },
      90_000,
      "the next run's hf-first",
    );
    assert.notEqual(
      again.metadata.annotations?.[GitLabHookRunAnnotation],
      first.metadata.annotations?.[GitLabHookRunAnnotation],
    );
  });

  it("the hook timeout counts from the Job's creation, across a restart, and fails the run without reading the Job", async () => {
    const name = "ht";
    await applyGitLab(
      client,
      gitlabCore(ns, name, { version: { type: "Static", version: "1.0.0" }, hostname: "gitlab.example.com" }),
    );
    const first = await created("ht-first");
    const createdAt = Date.parse(first.metadata.creationTimestamp!);
    // Restarted with a 6 s timeout: the deadline is the Job's creation + 6 s, not the restart + 6 s.
    await op.stop();
    op = await start("6s");
    const o = await waitForGitLab(
      client,
      ns,
      name,
      (g) => conditionOf(g, "Initialized")?.reason === "HooksFailed",
      "the hook to time out",
      60_000,
    );
    const init = conditionOf(o, "Initialized")!;
    assert.match(
      init.message,
      new RegExp(`^hook Job ${ns}/ht-first: timed out after 6 s waiting for hook Job ht-first`),
    );
    // Seconds precision on both sides: not before the deadline. Progressing turned False then (from
    // True HooksRunning); Initialized was already False (HooksRunning) while the hook ran, so its
    // transition time is the run's start (changed on purpose, issue 44).
    const failedAt = Date.parse(conditionOf(o, "Progressing")!.lastTransitionTime);
    assert.equal(conditionOf(o, "Progressing")?.reason, "HooksFailed");
    assert.ok(failedAt >= createdAt + 6_000 - 1_000, "not before the deadline");
    assert.equal(readsOf(op, "ht-first"), 0, "the restarted operator never read the Job");
  });
});
