import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import {
  JOB,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
} from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { Condition } from "../../src/runtime/conditions.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { applyGitLab, conditionOf, gitlabCore, waitForGitLab } from "../support/gitlab.js";
import { type FixtureGitLab, startFixtureGitLab } from "../support/gitlab-fixture.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// A blocked upgrade blocks only the upgrade (issues 42 and 44): with the fixture chart (the real
// chart's shapes, rendered by helm) on the shared API server, a release keeps being applied and
// repaired at its deployed version while the version it is asked for cannot be reached — a missing
// intermediate chart, a version no source has, a refused preflight — and every condition says so
// for the current generation. Hooks are off here (no kubelet runs their Jobs), except in the last
// case, whose hook Job never finishes on purpose: the status must say hooks run while they run.

const DEPLOYMENT: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};
const CHARTS = ["10.1.2", "10.2.1", "10.4.0"]; // no 10.3.x: 10.2 → 10.4 has a missing minor
const CONDITIONS = ["Initialized", "Available", "Progressing", "Upgradeable"];

/** Values with no hook at all: the fixture's shared-secrets and upgrade check off, no Ingress. */
const quiet = {
  "shared-secrets": { enabled: false },
  upgradeCheck: { enabled: false },
  global: { ingress: { enabled: false } },
};

describe("GitLabCore: a blocked upgrade never stops repair", () => {
  let client: KubeClient;
  let ns: string;
  let gl: FixtureGitLab | undefined;

  /** The admission policy that refuses pre-migrations Jobs in this namespace (cluster-scoped: named after it). */
  const policy = () => `${ns}-no-pre-migrations`;
  const setVersion = (name: string, version: string, values: Record<string, unknown> = quiet) =>
    applyGitLab(
      client,
      gitlabCore(ns, name, {
        version: { type: "Static", version },
        hostname: "gitlab.example.com",
        chart: { values },
      }),
    );

  /** Every condition is there, and says what it says for the object's current generation. */
  const assertCurrent = (o: GitLabCore) => {
    for (const type of CONDITIONS) {
      const c = conditionOf(o, type) as Condition | undefined;
      assert.ok(c, `${type} is set`);
      assert.equal(
        c.observedGeneration,
        o.metadata.generation,
        `${type} is for generation ${o.metadata.generation}`,
      );
    }
  };

  /** Deletes a Deployment of the release by hand and waits for the operator to bring it back. */
  const deletedComesBack = async (name: string, chartVersion: string) => {
    const before = await client.get<KubeObject>(DEPLOYMENT, name, ns);
    const deletedAt = performance.now();
    await client.delete(DEPLOYMENT, name, ns);
    const back = await eventually(
      async () => {
        const o = await client.getOrUndefined<KubeObject>(DEPLOYMENT, name, ns);
        return o && o.metadata.uid !== before.metadata.uid ? o : undefined;
      },
      60_000,
      `Deployment ${name} to be applied again`,
    );
    process.stdout.write(
      `# Deployment ${name} applied again ${Math.round(performance.now() - deletedAt)} ms after its deletion, the upgrade blocked\n`,
    );
    assert.equal(back.metadata.labels?.["helm.sh/chart"], `gitlab-${chartVersion}`, "the deployed chart's");
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "gl-blocked");
    gl = await startFixtureGitLab(client, sharedEnv().kubeconfigPath, ns, {
      gatewayApi: false,
      versions: (v) => CHARTS.includes(v),
      settings: { requeueInterval: "2s", concurrency: 4, hookTimeout: "90s" },
    });
  });
  after(async () => {
    await gl?.stop();
    await client?.delete(VALIDATING_ADMISSION_POLICY_BINDING, policy()).catch(() => {});
    await client?.delete(VALIDATING_ADMISSION_POLICY, policy()).catch(() => {});
    client?.close();
  });

  it("a version past a missing intermediate chart: MissingIntermediateChart, and a deleted Deployment comes back", async () => {
    await setVersion("gl", "10.2.1");
    await waitForGitLab(client, ns, "gl", (g) => g.status?.version === "10.2.1", "10.2.1 applied", 120_000);

    await setVersion("gl", "10.4.0");
    const o = await waitForGitLab(
      client,
      ns,
      "gl",
      (g) => conditionOf(g, "Upgradeable")?.reason === "MissingIntermediateChart",
      "MissingIntermediateChart on Upgradeable",
      60_000,
    );
    const upgradeable = conditionOf(o, "Upgradeable")!;
    assert.equal(upgradeable.status, "False");
    assert.match(upgradeable.message, /no chart for minor 10\.3 between 10\.2\.1 and 10\.4\.0/);
    assert.equal(conditionOf(o, "Progressing")?.reason, "MissingIntermediateChart");
    assert.equal(conditionOf(o, "Progressing")?.status, "False");
    assert.equal(o.status?.version, "10.2.1", "nothing of 10.4.0 was applied");
    assert.equal(o.status?.targetVersion, "10.4.0");
    assertCurrent(o);

    await deletedComesBack("gl-webservice", "10.2.1");
  });

  it("a version no chart source has: VersionUnresolved naming it, every condition refreshed, repair goes on", async () => {
    await setVersion("gl", "12.0.0");
    const o = await waitForGitLab(
      client,
      ns,
      "gl",
      (g) => conditionOf(g, "Upgradeable")?.reason === "VersionUnresolved",
      "VersionUnresolved on Upgradeable",
      60_000,
    );
    const upgradeable = conditionOf(o, "Upgradeable")!;
    assert.equal(upgradeable.status, "False");
    assert.match(upgradeable.message, /12\.0\.0/);
    assert.doesNotMatch(
      upgradeable.message,
      /no chart for minor/,
      "the message of the last generation is gone",
    );
    assert.equal(conditionOf(o, "Progressing")?.reason, "VersionUnresolved");
    assert.equal(o.status?.version, "10.2.1");
    assertCurrent(o);

    await deletedComesBack("gl-sidekiq", "10.2.1");

    // Back to the deployed version: nothing blocks, and Upgradeable says so for this generation.
    await setVersion("gl", "10.2.1");
    const back = await waitForGitLab(
      client,
      ns,
      "gl",
      (g) => conditionOf(g, "Upgradeable")?.status === "True",
      "Upgradeable True again",
      60_000,
    );
    assertCurrent(back);
  });

  it("a refused preflight: PreflightFailed, and a deleted Deployment comes back at the deployed version", async () => {
    await setVersion("pf", "10.1.2");
    await waitForGitLab(client, ns, "pf", (g) => g.status?.version === "10.1.2", "10.1.2 applied", 120_000);
    // An admission policy of this cluster refuses every pre-migrations Job here, dry runs included,
    // as a real cluster's policy (or quota) would: the preflight of 10.2.1 is refused.
    await client.create(VALIDATING_ADMISSION_POLICY, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: policy() },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            { apiGroups: ["batch"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["jobs"] },
          ],
        },
        validations: [
          { expression: "!object.metadata.name.endsWith('-pre')", message: "no pre-migrations Job here" },
        ],
      },
    });
    await client.create(VALIDATING_ADMISSION_POLICY_BINDING, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: policy() },
      spec: {
        policyName: policy(),
        validationActions: ["Deny"],
        matchResources: {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
        },
      },
    });
    // The policy takes effect once the API server has loaded it: a dry-run probe says when.
    const probe = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "probe-pre", namespace: ns },
      spec: {
        template: {
          spec: {
            restartPolicy: "Never",
            containers: [{ name: "c", image: "docker.io/library/busybox:1.35.0" }],
          },
        },
      },
    };
    await eventually(
      () =>
        client.apply(JOB, probe, { fieldManager: "test-probe", dryRun: true }).then(
          () => undefined,
          (e: unknown) => (/no pre-migrations Job here/.test(String(e)) ? true : undefined),
        ),
      60_000,
      "the admission policy to refuse a pre-migrations Job",
    );

    await setVersion("pf", "10.2.1");
    const o = await waitForGitLab(
      client,
      ns,
      "pf",
      (g) => conditionOf(g, "Upgradeable")?.reason === "PreflightFailed",
      "PreflightFailed on Upgradeable",
      60_000,
    );
    assert.match(
      conditionOf(o, "Upgradeable")!.message,
      /preflight of chart 10\.2\.1 refused: Job .*pf-migrations-10-2-1-pre/,
    );
    assert.equal(conditionOf(o, "Progressing")?.reason, "PreflightFailed");
    assert.equal(o.status?.version, "10.1.2");
    assertCurrent(o);

    await deletedComesBack("pf-webservice", "10.1.2");
  });

  it("while hooks run, the status says so: phase and a Progressing condition naming the hook event", async () => {
    // The shared-secrets hook Job never completes here (no kubelet): the pass waits in it.
    await setVersion("hk", "10.2.1", { ...quiet, "shared-secrets": { enabled: true } });
    const o = await waitForGitLab(
      client,
      ns,
      "hk",
      (g) => conditionOf(g, "Progressing")?.reason === "HooksRunning",
      "Progressing HooksRunning while the hook Job runs",
      45_000,
    );
    const progressing = conditionOf(o, "Progressing")!;
    assert.equal(progressing.status, "True");
    assert.match(progressing.message, /pre-install hooks of chart 10\.2\.1/);
    assert.match(progressing.message, new RegExp(`Job ${ns}/hk-shared-secrets`));
    assert.equal(o.status?.phase, "Preparing");
    assert.equal(o.status?.targetVersion, "10.2.1");
    assert.equal(o.status?.version, undefined, "nothing applied yet");
    // The status came first; the Job is created right after it and never completes here.
    const job = await eventually(
      () =>
        client.getOrUndefined<KubeObject & { status?: { conditions?: { type: string }[] } }>(
          JOB,
          "hk-shared-secrets",
          ns,
        ),
      30_000,
      "the hook Job to be created",
    );
    assert.ok(!job.status?.conditions?.some((c) => c.type === "Complete"), "the hook is still running");
  });

  it("while a new generation's hooks run, Initialized says so for it, not the last release's 'completed'", async () => {
    await setVersion("hu", "10.1.2");
    const deployed = await waitForGitLab(
      client,
      ns,
      "hu",
      (g) => g.status?.version === "10.1.2" && conditionOf(g, "Initialized")?.status === "True",
      "10.1.2 applied",
      120_000,
    );
    assert.equal(conditionOf(deployed, "Initialized")?.reason, "ChartRendered");
    // The new generation's pre-upgrade shared-secrets hook Job never completes here (no kubelet):
    // the deployed chart's (rerun for the new values while the step to 10.2.1 waits for 10.1.2's
    // migrations, which no kubelet runs either) or the step's.
    await setVersion("hu", "10.2.1", { ...quiet, "shared-secrets": { enabled: true } });
    const o = await waitForGitLab(
      client,
      ns,
      "hu",
      (g) => conditionOf(g, "Progressing")?.reason === "HooksRunning",
      "Progressing HooksRunning while the hook Job runs",
      45_000,
    );
    const generation = o.metadata.generation;
    assert.ok(generation && generation > (deployed.metadata.generation ?? 0));
    const init = conditionOf(o, "Initialized")!;
    assert.equal(init.status, "False");
    assert.equal(init.reason, "HooksRunning");
    assert.equal(init.observedGeneration, generation);
    const chart = /pre-upgrade hooks of chart (10\.1\.2|10\.2\.1)/.exec(
      conditionOf(o, "Progressing")!.message,
    )?.[1];
    assert.ok(chart, "Progressing names the event and chart");
    assert.ok(init.message.includes(`pre-upgrade hooks of chart ${chart}`), init.message);
    assert.equal(conditionOf(o, "Progressing")?.observedGeneration, generation);
    assert.equal(o.status?.observedGeneration, generation);
    assert.equal(o.status?.version, "10.1.2", "the deployed release stays until the hooks are done");
  });
});
