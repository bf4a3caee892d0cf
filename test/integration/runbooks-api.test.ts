import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { applyAny } from "../../src/runtime/apply.js";
import { JOB, SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { registry } from "../../src/runtime/metrics.js";
import { createCertificateAuthority, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { openbaoTarget } from "../../src/targets/openbao/target.js";
import { requiredExternalNames } from "../../src/targets/openbao/workload/certs/plan.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureNodeBinaries } from "../../src/testenv/node/binaries.js";
import { freePort, LOOPBACK } from "../../src/testenv/ports.js";
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
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { serviceAccountAllowed } from "../support/rbac.js";
import { block, RELEASE_ROOT, runShell, shellBlocks, toolDir } from "../support/runbook.js";
import {
  applySeed,
  condition,
  installVaultSeedCrd,
  seed,
  startVaultTarget,
  vaultSuite,
  waitForReason,
} from "../support/vault.js";

// The runbook sections whose faults need no pod, tried on the shared API server (and its dev
// OpenBao) the way a reader would: each section's `sh` blocks read from docs/runbooks/ and run with
// bash, after the fault was made for real (a policy, a mount, an RBAC grant missing), then the
// section's promised outcome awaited. Jobs have no pods here: a stand-in plays the Job controller,
// and fails the shared-secrets hook exactly while its ServiceAccount may not create Secrets, as the
// hook's pod would (gitlab-runbooks-node runs that section with the real pod, whose log it reads).
// The other sections that need pods are openbao-runbooks-node's.

/** The node's kubectl (built with the node's binaries; no node is started for it). */
const kubectl = async () => (await ensureNodeBinaries()).kubectl;

describe("vaultseed runbook, on the API server and a dev OpenBao", () => {
  it("Forbidden: a path the role's policies do not cover: the check shows them, the documented policy write makes it Ready", async () => {
    const { client, ns } = await vaultSuite("vsrb");
    const dir = await toolDir(await kubectl());
    const target = await startVaultTarget(client, ns);
    try {
      // Broken: the role's policy covers secret/<ns>/ only; the object seeds elsewhere.
      const prefix = `rb-${ns}`;
      await applySeed(client, seed(ns, "billing", { path: `secret/${prefix}/billing`, data: { a: "1" } }));
      await waitForReason(client, ns, "billing", "Forbidden", 60_000);
      const env = {
        NS: ns,
        NAME: "billing",
        BAO_ADDR: sharedEnv().bao.addr,
        BAO_TOKEN: sharedEnv().bao.rootToken,
        MOUNT: `k8s-${ns}`,
        ROLE: "ohmlab-controller",
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: sharedEnv().kubeconfigPath,
      };
      const seen = await runShell(block("vaultseed.md", "Forbidden", "bao policy read"), env, true);
      assert.match(seen, new RegExp(`^secret/${prefix}/billing: .*permission denied`, "m"));
      assert.match(seen, new RegExp(`^# seed-${ns}$`, "m"), "the role's policy is named");
      assert.ok(seen.includes(`secret/data/${ns}/*`), "and printed, showing the prefix it covers");

      const fixed = performance.now();
      await runShell(block("vaultseed.md", "Forbidden", "bao policy write"), {
        ...env,
        POLICY: `seed-${ns}`,
        PREFIX: prefix,
      });
      await waitForReason(client, ns, "billing", "Reconciled", 120_000);
      process.stdout.write(
        `# forbidden: Ready ${((performance.now() - fixed) / 1000).toFixed(1)} s after the documented policy write\n`,
      );
    } finally {
      await target.stop();
      removeTempDir(dir);
    }
  });

  it("Stalled: a KV version 1 mount: the checks name it, the documented upgrade makes the object Ready at the resync", async () => {
    const { client, ns, kv } = await vaultSuite("vsstall");
    const dir = await toolDir(await kubectl());
    const KV = `kv1-${ns}`;
    const env = {
      NS: ns,
      NAME: "billing",
      BAO_ADDR: sharedEnv().bao.addr,
      BAO_TOKEN: sharedEnv().bao.rootToken,
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: sharedEnv().kubeconfigPath,
    };
    const bao = (...args: string[]) => runCommand(`${dir}/bao`, args, { env: { ...process.env, ...env } });
    // Broken: the mount an administrator made is KV version 1; the target's policy covers the
    // object's path there (data and metadata, as KV version 2 needs).
    await bao("secrets", "enable", `-path=${KV}`, "-version=1", "kv");
    const policy = `path "${KV}/data/app/*" { capabilities = ["create", "read", "update"] }
path "${KV}/metadata/app/*" { capabilities = ["create", "read", "update", "delete"] }`;
    await runCommand("bash", ["-c", `bao policy write seed-${ns} - <<'EOF'\n${policy}\nEOF`], {
      env: { ...process.env, ...env },
    });
    // The resync a deployment sets (10 minutes by default), short here: the act waits for one.
    const target = await startVaultTarget(client, ns, { resyncInterval: "5s" });
    try {
      await applySeed(client, seed(ns, "billing", { path: `${KV}/app/billing`, data: { a: "1" } }));
      const stalled = await waitForReason(client, ns, "billing", "UnsupportedMount", 60_000);
      assert.equal(condition(stalled, "Stalled")?.status, "True");

      const [reasonBlock, mountsBlock] = shellBlocks("vaultseed.md", "Stalled");
      const why = await runShell(reasonBlock!, env, true);
      assert.match(why, new RegExp(`^UnsupportedMount: ${KV}/ is a KV version 1 mount`, "m"));
      assert.ok(mountsBlock?.includes("bao secrets list"), "the second block lists the mounts");
      const mounts = await runShell(mountsBlock!, env, true);
      const line = mounts.split("\n").find((l) => l.startsWith(`${KV}/`)) ?? "";
      assert.match(line, /\skv\s/, "the mount is listed as kv");
      assert.doesNotMatch(line, /version:2/, `and without version:2: ${line}`);
      assert.ok(
        mounts.split("\n").some((l) => l.startsWith("secret/") && /version:2/.test(l)),
        "a KV version 2 mount shows version:2",
      );

      const acted = performance.now();
      await runShell(block("vaultseed.md", "Stalled", "enable-versioning"), { ...env, KV });
      const ready = await waitForReason(client, ns, "billing", "Reconciled", 120_000);
      assert.equal(condition(ready, "Stalled"), undefined, "Stalled is gone once Ready");
      assert.deepEqual((await kv.read(`${KV}/app/billing`))?.data, { a: "1" }, "seeded through KV version 2");
      process.stdout.write(
        `# stalled: Ready ${((performance.now() - acted) / 1000).toFixed(1)} s after the documented upgrade\n`,
      );
    } finally {
      await target.stop();
      await bao("secrets", "disable", `${KV}/`).catch(() => undefined);
      removeTempDir(dir);
    }
  });
});

describe("vaultseed runbook: Backend errors and Write loop, on the API server and a dev OpenBao", () => {
  it("Backend errors: OpenBao unreachable at the target's address: the check shows it both ways; once it answers, Ready by itself", async () => {
    const { client, ns } = await vaultSuite("vsbe");
    const dir = await toolDir(await kubectl());
    // Broken: the target's address is a port nothing listens on yet (as a wrong address or a
    // NetworkPolicy that rejects would be); later a forwarder to the dev OpenBao opens it.
    const port = await freePort();
    const address = `http://${LOOPBACK}:${port}`;
    const target = await startVaultTarget(client, ns, { address });
    const upstream = new URL(sharedEnv().bao.addr);
    const forwarder = createServer((c) => {
      const u = connect(Number(upstream.port), upstream.hostname);
      c.pipe(u).pipe(c);
      c.on("error", () => u.destroy());
      u.on("error", () => c.destroy());
    });
    try {
      await applySeed(client, seed(ns, "billing", { path: `secret/${ns}/billing`, data: { a: "1" } }));
      await applySeed(client, seed(ns, "orders", { path: `secret/${ns}/orders`, data: { b: "2" } }));
      await waitForReason(client, ns, "billing", "BackendUnavailable", 60_000);
      await waitForReason(client, ns, "orders", "BackendUnavailable", 60_000);
      const env = {
        NS: ns,
        BAO_ADDR: address,
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: sharedEnv().kubeconfigPath,
      };
      const check = block("vaultseed.md", "Backend errors", "bao status");
      const seen = await runShell(check, env, true);
      for (const name of ["billing", "orders"])
        assert.match(
          seen,
          new RegExp(
            `^${name}: BackendUnavailable: OpenBao at ${LOOPBACK}:${port} is unreachable \\(ECONNREFUSED\\)$`,
            "m",
          ),
          seen,
        );
      assert.match(
        seen,
        /seal-status": dial tcp .*: connect: connection refused$/m,
        "bao status fails the same way",
      );
      assert.doesNotMatch(seen, /^Sealed/m, seen);

      // Act: OpenBao answers at the address again; no command to the operator.
      const fixed = performance.now();
      await new Promise<void>((resolve) => forwarder.listen(port, LOOPBACK, resolve));
      await waitForReason(client, ns, "billing", "Reconciled", 180_000);
      await waitForReason(client, ns, "orders", "Reconciled", 180_000);
      const after = await runShell(check, env, true);
      assert.match(after, /^billing: Reconciled: /m, after);
      assert.match(after, /^Sealed\s+false$/m, after);
      process.stdout.write(
        `# backend errors: both objects Ready ${((performance.now() - fixed) / 1000).toFixed(1)} s after OpenBao answered\n`,
      );
    } finally {
      await target.stop();
      forwarder.close();
      removeTempDir(dir);
    }
  });

  it("Write loop: another writer keeps dropping a seeded field: the versions show it; Retain and delete leave it the path", async () => {
    const { client, ns, kv } = await vaultSuite("vswl");
    const dir = await toolDir(await kubectl());
    const target = await startVaultTarget(client, ns, { resyncInterval: "1s" });
    const P = `secret/${ns}/billing`;
    const env = {
      NS: ns,
      NAME: "billing",
      BAO_ADDR: sharedEnv().bao.addr,
      BAO_TOKEN: sharedEnv().bao.rootToken,
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: sharedEnv().kubeconfigPath,
    };
    const bao = (...args: string[]) => runCommand(`${dir}/bao`, args, { env: { ...process.env, ...env } });
    const version = async () => (await kv.read(P))?.version ?? 0;
    try {
      await applySeed(client, seed(ns, "billing", { path: P, data: { a: "1" } }));
      await waitForReason(client, ns, "billing", "Reconciled", 60_000);
      // Broken: another writer replaces the path's data without the seeded field, three times; the
      // target puts the field back each time (a new version after each).
      for (let i = 0; i < 3; i++) {
        const before = await version();
        await bao("kv", "put", P, `other=round-${i}`);
        await eventually(
          async () => {
            const s = await kv.read(P);
            return s && s.version > before + 1 && s.data?.["a"] === "1" ? true : undefined;
          },
          60_000,
          `the target to put field a back (round ${i})`,
        );
      }
      const seen = await runShell(block("vaultseed.md", "Write loop", "kv metadata get"), env, true);
      const versions = [...seen.matchAll(/^(\d+) \d{4}-\d\d-\d\dT\S+$/gm)].map((m) => Number(m[1]));
      assert.ok(versions.length >= 6, `the last versions are listed:\n${seen}`);
      assert.deepEqual(
        versions,
        [...versions].sort((x, y) => x - y),
        "oldest to newest",
      );
      // The two consecutive versions: the other writer's without the field, the target's with it.
      const tables = seen.split(/^=+ Data =+$/m).slice(1);
      assert.equal(tables.length, 2, seen);
      assert.doesNotMatch(tables[0]!, /^a\s+1$/m, "the other writer's version lacks the field");
      assert.match(tables[0]!, /^other\s+round-2$/m);
      assert.match(tables[1]!, /^a\s+1$/m, "the target's version has it back");
      assert.match(tables[1]!, /^other\s+round-2$/m, "and keeps the other writer's field");

      await runShell(block("vaultseed.md", "Write loop", "kubectl delete vaultseed"), env);
      await eventually(
        async () => ((await client.getOrUndefined(VAULTSEED, "billing", ns)) ? undefined : true),
        60_000,
        "the VaultSeed to be gone",
      );
      assert.deepEqual((await kv.read(P))?.data, { a: "1", other: "round-2" }, "the values are kept");
    } finally {
      await target.stop();
      removeTempDir(dir);
    }
  });
});

describe("vaultseed runbook: Rotation overdue, with the target's clock", () => {
  it("a rotation the policy does not let it write: the check names it and the recorded period; the Forbidden act lets it rotate", async () => {
    const { client, ns, kv } = await vaultSuite("vsrot");
    const dir = await toolDir(await kubectl());
    const HOUR = 3600_000;
    let clock = Date.now();
    const target = await startVaultTarget(client, ns, {
      resyncInterval: "1s",
      hooks: { now: () => new Date(clock) },
    });
    const P = `secret/${ns}/periodic`;
    const env = {
      NS: ns,
      NAME: "periodic",
      BAO_ADDR: sharedEnv().bao.addr,
      BAO_TOKEN: sharedEnv().bao.rootToken,
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: sharedEnv().kubeconfigPath,
    };
    const next = async () =>
      Number(
        new RegExp(
          `^ohmlab_rotation_next_timestamp_seconds\\{target="vault",namespace="${ns}",name="periodic"\\} (\\S+)$`,
          "m",
        ).exec(await registry.metrics())?.[1],
      ) * 1000;
    try {
      await applySeed(
        client,
        seed(ns, "periodic", { path: P, data: { a: "<random:16>" }, rotate: { every: "24h" } }),
      );
      await waitForReason(client, ns, "periodic", "Reconciled", 60_000);
      const first = await kv.read(P);
      const started = first.customMetadata["ohmlab.fr/rotation-period-start"]!;
      assert.ok(started, "the period's start is recorded");
      // Broken: the role's policy is made read-only, then the period passes by more than an hour.
      await runShell(
        `bao policy write seed-${ns} - <<'EOF'\npath "secret/data/${ns}/*" { capabilities = ["read"] }\npath "secret/metadata/${ns}/*" { capabilities = ["read"] }\nEOF`,
        env,
      );
      clock += 26 * HOUR;
      await waitForReason(client, ns, "periodic", "Forbidden", 60_000);
      const due = await next();
      assert.equal(due, Date.parse(started) + 24 * HOUR, "the gauge stays at the unwritten rotation");
      assert.ok(clock - due > HOUR, "overdue by more than an hour, as the alert reads it");

      const seen = await runShell(
        block("vaultseed.md", "Rotation overdue", "rotation-period-start"),
        env,
        true,
      );
      const [condition, period] = seen.trim().split("\n");
      assert.match(condition ?? "", new RegExp(`^24h Forbidden: .*${P}.*permission denied`), seen);
      assert.equal(period, started, "the path still records the old period's start");

      // Act: the Forbidden section's policy write, for the namespace's prefix.
      await runShell(block("vaultseed.md", "Forbidden", "bao policy write"), {
        ...env,
        POLICY: `seed-${ns}`,
        PREFIX: ns,
      });
      const rotated = await eventually(
        async () => {
          const s = await kv.read(P);
          return s.version > first.version && s.customMetadata["ohmlab.fr/rotation-period-start"] !== started
            ? s
            : undefined;
        },
        120_000,
        "the overdue rotation",
      );
      assert.notEqual(rotated.data["a"], first.data["a"], "the key was regenerated");
      const restarted = Date.parse(rotated.customMetadata["ohmlab.fr/rotation-period-start"]!);
      assert.ok(restarted >= clock - 5000, "the next period starts at the rotation");
      await waitForReason(client, ns, "periodic", "Reconciled", 60_000);
      await eventually(
        async () => ((await next()) === restarted + 24 * HOUR ? true : undefined),
        30_000,
        "the gauge at the next period",
      );
      const after = await runShell(
        block("vaultseed.md", "Rotation overdue", "rotation-period-start"),
        env,
        true,
      );
      assert.match(after, /^24h Reconciled: /m, after);
    } finally {
      await target.stop();
      removeTempDir(dir);
    }
  });
});

describe("vaultseed runbook: CRD revision mismatch, on the shared API server", () => {
  it("an older CRD revision served: the check shows both revisions; the documented apply clears the mismatch without a restart", async () => {
    const { client, ns } = await vaultSuite("vscrd");
    const dir = await toolDir(await kubectl());
    const CRD = "vaultseeds.ohmlab.fr";
    const env = { PATH: `${dir}:${process.env.PATH}`, KUBECONFIG: sharedEnv().kubeconfigPath };
    const kc = (...args: string[]) =>
      runCommand(`${dir}/kubectl`, args, { env: { ...process.env, ...env } }).then((r) => r.stdout);
    const mismatch = async () =>
      /^ohmlab_crd_revision_mismatch\{target="vault",crd="vaultseeds\.ohmlab\.fr"\} (\d)$/m.exec(
        await registry.metrics(),
      )?.[1];
    const expected = (await kc("get", "crd", CRD, "-o", "json")).match(
      /"platform-operator\/schema-hash": "(\w+)"/,
    )?.[1];
    assert.ok(expected, "the installed CRD carries its revision");
    // Broken: the served CRD is an older revision, its fields owned by the manager that installed it.
    await kc(
      "annotate",
      "crd",
      CRD,
      "--overwrite",
      "--field-manager=helm",
      "platform-operator/schema-hash=0123older",
    );
    const target = await startVaultTarget(client, ns, { resyncInterval: "1s" });
    try {
      await eventually(async () => ((await mismatch()) === "1" ? true : undefined), 30_000, "mismatch 1");
      const seen = await runShell(
        block("vaultseed.md", "CRD revision mismatch", "get crd"),
        env,
        true,
        RELEASE_ROOT,
      );
      const lines = seen.trim().split("\n");
      assert.equal(lines[0], "0123older", seen);
      assert.match(lines[1] ?? "", new RegExp(`platform-operator/schema-hash: "?${expected}"?$`), seen);

      // Without --force-conflicts the same apply is refused: the annotation is the other manager's.
      const plain = await runShell(
        "kubectl apply --server-side -f deploy/crds/ohmlab.fr_vaultseeds.yaml",
        env,
        true,
        RELEASE_ROOT,
      );
      assert.match(plain, /conflict/i, plain);
      const acted = performance.now();
      await runShell(
        block("vaultseed.md", "CRD revision mismatch", "apply --server-side"),
        env,
        false,
        RELEASE_ROOT,
      );
      await eventually(async () => ((await mismatch()) === "0" ? true : undefined), 30_000, "mismatch 0");
      process.stdout.write(
        `# crd revision mismatch: metric 0 ${((performance.now() - acted) / 1000).toFixed(1)} s after the documented apply, no restart\n`,
      );
    } finally {
      await target.stop();
      // The shared CRD as the other suites install it.
      await installVaultSeedCrd(client);
      removeTempDir(dir);
    }
  });
});

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

describe("openbao runbook: Certificate expiring, on the API server", () => {
  it("an External certificate with three days left: the check shows its end date; the documented renewal moves the expiry", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    const ns = await freshNamespace(client, "obrb-tls");
    const dir = await toolDir(await kubectl());
    const files = makeTempDir("runbook-tls");
    const manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
    await openbaoTarget().setup(
      manager,
      parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao"),
    );
    await manager.start();
    const DAY = 86_400_000;
    const expiry = async () =>
      Number(
        new RegExp(
          `^openbao_tls_cert_expiry_timestamp\\{namespace="${ns}",name="bao",type="External"\\} (\\S+)$`,
          "m",
        ).exec(await registry.metrics())?.[1],
      ) * 1000;
    try {
      const cluster = await createOpenBaoCluster(client, ns, "bao", {
        replicas: 1,
        tls: { mode: "External", serverSecretName: "bao-tls" },
      });
      // Broken: the Secret the user keeps holds a leaf that ends in three days.
      const ca = createCertificateAuthority("runbook CA", new Date(), 400 * DAY);
      const issue = (days: number) =>
        issueServerCertificate(ca, {
          commonName: "bao",
          names: requiredExternalNames(cluster as never),
          now: new Date(),
          validityMs: days * DAY,
        });
      const old = issue(3);
      await client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "bao-tls", namespace: ns },
        type: "kubernetes.io/tls",
        stringData: { "tls.crt": old.certPem, "tls.key": old.keyPem, "ca.crt": ca.certPem },
      });
      const oldEnd = Date.parse(new X509Certificate(old.certPem).validTo);
      await eventually(
        async () => ((await expiry()) === oldEnd ? true : undefined),
        60_000,
        "the old expiry",
      );
      assert.ok(oldEnd - Date.now() < 7 * DAY, "within the alert's 7 days");
      // The pass's status is written after the metric: the condition is what the check reads.
      await eventually(
        async () => {
          const c = await client.get<
            KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
          >(OPENBAOCLUSTER, "bao", ns);
          return c.status?.conditions?.some((x) => x.type === "TLSReady" && x.status === "True")
            ? true
            : undefined;
        },
        60_000,
        "TLSReady",
      );
      const env = {
        NS: ns,
        NAME: "bao",
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: sharedEnv().kubeconfigPath,
      };
      const check = block("openbao.md", "Certificate expiring", "openssl x509");
      const enddate = (out: string) => Date.parse(/^notAfter=(.+)$/m.exec(out)?.[1] ?? "");
      const seen = await runShell(check, env, true);
      assert.match(seen, /^External Ready: Secret bao-tls is valid$/m, seen);
      assert.equal(enddate(seen), oldEnd, seen);

      // Act: the renewed certificate's files, applied as documented.
      const fresh = issue(365);
      writeFileSync(join(files, "tls.crt"), fresh.certPem);
      writeFileSync(join(files, "tls.key"), fresh.keyPem);
      writeFileSync(join(files, "ca.crt"), ca.certPem);
      await runShell(
        block("openbao.md", "Certificate expiring", "create secret generic"),
        { ...env, SECRET: "bao-tls" },
        false,
        files,
      );
      const newEnd = Date.parse(new X509Certificate(fresh.certPem).validTo);
      await eventually(
        async () => ((await expiry()) === newEnd ? true : undefined),
        60_000,
        "the new expiry",
      );
      assert.ok(newEnd - Date.now() > 300 * DAY);
      const after = await runShell(check, env, true);
      assert.match(after, /^External Ready: Secret bao-tls is valid$/m, after);
      assert.equal(enddate(after), newEnd, after);
    } finally {
      await manager.stop();
      removeTempDir(files);
      removeTempDir(dir);
      client.close();
    }
  });
});

describe("openbao runbook: Voters not ready, on the API server", () => {
  it("the route check shows the row that applies: a spec the operator refuses, and voters that wait for their pods", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    const ns = await freshNamespace(client, "obrb-voters");
    const dir = await toolDir(await kubectl());
    const manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
    await openbaoTarget().setup(
      manager,
      parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao"),
    );
    await manager.start();
    const env = { NS: ns, PATH: `${dir}:${process.env.PATH}`, KUBECONFIG: sharedEnv().kubeconfigPath };
    const check = block("openbao.md", "Voters not ready", "range .status.conditions");
    try {
      // Broken twice: an image whose tag is another version than spec.version (the operator
      // refuses the spec), and voters with no pod to run them (no node serves this API server).
      await createOpenBaoCluster(client, ns, "bad", { replicas: 3, image: "openbao/openbao:2.3.0" });
      await createOpenBaoCluster(client, ns, "bao", { replicas: 3 });
      const shown = (name: string, want: RegExp) =>
        eventually(
          async () => {
            const out = await runShell(check, { ...env, NAME: name }, true);
            return want.test(out) ? out : undefined;
          },
          60_000,
          `${name}: ${want}`,
        );
      // Row "Degraded=True, InvalidSpec (phase Failed)": the message names the field.
      const bad = await shown("bad", /^Degraded=True InvalidSpec: /m);
      assert.match(bad, /^Failed 0\/3$/m, bad);
      assert.match(
        bad,
        /^Degraded=True InvalidSpec: validate: spec\.image: tag 2\.3\.0 is another version than spec\.version 2\.7\.2$/m,
      );
      // Row "Degraded=False, Reconciling": Available names the step and the pod it waits for.
      const waiting = await shown("bao", /^Degraded=False Reconciling: /m);
      assert.match(
        waiting,
        /^Available=False PodNotReady: initialization: waiting for pod bao-0 to run$/m,
        waiting,
      );
      assert.doesNotMatch(waiting, /^Degraded=True/m);
    } finally {
      await manager.stop();
      removeTempDir(dir);
      client.close();
    }
  });
});

describe("openbao runbook: Stuck restore, on the API server", () => {
  it("a restore into a cluster that is not initialized: the check says why it waits; deleting it leaves no lock and no Job", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    const ns = await freshNamespace(client, "obrb-restore");
    const dir = await toolDir(await kubectl());
    const manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
    await openbaoTarget().setup(
      manager,
      parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao"),
    );
    await manager.start();
    try {
      // Broken: the cluster has no pods here, so it never initializes; the restore must wait.
      await createOpenBaoCluster(client, ns, "bao", { replicas: 1 });
      await applyAny(
        client,
        {
          apiVersion: "openbao.org/v1alpha1",
          kind: "OpenBaoRestore",
          metadata: { name: "back", namespace: ns },
          spec: {
            cluster: "bao",
            source: {
              key: "snaps/bao/latest.snap",
              target: {
                bucket: "snaps",
                endpoint: "http://s3.invalid:9000",
                credentialsSecretRef: { name: "s3" },
              },
            },
            tokenSecretRef: { name: "restore-token" },
          },
        },
        { fieldManager: "test-user", force: true },
      );
      await eventually(
        async () => {
          const r = await client.get<KubeObject & { status?: { phase?: string } }>(
            OPENBAORESTORE,
            "back",
            ns,
          );
          return r.status?.phase === "Validating" ? r : undefined;
        },
        60_000,
        "the restore to wait in Validating",
      );
      const env = {
        NS: ns,
        NAME: "bao",
        RNAME: "back",
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: sharedEnv().kubeconfigPath,
      };
      const seen = await runShell(block("openbao.md", "Stuck restore", "get openbaorestore"), env, true);
      assert.match(seen, /^\s+phase: Validating$/m);
      assert.match(seen, /message: OpenBaoCluster \S+\/bao is not initialized yet/, seen);
      assert.match(seen, /reason: ClusterNotInitialized/);
      assert.match(seen, /jobs.batch "restore-back" not found/, "no restore Job was made");

      // Act: the request is immutable; deleting it goes through its finalizer, holding nothing.
      await runShell(block("openbao.md", "Stuck restore", "kubectl delete openbaorestore"), env);
      assert.equal(await client.getOrUndefined(OPENBAORESTORE, "back", ns), undefined);
      const cluster = await client.get<KubeObject & { status?: { operationLock?: unknown } }>(
        OPENBAOCLUSTER,
        "bao",
        ns,
      );
      assert.equal(cluster.status?.operationLock, undefined, "no lock left on the cluster");
      assert.deepEqual((await client.list(JOB, { namespace: ns })).items, []);
    } finally {
      await manager.stop();
      removeTempDir(dir);
      client.close();
    }
  });
});
