import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { LEASE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { HoldingProxy, kubeconfigThrough, serverOf } from "../support/holding-proxy.js";
import { eventually } from "../support/kube.js";
import { vaultSuite } from "../support/vault.js";
import { writeVaultRunConfig } from "../support/vault-run-config.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

type Lease = KubeObject & { spec?: { holderIdentity?: string | null } };

describe("platform-operator run when its Lease cannot be renewed", () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;

  before(async () => {
    ({ client, ns } = await vaultSuite("op-lost"));
    dir = mkdtempSync(join(tmpdir(), "op-lost-"));
  });
  after(() => {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stops and exits with status 1 when the API server stops answering", async () => {
    const proxy = await HoldingProxy.start(serverOf(sharedEnv().kubeconfigPath));
    const config = writeVaultRunConfig(ns, "op-lost", "OP_LOST_TEST_BAO", { resync: false });
    const kubeconfig = kubeconfigThrough(sharedEnv().kubeconfigPath, proxy.port, join(dir, "kc.json"));
    const child = spawn(process.execPath, [MAIN, "run", "--config", config, "--kubeconfig", kubeconfig], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    child.stderr!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await eventually(
        async () =>
          (await client.getOrUndefined<Lease>(LEASE, "platform-operator-vault", ns))?.spec?.holderIdentity,
        30_000,
        "the operator to hold its Lease",
      );
      await eventually(
        () => (out.includes("controllers started") ? true : undefined),
        30_000,
        "controllers to run",
      );
      const heldAt = Date.now();
      proxy.hold("all");
      const code = await exited;
      process.stdout.write(`# run exited ${Date.now() - heldAt} ms after the API server went silent\n`);
      assert.equal(code, 1, `exit status (output: ${out.slice(-2000)})`);
      assert.match(out, /leader election lost/);
      assert.match(out, /leadership lost: the operator stops and exits with status 1/);
    } finally {
      child.kill("SIGKILL");
      await proxy.close();
    }
  });
});
