import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { removeTempDir } from "../../src/testenv/tempdirs.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  provisionSharedSecretsAccount,
  waitForGitLab,
} from "../support/gitlab.js";
import { type FixtureGitLab, startFixtureGitLab } from "../support/gitlab-fixture.js";
import { clientFor, eventually } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { block, runShell, section, shellBlocks, toolDir } from "../support/runbook.js";

// docs/runbooks/gitlabcore.md "Hooks failing" tried on the local node, where the hook's pod really
// runs: the fixture chart's shared-secrets hook (the real kubectl image, the chart's script) runs as
// a ServiceAccount the administrator has not granted yet, so its kubectl is refused and the pod exits
// non-zero; the chart's delete policy (hook-succeeded, before-hook-creation) keeps the failed Job, so
// the section's `kubectl logs` step has something to read. The section's commands run as a reader
// pastes them, their output checked against what the section says they show; then the documented
// fix (the Role and binding for the hook's account, nothing told to the operator) recovers it.
// runbooks-api-gitlab tries the same section without pods; only here does `kubectl logs` print anything.

const NAME = "rb";
const SA = "gitlab-manager";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
/** With RUNBOOK_TEST_DUMP set, what each block printed, to compare with the section's text. */
const dump = (what: string, out: string) => {
  if (process.env["RUNBOOK_TEST_DUMP"]) process.stdout.write(`# ${what}:\n${out.replace(/^/gm, "#   ")}\n`);
};

describe("gitlabcore runbook on the local node: Hooks failing", { timeout: 10 * 60_000 }, () => {
  let ctx: NodeNamespace;
  let client: KubeClient;
  let gl: FixtureGitLab | undefined;
  let dir = "";

  before(async () => {
    ctx = await nodeNamespace("glrun");
    client = clientFor(ctx.node.kubeconfigPath);
    dir = await toolDir(ctx.node.kubectl);
    gl = await startFixtureGitLab(client, ctx.node.kubeconfigPath, ctx.namespace, {
      gatewayApi: false,
      versions: (v) => v === "10.3.0",
      settings: { serviceAccountName: SA, requeueInterval: "2s" },
    });
  });
  after(async () => {
    if (gl && process.env["GITLAB_TEST_DUMP"]) console.log(gl.op.logs.join(""));
    await gl?.stop();
    await deleteNamespace(ctx);
    if (dir) removeTempDir(dir);
    client?.close();
  });

  it("the hook's pod is refused: the check names the Job, its log says why, the grant recovers it with no command", async () => {
    const ns = ctx.namespace;
    // Broken: the hook's ServiceAccount exists, the administrator's Role and binding do not.
    await ctx.apply({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: SA } });
    const t0 = performance.now();
    await applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: { values: { global: { ingress: { enabled: false } } } },
      }),
    );
    await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => conditionOf(g, "Initialized")?.reason === "HooksFailed",
      "Initialized False, HooksFailed",
      180_000,
    );
    const failedIn = (performance.now() - t0) / 1000;
    const env = { NS: ns, NAME, PATH: `${dir}:${process.env.PATH}`, KUBECONFIG: ctx.node.kubeconfigPath };

    // The intro: every command runs, the object is listed, the failed Job and its pods are there.
    // The next run of the hooks deletes the failed Job before it creates its own (the Job's
    // before-hook-creation policy), so for a moment there is no Job and no pod: as the section says
    // for the checks, ask again until a failed try shows.
    const failedPod = new RegExp(`^${NAME}-shared-secrets-\\S+\\s+0/1\\s+\\S*Error`, "m");
    let overview = "";
    await eventually(
      async () => {
        overview = await runShell(shellBlocks("gitlabcore.md", "")[0]!, env, true);
        return failedPod.test(overview) ? overview : undefined;
      },
      120_000,
      "the intro to list the failed hook's pod",
    ).catch(() => assert.match(overview, failedPod, overview));
    dump("intro", overview);
    assert.match(overview, new RegExp(`^${NAME}\\s+(Failed|Preparing)\\s`, "m"), overview);
    assert.doesNotMatch(overview, /^error:/m, `every command of the intro runs:\n${overview}`);

    // Check 1: the condition and the Warning event name the Job.
    const which = await runShell(block("gitlabcore.md", "Hooks failing", "reason=HooksFailed"), env, true);
    dump("check 1", which);
    // Initialized holds the failure until the next run of the hooks starts (then HooksRunning);
    // Available and Upgradeable keep it through that run.
    const named = new RegExp(`^(?:Initialized|Available|Upgradeable): hook Job ${ns}/(\\S+): `, "m").exec(
      which,
    );
    assert.ok(named, `the condition names the Job:\n${which}`);
    const JOB = named[1]!;
    assert.equal(JOB, `${NAME}-shared-secrets`);
    assert.match(which, /Warning\s+HooksFailed\s/, "and so does the Warning event");
    const deployments = JSON.parse(await ctx.kubectl(["get", "deployments", "-o", "json"])).items as Json[];
    assert.deepEqual(deployments, [], "nothing of the release was applied after the failed hook");

    // Check 2: the Job's log says why, in the API server's words. The next run may be replacing the
    // Job meanwhile (the section says: ask again), so read until one finished run answers both
    // commands: its log, and every try's pod (as many as kubectl logs says there are) exited.
    const why = block("gitlabcore.md", "Hooks failing", "kubectl logs");
    const settled = (out: string) => {
      const pods = out.match(/^Name:\s+/gm)?.length ?? 0;
      const found = Number(/^Found (\d+) pods, using pod\//m.exec(out)?.[1] ?? 1);
      return /forbidden/.test(out) && pods === found && out.match(/Exit Code:\s+1$/gm)?.length === pods;
    };
    const log = await eventually(
      async () => {
        const out = await runShell(why, { ...env, JOB }, true);
        return settled(out) ? out : undefined;
      },
      120_000,
      "the hook Job's log to say why it failed",
    );
    dump("check 2", log);
    // The line the section quotes, with its placeholders for this namespace and account.
    const quoted = /`(error: failed to create secret [^`]*)`/.exec(section("gitlabcore.md", "Hooks failing"));
    assert.ok(quoted, "the section quotes the refused hook's log line");
    const line = quoted[1]!.replaceAll("NS", ns).replaceAll("ACCOUNT", SA);
    assert.ok(log.includes(`${line}\n`), `the log holds the quoted line ${line}:\n${log}`);
    assert.match(log, new RegExp(`^Name:\\s+${JOB}-`, "m"), "describe shows the hook's pod");
    assert.match(log, /Exit Code:\s+1$/m, "which exited non-zero");
    // Each try of the Job is a pod (the fixture's backoffLimit 2: three, unless the next run had
    // replaced the Job already): describe shows them all, kubectl logs says which one it read.
    const pods = log.match(/^Name:\s+/gm)?.length ?? 0;
    if (pods > 1) {
      const picked = /^Found (\d+) pods, using pod\/(\S+)$/m.exec(log);
      assert.ok(picked, `kubectl logs says which of the ${pods} tries it shows:\n${log}`);
      assert.ok(picked[2]!.startsWith(`${JOB}-`), picked[2]);
    }

    // Check 3: the account the Job runs as may not create Secrets.
    const canI = (want: string) =>
      eventually(
        async () => {
          const out = await runShell(
            block("gitlabcore.md", "Hooks failing", "auth can-i"),
            { ...env, JOB },
            true,
          );
          return /^(yes|no)$/m.exec(out)?.[1] === want ? out : undefined;
        },
        60_000,
        `the hook's account to be answered "${want}"`,
      );
    dump("check 3", await canI("no"));

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
      300_000,
    );
    assert.equal(ok.status?.hooksVersion, "10.3.0");
    const recoveredIn = (performance.now() - fixed) / 1000;
    // The hook did its job: the Secrets it creates are there, and the release was applied after it.
    for (const s of [`${NAME}-gitlab-initial-root-password`, `${NAME}-rails-secret`])
      await ctx.getJson(`secret/${s}`);
    await eventually(
      async () => {
        const d = JSON.parse(await ctx.kubectl(["get", "deployments", "-o", "json"])).items as Json[];
        return d.length > 0 ? true : undefined;
      },
      60_000,
      "the release's Deployments to be applied after the hooks",
    );
    process.stdout.write(
      `# hooks failing on the node: HooksFailed ${failedIn.toFixed(1)} s after apply, Initialized ${recoveredIn.toFixed(1)} s after the grant, ${((performance.now() - t0) / 1000).toFixed(1)} s in all\n`,
    );
  });
});
