import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { registry } from "../../src/runtime/metrics.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { ensureNodeBinaries } from "../../src/testenv/node/binaries.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  provisionSharedSecretsAccount,
  waitForGitLab,
} from "../support/gitlab.js";
import { type FixtureGitLab, startFixtureGitLab } from "../support/gitlab-fixture.js";
import { type JobStandIn, startJobStandIn } from "../support/job-stand-in.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { serviceAccountAllowed } from "../support/rbac.js";
import { block, runShell, shellBlocks, toolDir } from "../support/runbook.js";

// The GitLabCore runbook's sections that need no pod (docs/runbooks/gitlabcore.md), with the fixture
// chart on the shared API server, the way a reader uses them: a section's `sh` blocks run with bash
// after the fault was made for real, then what the section promises is awaited. Jobs have no pods
// here: a stand-in plays the Job controller, and fails the shared-secrets hook exactly while its
// ServiceAccount may not create Secrets, as the hook's pod would (gitlab-runbooks-node runs that
// section with the real pod, whose log it reads).

/** The node's kubectl (built with the node's binaries; no node is started for it). */
const kubectl = async () => (await ensureNodeBinaries()).kubectl;

describe("gitlabcore runbook: Hooks failing, with the fixture chart on the API server", () => {
  const NAME = "rb";
  const SA = "gitlab-manager";
  let client: KubeClient;
  let ns: string;
  let gl: FixtureGitLab | undefined;
  let jobs: JobStandIn | undefined;
  let dir = "";

  /** What the authorizer answers for the hook's ServiceAccount: its pod could create Secrets or not. */
  const mayCreateSecrets = (account: string): Promise<boolean> =>
    serviceAccountAllowed(client, ns, account, {
      resourceAttributes: { namespace: ns, verb: "create", resource: "secrets" },
    });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "gl-rb");
    dir = await toolDir(await kubectl());
    // The shared-secrets Job fails while its account may not create Secrets (as its pod's first
    // request would), and every other Job completes.
    jobs = startJobStandIn(client, ns, async (j: KubeObject) => {
      const spec = (j as { spec?: { template?: { spec?: { serviceAccountName?: string } } } }).spec;
      if (!j.metadata.name?.endsWith("-shared-secrets")) return "Complete";
      return (await mayCreateSecrets(spec?.template?.spec?.serviceAccountName ?? "default"))
        ? "Complete"
        : "Failed";
    });
    gl = await startFixtureGitLab(client, sharedEnv().kubeconfigPath, ns, {
      gatewayApi: false,
      settings: { serviceAccountName: SA, requeueInterval: "2s" },
    });
  });
  after(async () => {
    await gl?.stop();
    await jobs?.stop();
    if (dir) removeTempDir(dir);
    client?.close();
  });

  it("the check names the failed hook and why its account fails; once the administrator grants it, the hooks run again by themselves", async () => {
    // Broken: the hook's ServiceAccount exists, the administrator's Role and binding do not.
    await client.apply(
      { group: "", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: SA, namespace: ns } },
      { fieldManager: "test-admin" },
    );
    await applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: { values: { global: { ingress: { enabled: false } } } },
      }),
    );
    const failed = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => conditionOf(g, "Initialized")?.reason === "HooksFailed",
      "Initialized False, HooksFailed",
      60_000,
    );
    assert.ok(["Failed", "Preparing"].includes(failed.status?.phase ?? ""), `phase ${failed.status?.phase}`);
    const env = {
      NS: ns,
      NAME,
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: sharedEnv().kubeconfigPath,
    };
    const intro = shellBlocks("gitlabcore.md", "")[0]!;
    const overview = await runShell(intro, env, true);
    assert.match(overview, new RegExp(`^${NAME}\\s+(Failed|Preparing)\\s`, "m"), overview);
    assert.doesNotMatch(overview, /^error:/m, "every command of the intro runs");

    const which = await runShell(block("gitlabcore.md", "Hooks failing", "reason=HooksFailed"), env, true);
    const named = new RegExp(`^Initialized: hook Job ${ns}/(\\S+): `, "m").exec(which);
    assert.ok(named, `the condition names the Job:\n${which}`);
    const jobName = named[1]!;
    assert.equal(jobName, `${NAME}-shared-secrets`);
    assert.match(which, /Warning\s+HooksFailed\s/, "and so does the Warning event");
    // "Nothing of the release was applied after the failed hook."
    const deployments = await client.request<{ items: unknown[] }>({
      method: "GET",
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
    });
    assert.deepEqual(deployments.items, [], "no Deployment of the release was applied");

    // As a reader would: asked again while the next run replaces the Job (NotFound meanwhile).
    const canI = (want: string) =>
      eventually(
        async () => {
          const out = await runShell(
            block("gitlabcore.md", "Hooks failing", "auth can-i"),
            { ...env, JOB: jobName },
            true,
          );
          return /^(yes|no)$/m.exec(out)?.[1] === want ? out : undefined;
        },
        60_000,
        `the hook's account to be answered "${want}"`,
      );
    await canI("no");

    // Act: the administrator's Role and binding for the hook's account; no command to the operator.
    const fixed = performance.now();
    await provisionSharedSecretsAccount(client, ns, SA);
    await canI("yes");
    const ok = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => conditionOf(g, "Initialized")?.status === "True",
      "Initialized True after the grant, with no command",
      180_000,
    );
    assert.equal(ok.status?.hooksVersion, "10.3.0");
    await eventually(
      async () => {
        const d = await client.request<{ items: unknown[] }>({
          method: "GET",
          path: `/apis/apps/v1/namespaces/${ns}/deployments`,
        });
        return d.items.length > 0 ? true : undefined;
      },
      60_000,
      "the release's Deployments to be applied after the hooks",
    );
    const runs = jobs!.seen.filter((j) => j.name === jobName).length;
    assert.ok(runs >= 2, `the hook ran again after the failure (${runs} runs)`);
    const last = await client
      .get<KubeObject & { status?: { succeeded?: number } }>(JOB, jobName, ns)
      .catch(() => undefined);
    assert.ok(
      last === undefined || last.status?.succeeded === 1,
      "the last run succeeded (or was deleted by hook-succeeded)",
    );
    process.stdout.write(
      `# hooks failing: Initialized ${((performance.now() - fixed) / 1000).toFixed(1)} s after the grant, ${runs} runs of the hook\n`,
    );
  });
});

describe("gitlabcore runbook: Upgrade held, with the fixture chart on the API server", () => {
  it("a version past a missing minor: the check shows both versions and the minor; the documented patch back makes it Upgradeable", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    const ns = await freshNamespace(client, "gl-held");
    const dir = await toolDir(await kubectl());
    // No 10.3.x chart: 10.2 to 10.4 misses a minor.
    const gl = await startFixtureGitLab(client, sharedEnv().kubeconfigPath, ns, {
      gatewayApi: false,
      versions: (v) => ["10.2.1", "10.4.0"].includes(v),
      settings: { requeueInterval: "2s" },
    });
    const quiet = {
      "shared-secrets": { enabled: false },
      upgradeCheck: { enabled: false },
      global: { ingress: { enabled: false } },
    };
    const at = (version: string) =>
      gitlabCore(ns, "held", {
        version: { type: "Static", version },
        hostname: "gitlab.example.com",
        chart: { values: quiet },
      });
    const env = {
      NS: ns,
      NAME: "held",
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: sharedEnv().kubeconfigPath,
    };
    try {
      await applyGitLab(client, at("10.2.1"));
      await waitForGitLab(
        client,
        ns,
        "held",
        (g) => g.status?.version === "10.2.1",
        "10.2.1 applied",
        120_000,
      );
      // Broken: asked for 10.4.0 with no 10.3 chart anywhere.
      await applyGitLab(client, at("10.4.0"));
      await waitForGitLab(
        client,
        ns,
        "held",
        (g) => conditionOf(g, "Upgradeable")?.reason === "MissingIntermediateChart",
        "MissingIntermediateChart",
        60_000,
      );
      const check = block("gitlabcore.md", "Upgrade held", "targetVersion");
      const seen = await runShell(check, env, true);
      assert.match(seen, /^10\.2\.1 -> 10\.4\.0$/m, seen);
      assert.match(
        seen,
        /^MissingIntermediateChart: .*no chart for minor 10\.3 between 10\.2\.1 and 10\.4\.0/m,
        seen,
      );

      const acted = performance.now();
      await runShell(block("gitlabcore.md", "Upgrade held", "kubectl patch gitlabcore"), env);
      const back = await waitForGitLab(
        client,
        ns,
        "held",
        (g) =>
          conditionOf(g, "Upgradeable")?.status === "True" &&
          conditionOf(g, "Upgradeable")?.observedGeneration === g.metadata.generation,
        "Upgradeable True after the patch",
        60_000,
      );
      assert.equal(back.spec.version?.version, "10.2.1");
      assert.equal(back.status?.version, "10.2.1");
      const after = await runShell(check, env, true);
      assert.match(after, /^10\.2\.1 -> 10\.2\.1$/m, after);
      assert.doesNotMatch(after, /MissingIntermediateChart/, after);
      process.stdout.write(
        `# upgrade held: Upgradeable ${((performance.now() - acted) / 1000).toFixed(1)} s after the documented patch\n`,
      );
    } finally {
      await gl.stop();
      removeTempDir(dir);
      client.close();
    }
  });
});

describe("gitlabcore runbook: Object not ready, with the fixture chart on the API server", () => {
  it("values helm refuses: the check and the offline validate name the field; fixed, the release is applied and waits for its workloads", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    const ns = await freshNamespace(client, "gl-onr");
    const dir = await toolDir(await kubectl());
    const work = makeTempDir("runbook-gitlab");
    // The operator's CLI as a user has it on PATH.
    const cli = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
    writeFileSync(join(dir, "platform-operator"), `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`, {
      mode: 0o755,
    });
    const gl = await startFixtureGitLab(client, sharedEnv().kubeconfigPath, ns, {
      gatewayApi: false,
      versions: (v) => v === "10.2.1",
      settings: { requeueInterval: "2s" },
    });
    const manifest = (edition: string) =>
      gitlabCore(ns, "onr", {
        version: { type: "Static", version: "10.2.1" },
        hostname: "gitlab.example.com",
        chart: {
          values: {
            "shared-secrets": { enabled: false },
            upgradeCheck: { enabled: false },
            global: { ingress: { enabled: false }, edition },
          },
        },
      });
    const env = {
      NS: ns,
      NAME: "onr",
      CHARTS: gl.charts.dir,
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: sharedEnv().kubeconfigPath,
    };
    const available = async (reason: string) =>
      waitForGitLab(
        client,
        ns,
        "onr",
        (g) =>
          conditionOf(g, "Available")?.reason === reason &&
          conditionOf(g, "Available")?.observedGeneration === g.metadata.generation,
        `Available ${reason}`,
        120_000,
      );
    try {
      // Broken: an edition the chart's values schema does not know.
      await applyGitLab(client, manifest("premium"));
      await available("RenderFailed");
      const check = shellBlocks("gitlabcore.md", "Object not ready").find((b) =>
        b.includes('type=="Available"'),
      )!;
      const seen = await runShell(check, env, true);
      assert.match(seen, /^RenderFailed: .*global\.edition/m, seen);
      assert.doesNotMatch(seen, /premium/, "the value is masked");

      const validate = block("gitlabcore.md", "Object not ready", "platform-operator validate");
      writeFileSync(join(work, "gitlab.yaml"), stringify(manifest("premium")));
      const refused = await runShell(validate, env, true, work);
      assert.match(refused, /global\.edition/, refused);
      // The change, checked offline before it is applied: no problem, exit 0.
      writeFileSync(join(work, "gitlab.yaml"), stringify(manifest("ce")));
      assert.match(await runShell(validate, env, false, work), /^1 document\(s\) checked, no problems$/m);
      await applyGitLab(client, manifest("ce"));

      // Applied; no pod runs on this API server, so the workloads are what it waits for.
      await available("WorkloadsNotReady");
      const workloads = await runShell(
        block("gitlabcore.md", "Object not ready", "get deploy,sts"),
        env,
        true,
      );
      assert.match(workloads, /^deployment\.apps\/onr-webservice\s+0\/1\s/m, workloads);
      assert.doesNotMatch(workloads, /^No resources found/m, workloads);
    } finally {
      await gl.stop();
      removeTempDir(work);
      removeTempDir(dir);
      client.close();
    }
  });
});

describe("gitlabcore runbook: Write loop, with the fixture chart on the API server", () => {
  it("a GitOps tool forcing a Deployment's replicas: the check names its manager and fields; once it lets go, the writes stop", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    const ns = await freshNamespace(client, "gl-loop");
    const dir = await toolDir(await kubectl());
    const gl = await startFixtureGitLab(client, sharedEnv().kubeconfigPath, ns, {
      gatewayApi: false,
      versions: (v) => v === "10.2.1",
      settings: { requeueInterval: "2s" },
    });
    const DEPLOY = {
      group: "apps",
      version: "v1",
      kind: "Deployment",
      plural: "deployments",
      namespaced: true,
    } as const;
    const OBJ = "wl-webservice";
    const replicas = async () =>
      (await client.get<KubeObject & { spec: { replicas?: number } }>(DEPLOY, OBJ, ns)).spec.replicas;
    const counter = async (re: RegExp) =>
      [...(await registry.metrics()).matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
    const writes = () => counter(/^gitlabcore_apply_writes_total (\S+)$/gm);
    const passes = () =>
      counter(/^controller_runtime_reconcile_total\{controller="gitlabcore[^"]*",[^}]*\} (\S+)$/gm);
    /** The other tool: applies its label and, while it fights, the replica count. */
    const gitops = (spec: Record<string, unknown>) =>
      client.apply(
        DEPLOY,
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: OBJ, namespace: ns, labels: { "team.example.com/owner": "payments" } },
          ...(Object.keys(spec).length ? { spec } : {}),
        },
        { fieldManager: "gitops", force: true },
      );
    const env = {
      NS: ns,
      NAME: "wl",
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: sharedEnv().kubeconfigPath,
    };
    try {
      await applyGitLab(
        client,
        gitlabCore(ns, "wl", {
          version: { type: "Static", version: "10.2.1" },
          hostname: "gitlab.example.com",
          chart: {
            values: {
              "shared-secrets": { enabled: false },
              upgradeCheck: { enabled: false },
              global: { ingress: { enabled: false } },
            },
          },
        }),
      );
      await waitForGitLab(client, ns, "wl", (g) => g.status?.version === "10.2.1", "10.2.1 applied", 120_000);
      const rendered = await replicas();
      // Broken: the tool forces another replica count, three times; the operator takes it back each time.
      const before = await writes();
      for (let i = 0; i < 3; i++) {
        await gitops({ replicas: (rendered ?? 1) + 2 });
        await eventually(
          async () => ((await replicas()) === rendered ? true : undefined),
          60_000,
          `the operator to take replicas back (round ${i})`,
        );
      }
      assert.ok((await writes()) >= before + 3, "each round is a write of the operator");

      const seen = await runShell(
        block("gitlabcore.md", "Write loop", "show-managed-fields"),
        { ...env, OBJ },
        true,
      );
      const line = seen.split("\n").find((l) => l.startsWith(`Deployment/${OBJ}:`)) ?? "";
      assert.match(line, / gitlabcore-controller\/Apply/, seen);
      assert.match(line, / gitops\/Apply/, `the other manager is listed:\n${seen}`);
      const others = seen.split("\n").filter((l) => /^(Deployment|StatefulSet)\//.test(l) && l !== line);
      assert.ok(others.length > 0, seen);
      for (const l of others) assert.doesNotMatch(l, /gitops/, "only the fought object");
      assert.match(
        seen,
        /^ {2}- apiVersion: apps\/v1\n(?: {4}.*\n)*? {4}manager: gitops$/m,
        "its fields are shown",
      );

      // Act: the tool stops managing replicas (its manifest keeps only its label); the operator's
      // writes stop, over three more passes.
      await gitops({});
      const settled = await writes();
      const at = await passes();
      await eventually(
        async () => ((await passes()) >= at + 3 ? true : undefined),
        60_000,
        "three more passes",
      );
      assert.equal(await writes(), settled, "no write once the tool let go");
      assert.equal(await replicas(), rendered);
    } finally {
      await gl.stop();
      removeTempDir(dir);
      client.close();
    }
  });
});
