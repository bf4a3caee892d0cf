import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

describe("npm start (platform-operator dev)", () => {
  it("starts a control plane and OpenBao, applies the samples, seeds them, and stops everything", async () => {
    const child = spawn(process.execPath, [MAIN, "dev", "--exit-after", "8"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c) => {
      out += String(c);
    });
    child.stderr.on("data", (c) => {
      out += String(c);
    });
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    assert.equal(code, 0, out);
    assert.match(out, /installed 4 CRDs/);
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
  });
});
