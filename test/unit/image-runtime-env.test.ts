import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { RUNTIME_ENV } from "../../src/cli/heap.js";
import { OPERATOR_IMAGE_ENV } from "../../src/testenv/node/images/operator.js";
import { repoRoot } from "../../src/testenv/paths.js";

/** NAME=value pairs of the ENV instructions in the Dockerfile's last stage (the image itself). */
function dockerfileEnv(text: string): Map<string, string> {
  const lastStage = text.slice(text.lastIndexOf("\nFROM "));
  const joined = lastStage.replace(/\\\n\s*/g, " ");
  const env = new Map<string, string>();
  for (const line of joined.split("\n")) {
    const m = /^ENV\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const pair of m[1]!.trim().split(/\s+/)) {
      const eq = pair.indexOf("=");
      if (eq > 0) env.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  return env;
}

describe("the operator image's environment", () => {
  it("sets what the chart sets beside NODE_OPTIONS (RUNTIME_ENV), in the test image and the Dockerfile", () => {
    assert.ok(Object.keys(RUNTIME_ENV).length > 0);
    const env = dockerfileEnv(readFileSync(join(repoRoot(), "Dockerfile"), "utf8"));
    for (const [name, value] of Object.entries(RUNTIME_ENV)) {
      assert.ok(OPERATOR_IMAGE_ENV.includes(`${name}=${value}`), `the test image lacks ${name}=${value}`);
      assert.equal(env.get(name), value, `the Dockerfile's image lacks ${name}=${value}`);
    }
    // The rest of the test image's environment is the Dockerfile's too.
    for (const pair of OPERATOR_IMAGE_ENV) {
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      assert.equal(env.get(name), value, `the Dockerfile and the test image differ on ${name}`);
    }
  });
});
