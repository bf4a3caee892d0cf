import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { KubeClient, loadKubeConfig } from "../../src/runtime/client.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { seed } from "../support/vault.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

function startDev(args: string[]): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  // The control-plane-only path; the node path is node-dev.test.ts's.
  const child = spawn(process.execPath, [MAIN, "dev", "--no-node", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (c) => {
    out += String(c);
  });
  child.stderr!.on("data", (c) => {
    out += String(c);
  });
  const exited = new Promise<number | null>((r) => child.once("exit", r));
  return { child, output: () => out, exited };
}

/** Until dev says it is ready (its Ctrl-C line); fails if it ends first. */
async function untilReady(dev: ReturnType<typeof startDev>): Promise<void> {
  const ready = new Promise<void>((resolve) => {
    const check = () => (/\[dev\] Ctrl-C stops/.test(dev.output()) ? resolve() : undefined);
    dev.child.stderr!.on("data", check);
    dev.child.stdout!.on("data", check);
  });
  await Promise.race([ready, dev.exited.then(() => assert.fail(`dev ended early:\n${dev.output()}`))]);
}

/** Temp folders still on disk that the process `pid` created. */
function foldersLeftBy(pid: number): string[] {
  return readdirSync(tmpdir())
    .filter((e) => e.startsWith("testenv-"))
    .filter((e) => {
      try {
        return Number(readFileSync(join(tmpdir(), e, ".owner-pid"), "utf8")) === pid;
      } catch {
        return false;
      }
    });
}

describe("npm start (platform-operator dev)", () => {
  it("starts a control plane and OpenBao, applies the samples, seeds them, and stops everything", async () => {
    const { child, output, exited } = startDev(["--exit-after", "8"]);
    const code = await exited;
    const out = output();
    assert.equal(code, 0, out);
    assert.match(out, /installed 6 CRDs/);
    // It says what runs, and applies only what a running target reconciles.
    assert.match(out, /\[dev\] targets running: vault \(VaultSeed\)/);
    assert.match(
      out,
      /not applying deploy\/samples\/openbaocluster\.yaml \(OpenBaoCluster\): its target "openbao" runs OpenBao pods, which need the local node \(not running\)/,
    );
    assert.match(
      out,
      /not applying deploy\/samples\/gitlabcore\.yaml \(GitLabCore\): its target "gitlab" runs hook Jobs and workloads in pods, which need the local node \(not running\)/,
    );
    assert.match(out, /applied \d+ sample objects/);
    assert.match(out, /wrote path .*staging-core-keycloak/);
    assert.match(out, /wrote path .*staging-observability-grafana.*oauth\.clientSecret/);
    assert.match(out, /\[dev\] stopped/);
    // Readable lines, not JSON.
    assert.ok(!out.split("\n").some((l) => l.startsWith('{"level"')));
    // Every process it started is gone: nothing listens on the addresses it printed.
    const server = /kubeconfig:\s+(\S+)/.exec(out)?.[1];
    assert.ok(server);
    const bao = /OpenBao:\s+(http:\/\/\S+)/.exec(out)![1]!;
    await assert.rejects(fetch(`${bao}/v1/sys/health`));
    assert.deepEqual(foldersLeftBy(child.pid!), [], "temp folders left behind");
  });

  it("refuses --chart without the node, saying why, before starting anything", async () => {
    const { output, exited } = startDev(["--chart"]);
    const code = await exited;
    assert.notEqual(code, 0);
    assert.match(output(), /--chart installs the operator on the local node: it cannot go with --no-node/);
    assert.doesNotMatch(output(), /starting the local control plane/);
  });

  it("serves its admission webhook: the API server refuses a bad VaultSeed naming the field and admits a good one", async () => {
    const { child, output, exited } = startDev(["--no-samples"]);
    await untilReady({ child, output, exited });
    assert.match(
      output(),
      /\[dev\] admission webhook of vault: https:\/\/127\.0\.0\.1:\d+\/validate \(failurePolicy Fail\)/,
    );
    const kubeconfig = /\[dev\] +kubeconfig: +(\S+)/.exec(output())?.[1];
    assert.ok(kubeconfig, output());
    const client = new KubeClient(loadKubeConfig(kubeconfig), "dev-test");
    const ns = "platform-operator-system";
    try {
      // The CA is in the configuration before `ready`; the API server takes it up a moment later
      // (until then it cannot call the webhook, and says so): the first answer of the webhook counts.
      const bad = seed(ns, "bad", { path: "platforms/a/b/bad", data: { "a.b": "<random:8>" } });
      const deadline = Date.now() + 30_000;
      let refused = "";
      do {
        refused = await client.create(VAULTSEED, bad).then(
          () => "admitted",
          (e: Error) => e.message,
        );
      } while (/failed calling webhook/.test(refused) && Date.now() < deadline);
      assert.match(
        refused,
        /admission webhook .* denied the request: VaultSeed platform-operator-system\/bad is invalid: spec\.data/,
      );
      await client.create(
        VAULTSEED,
        seed(ns, "good", { path: "platforms/a/b/good", data: { a: "<random:8>" } }),
      );
    } finally {
      client.close();
      child.kill("SIGINT");
    }
    assert.equal(await exited, 0, output());
  });

  it("still stops cleanly and removes its folders when the reader of its output is gone (Ctrl-C on a pipe)", async () => {
    const { child, output, exited } = startDev(["--no-samples"]);
    await untilReady({ child, output, exited });
    // As `npm start | tee log` when Ctrl-C ends tee first: every later write meets EPIPE.
    child.stdout!.destroy();
    child.stderr!.destroy();
    child.kill("SIGINT");
    const code = await exited;
    assert.equal(code, 0, `a broken pipe must not crash the shutdown:\n${output()}`);
    assert.deepEqual(foldersLeftBy(child.pid!), [], "temp folders left behind");
  });
});
