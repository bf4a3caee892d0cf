import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import type { GitLabSecrets } from "../../src/apis/gitlabsecrets.js";
import { GitLabSecretsReason } from "../../src/apis/gitlabsecrets-names.js";
import { SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { GITLABSECRETS } from "../../src/targets/gitlab/secrets/wiring.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  applyGitLab,
  fixtureChartsDir,
  fixtureVersions,
  gitlabCore,
  installGitLabCrds,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// The fixture chart with shared-secrets.provider: controller, rendered by the real helm: the render
// holds a GitLabSecrets (the real chart's shape) instead of the shared-secrets hook, the GitLabCore
// applies and owns it like its other objects, and the gitlab target fills in its Secrets, the Rails
// secrets.yml (railsSecrets) included. No hook Job runs, so no node is needed.

const JOB: ResourceType = { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true };
const WAIT_MS = 90_000;

describe("GitLabCore with shared-secrets.provider: controller", () => {
  let client: KubeClient;
  let ns: string;
  let charts: { dir: string; remove(): void };
  let op: RunningGitLab | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-sscontroller");
    charts = fixtureChartsDir(fixtureVersions().filter((v) => v.version === "10.2.1"));
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, charts.dir, { requeueInterval: "2s" });
  });
  after(async () => {
    await op?.stop();
    charts?.remove();
    client?.close();
  });

  it("applies the rendered GitLabSecrets, owned by the GitLabCore, and its Secrets are generated", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, "gl", {
        version: { type: "Static", version: "10.2.1" },
        hostname: "gitlab.example.com",
        chart: {
          values: {
            "shared-secrets": { provider: "controller" },
            upgradeCheck: { enabled: false },
            global: { ingress: { enabled: false } },
          },
        },
      }),
    );
    await waitForGitLab(client, ns, "gl", (g) => g.status?.version === "10.2.1", "10.2.1 applied", WAIT_MS);
    const core = await client.get<KubeObject>(GITLABCORE, "gl", ns);
    const gs = await eventually(
      async () => {
        const g = await client.getOrUndefined<GitLabSecrets>(GITLABSECRETS, "gl", ns);
        const ready = g?.status?.conditions?.find((c) => c.type === "Ready");
        return ready?.observedGeneration === g?.metadata.generation ? g : undefined;
      },
      WAIT_MS,
      "the rendered GitLabSecrets, reconciled",
    );
    assert.deepEqual(
      gs.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [["GitLabCore", "gl", core.metadata.uid, true]],
    );
    assert.equal(gs.metadata.labels?.["operator.gitlab.com/release-name"], "gl", "the release labels");
    assert.equal(gs.metadata.labels?.["release"], "gl", "the chart's labels");
    const ready = gs.status!.conditions!.find((c) => c.type === "Ready")!;
    // Changed on purpose (issue 44): railsSecrets was refused as not implemented; it is generated now.
    assert.equal(ready.status, "True", ready.message);
    assert.equal(ready.reason, GitLabSecretsReason.SecretsReady);
    for (const [name, key] of [
      ["gl-gitlab-initial-root-password", "password"],
      ["gl-gitlab-shell-secret", "secret"],
    ] as const) {
      const s = await client.get<KubeObject & { data?: Record<string, string> }>(SECRET, name, ns);
      assert.match(Buffer.from(s.data?.[key] ?? "", "base64").toString("utf8"), /^[a-zA-Z0-9]{64}$/, name);
      assert.equal(s.metadata.ownerReferences, undefined, `${name} has no owner`);
      assert.equal(s.metadata.labels?.["release"], "gl", `${name} carries the resource's labels`);
    }
    const rails = await client.get<KubeObject & { data?: Record<string, string> }>(
      SECRET,
      "gl-rails-secret",
      ns,
    );
    const doc = parse(Buffer.from(rails.data?.["secrets.yml"] ?? "", "base64").toString("utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    const env = Object.values(doc)[0]!;
    assert.equal(Object.keys(doc).length, 1, "one Rails environment");
    assert.match(String(env["db_key_base"]), /^[a-f0-9]{128}$/);
    assert.match(String(env["openid_connect_signing_key"]), /^-----BEGIN PRIVATE KEY-----\n/);
    assert.equal((env["active_record_encryption_primary_key"] as string[]).length, 1);
    // The hook the controller backend replaces was not rendered, so not run.
    assert.equal(await client.getOrUndefined(JOB, "gl-shared-secrets", ns), undefined);
    assert.deepEqual(
      op!.lines("hook started").filter((l) => String(l["hook"] ?? "").includes("shared-secrets")),
      [],
    );
  });
});
