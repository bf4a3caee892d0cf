import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { REGISTRY_DIR } from "../../src/testenv/node/registry.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

describe("npm start -- --node (platform-operator dev --node)", () => {
  it("runs the local default on a node of its own, shows its pods, seeds the samples, and cleans up", async () => {
    const child = spawn(process.execPath, [MAIN, "dev", "--node", "--exit-after", "10"], {
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
    const index = /\[dev\] node (\d+): CoreDNS ready/.exec(out)?.[1];
    assert.ok(index, `the node came up:\n${out}`);
    assert.match(out, /\[dev\] pod kube-system coredns-\S+ 1\/1 Running/);
    assert.match(out, /wrote path .*staging-core-keycloak/);
    assert.match(out, /\[dev\] stopped/);
    // Its node is gone: record released, veth removed. Node tests run side by side, so another node
    // may already have taken the freed number; then the record names that node's process, not ours.
    const record = join(REGISTRY_DIR, `node-${index}.json`);
    const reused = existsSync(record) && JSON.parse(readFileSync(record, "utf8")).ownerPid !== child.pid;
    if (!reused) {
      assert.ok(!existsSync(record), `node ${index}'s record is still there`);
      const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" });
      assert.ok(!links.includes(`ponode${index}h`), links);
    }
  });
});
