import assert from "node:assert/strict";
import { connect, createServer } from "node:net";
import { describe, it } from "node:test";
import { registry } from "../../src/runtime/metrics.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureNodeBinaries } from "../../src/testenv/node/binaries.js";
import { freePort, LOOPBACK } from "../../src/testenv/ports.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { removeTempDir } from "../../src/testenv/tempdirs.js";
import { eventually } from "../support/kube.js";
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

// The VaultSeed runbook (docs/runbooks/vaultseed.md) on the shared API server and its dev OpenBao,
// the way a reader uses it: a section's `sh` blocks are read from the runbook and run with bash,
// after the fault was made for real (a policy, a KV version 1 mount, an address nothing answers
// at, another writer of the path, an older CRD revision, a rotation the policy forbids), and then
// what the section promises is awaited.

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
