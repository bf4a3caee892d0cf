import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

describe("npm start -- --chart (platform-operator dev --chart)", () => {
  it("installs the operator by its chart on a node of its own, its pods seed the samples, and it cleans up", async () => {
    const child = spawn(process.execPath, [MAIN, "dev", "--chart", "--exit-after", "30"], {
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
    // helm --wait returned: the Deployment's two replicas are available.
    assert.match(out, /\[dev\] deployment platform-operator-vault ready \(2\/2 available\)/);
    assert.match(out, /\[dev\] pods platform-operator-system: .*platform-operator-vault-\S+ Running 1\/1/);
    // The samples were seeded by the pods (their log, followed), not by a process on the host.
    assert.match(out, /wrote path .*staging-core-keycloak/);
    assert.doesNotMatch(out, /\[dev\] {2}metrics: +http:\/\/127\.0\.0\.1/, "no host operator process");
    assert.match(out, /\[dev\] stopped/);
  });
});
