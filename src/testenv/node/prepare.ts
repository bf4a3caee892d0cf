import type { Binaries } from "../binaries.js";
import { formatDuration } from "../duration.js";
import { ensureNodeBinaries } from "./binaries.js";
import { ensureNodeImages } from "./images/node-images.js";
import { ensureNodeHost } from "./preflight.js";
import { NODE_SWITCH_VAR } from "./shared.js";

/**
 * Builds the node's binaries and images ahead of a test run, so test/run's node starts warm. A
 * machine that cannot run a node is told what it lacks; the rest of the preparation still counts.
 */
export async function prepareNode(binaries: Binaries, log: (line: string) => void): Promise<void> {
  if (process.env[NODE_SWITCH_VAR] === "0") return;
  const missing = await ensureNodeHost(log);
  if (missing.length > 0) {
    log(
      `no node on this machine (tests that need one will fail saying so); it lacks:\n- ${missing.join("\n- ")}`,
    );
    return;
  }
  const started = Date.now();
  const bin = await ensureNodeBinaries(log);
  await ensureNodeImages(bin, binaries.bao, log);
  log(`node binaries and images ready (${formatDuration(Date.now() - started)})`);
}
