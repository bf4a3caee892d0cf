import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { nodePrerequisites } from "../../src/testenv/node/preflight.js";

const PREFLIGHT = fileURLToPath(new URL("../../src/testenv/node/preflight.js", import.meta.url));

describe("node prerequisites", () => {
  it("names root as missing for a user without it, and nothing else on this machine", async () => {
    const script = `import(${JSON.stringify(PREFLIGHT)}).then(async (m) => console.log(JSON.stringify(await m.nodePrerequisites())))`;
    const asNobody =
      process.getuid?.() === 0
        ? execFileSync(
            "setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script],
            {
              encoding: "utf8",
            },
          )
        : JSON.stringify(await nodePrerequisites());
    const missing: string[] = JSON.parse(asNobody);
    assert.equal(missing.length, 1, missing.join("\n"));
    assert.match(missing[0]!, /^root: the node creates network and mount namespaces/);
  });
});
