import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { Rendered, RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
import type { ReleaseSource } from "../../src/targets/gitlab/reconciler.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { type ControlPlane, startControlPlane } from "../../src/testenv/controlplane.js";
import {
  applyGitLab,
  gitlabCore,
  installGitLabCrds,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// Helm does not track what a hook creates as part of the release, and `helm uninstall` leaves it
// (Helm's chart hooks documentation, "Hook resources are not managed with corresponding releases"):
// a hook that no delete policy removes outlives the GitLabCore, while the release's own objects go
// with it through their owner reference. The shared API server runs no garbage collector, so this
// file starts its own control plane with kube-controller-manager's.

const cm = (name: string): RenderedObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: { a: "1" },
});

describe("GitLabCore deletion keeps the hooks Helm keeps", () => {
  let cp: ControlPlane;
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab | undefined;
  const render: Rendered = {
    chart: { name: "gitlab", version: "1.0.0", appVersion: "17.0.0", digest: "fixed" },
    objects: [cm("kh-config")],
    hooks: [
      // Like the real chart's upgrade check script: before-hook-creation only, so kept after the run.
      {
        object: cm("kh-kept"),
        events: ["pre-install", "pre-upgrade"],
        weight: -1,
        deletePolicies: ["before-hook-creation"],
      },
      // No policy at all (Helm's default is before-hook-creation): kept too.
      { object: cm("kh-no-policy"), events: ["pre-install"], weight: 0, deletePolicies: [] },
    ],
  };
  const source = (): ReleaseSource => ({
    capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1"] }),
    versions: async () => ["1.0.0"],
    render: async () => structuredClone(render),
  });

  before(async () => {
    cp = await startControlPlane();
    client = clientFor(cp.kubeconfigPath);
    await installGitLabCrds(client, false);
    // Started after the CRDs exist: the garbage collector's first discovery then watches their
    // kinds, instead of finding them at its next discovery pass up to 30 s later.
    await cp.startControllerManager(["garbagecollector"]);
    ns = await freshNamespace(client, "gl-kept");
    op = await startGitLabTarget(cp.kubeconfigPath, ns, source, { requeueInterval: "1s" });
  });
  after(async () => {
    await op?.stop();
    client?.close();
    await cp?.stop();
  });

  it("deleting the GitLabCore removes the release's objects and leaves the kept hooks", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, "kh", { version: { type: "Static", version: "1.0.0" }, hostname: "gitlab.example.com" }),
    );
    await waitForGitLab(client, ns, "kh", (g) => g.status?.version === "1.0.0", "1.0.0 applied", 60_000);
    for (const name of ["kh-kept", "kh-no-policy"]) {
      const hook = await client.get<KubeObject>(CONFIGMAP, name, ns);
      assert.deepEqual(
        hook.metadata.ownerReferences ?? [],
        [],
        `${name} is not owned: Helm does not track it`,
      );
    }

    await client.delete(GITLABCORE, "kh", ns);
    // The release's own ConfigMap is owned by the GitLabCore: its going proves the collector ran.
    await eventually(
      async () =>
        isNotFound(await client.get(CONFIGMAP, "kh-config", ns).catch((e: unknown) => e)) ? true : undefined,
      120_000,
      "the release's ConfigMap to be garbage-collected",
    );
    assert.ok(await client.get(CONFIGMAP, "kh-kept", ns), "the kept hook outlives the GitLabCore");
    assert.ok(await client.get(CONFIGMAP, "kh-no-policy", ns), "the hook with no policy outlives it");
  });
});
