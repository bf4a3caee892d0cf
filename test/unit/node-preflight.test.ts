import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ensureNodeHost, nodePrerequisites } from "../../src/testenv/node/preflight.js";

const COMPILED_SRC = fileURLToPath(new URL("../../src", import.meta.url));
const PACKAGE_JSON = fileURLToPath(new URL("../../../package.json", import.meta.url));

/**
 * A copy of the compiled sources that an unprivileged user can read: the checkout itself may sit
 * under a directory only root can enter (mktemp -d makes them 0700).
 */
function readableCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "preflight-"));
  cpSync(COMPILED_SRC, join(dir, "src"), { recursive: true });
  cpSync(PACKAGE_JSON, join(dir, "package.json"));
  execFileSync("chmod", ["-R", "a+rX", dir]);
  chmodSync(dir, 0o755);
  return dir;
}

describe("node prerequisites", () => {
  it("names root as missing for a user without it, and nothing else on this machine", async () => {
    let asNobody: string;
    if (process.getuid?.() === 0) {
      const copy = readableCopy();
      try {
        const preflight = join(copy, "src", "testenv", "node", "preflight.js");
        const script = `import(${JSON.stringify(preflight)}).then(async (m) => console.log(JSON.stringify(await m.nodePrerequisites())))`;
        asNobody = execFileSync(
          "setpriv",
          ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script],
          { encoding: "utf8", cwd: copy },
        );
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    } else {
      asNobody = JSON.stringify(await nodePrerequisites());
    }
    const missing: string[] = JSON.parse(asNobody);
    assert.equal(missing.length, 1, missing.join("\n"));
    assert.match(missing[0]!, /^root: the node creates network and mount namespaces/);
  });

  it("as root, installs what the node needs from Debian, so nothing is missing afterwards", async (t) => {
    if (process.getuid?.() !== 0) return t.skip("only root installs Debian packages");
    const lines: string[] = [];
    const missing = await ensureNodeHost((l) => lines.push(l));
    assert.deepEqual(missing, [], `still missing after ${lines.join("; ") || "no apt-get run"}`);
  });
});
