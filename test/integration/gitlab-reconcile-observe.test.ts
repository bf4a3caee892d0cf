import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../src/apis/gitlabcore.js";
import { GitLabConfigSourceLabel } from "../../src/apis/gitlabcore-names.js";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { Rendered } from "../../src/targets/gitlab/apply/rendered.js";
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
import { clientFor, freshNamespace } from "../support/kube.js";

// Observe-only: every decision of a pass is made (hooks due, dry-run applies, the prune inventory),
// nothing of the release is written, and the Drifted condition says what a real pass would do.

describe("GitLabCore observe-only", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab;
  const render: Rendered = {
    chart: { name: "gitlab", version: "1.0.0", appVersion: "17.0.0", digest: "fixed" },
    hooks: [
      {
        object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "obs-hook" }, data: { a: "1" } },
        events: ["pre-install"],
        weight: 0,
        deletePolicies: [],
      },
    ],
    objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "obs-config" }, data: { a: "1" } }],
  };
  const source = (): ReleaseSource => ({
    capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1"] }),
    versions: async () => ["1.0.0"],
    render: async () => structuredClone(render),
  });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-obs");
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, source, {
      requeueInterval: "1s",
      observeOnly: true,
    });
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  it("reports what would be hooked, applied and pruned, and writes none of it", async () => {
    // Left over from an earlier render: carries the release labels, rendered no more.
    await client.apply(
      CONFIGMAP,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "obs-stale",
          namespace: ns,
          labels: { [GitLabReleaseNameLabel]: "obs", [GitLabReleaseNamespaceLabel]: ns },
        },
        data: { old: "1" },
      },
      { fieldManager: "earlier-run" },
    );
    await applyGitLab(
      client,
      gitlabCore(ns, "obs", {
        version: { type: "Static", version: "1.0.0" },
        hostname: "gitlab.example.com",
        chart: { values: {} },
      }),
    );
    const o = await waitForGitLab(
      client,
      ns,
      "obs",
      (g) => conditionOf(g, "Drifted")?.status === "True",
      "Drifted True",
      60_000,
    );
    const drifted = conditionOf(o, "Drifted")!;
    assert.equal(drifted.reason, "ObserveOnly");
    assert.match(drifted.message, /would run hooks 1: ConfigMap obs-hook/);
    assert.match(drifted.message, new RegExp(`would apply 1: ConfigMap ${ns}/obs-config`));
    assert.match(drifted.message, new RegExp(`would prune 1: ConfigMap ${ns}/obs-stale`));
    assert.equal(o.status?.targetVersion, "1.0.0");
    assert.equal(o.status?.version, undefined, "nothing was applied");
    assert.deepEqual(o.metadata.finalizers ?? [], [], "no finalizer: deletion must not wait on an observer");
    for (const name of ["obs-hook", "obs-config"])
      assert.ok(
        isNotFound(await client.get(CONFIGMAP, name, ns).catch((e: unknown) => e)),
        `${name} not created`,
      );
    assert.ok(await client.get<KubeObject>(CONFIGMAP, "obs-stale", ns), "nothing pruned");
  });

  it("a versionRef that goes missing: the kept target and Upgradeable=False VersionUnresolved, as a real pass says; back when it returns", async () => {
    const versionCm = (): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "obs-version", namespace: ns, labels: { [GitLabConfigSourceLabel]: "true" } },
      data: { chart: "1.0.0" },
    });
    await client.apply(CONFIGMAP, versionCm(), { fieldManager: "platform" });
    await applyGitLab(
      client,
      gitlabCore(ns, "obsref", {
        version: { type: "Static", versionRef: { kind: "ConfigMap", name: "obs-version", key: "chart" } },
        hostname: "gitlab.example.com",
        chart: { values: {} },
      }),
    );
    const resolved = await waitForGitLab(
      client,
      ns,
      "obsref",
      (g) => g.status?.targetVersion === "1.0.0" && conditionOf(g, "Upgradeable")?.status === "True",
      "target 1.0.0, Upgradeable True",
      60_000,
    );
    assert.equal(conditionOf(resolved, "Upgradeable")?.reason, "ObserveOnly");
    await client.delete(CONFIGMAP, "obs-version", ns);
    const gone = await waitForGitLab(
      client,
      ns,
      "obsref",
      (g) => conditionOf(g, "Upgradeable")?.status === "False",
      "Upgradeable False",
      60_000,
    );
    const upgradeable = conditionOf(gone, "Upgradeable")!;
    assert.equal(upgradeable.reason, "VersionUnresolved");
    assert.match(upgradeable.message, /ConfigMap obs-version not found.*keeping the target 1\.0\.0/);
    assert.equal(gone.status?.targetVersion, "1.0.0", "the target is kept");
    assert.equal(
      conditionOf(gone, "Drifted")?.reason,
      "ObserveOnly",
      "still reports what a real pass would do",
    );
    assert.equal(gone.status?.version, undefined, "nothing was applied");
    await client.apply(CONFIGMAP, versionCm(), { fieldManager: "platform" });
    await waitForGitLab(
      client,
      ns,
      "obsref",
      (g) => conditionOf(g, "Upgradeable")?.status === "True",
      "Upgradeable True again once the ConfigMap is back",
      60_000,
    );
  });
});
