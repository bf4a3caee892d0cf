import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sharedEnv } from "../../src/testenv/shared.js";
import { campaign } from "../faults/campaign.js";
import { vaultSeedLifecycle } from "../faults/vaultseed.js";
import { clientFor } from "../support/kube.js";

// A seeded sample of the fault campaign (`npm run faults` runs it whole): a different seed each run,
// printed so that a failure replays with `npm run faults -- --seed N --paths 10 --sample 3`.
const seed = Number(process.env["FAULTS_SEED"] ?? Date.now() % 1_000_000);
const say = (line: string) => console.log(`[faults] ${line}`);

describe("fault campaign sample", () => {
  it("VaultSeed (10 paths): killed after sampled writes, the lifecycle ends as without faults", async () => {
    say(`seed ${seed} (replay: npm run faults -- --seed ${seed} --paths 10 --sample 3)`);
    const client = clientFor(sharedEnv().kubeconfigPath);
    const { row } = await campaign(vaultSeedLifecycle(10), { client, all: false, sample: 3, seed, say });
    const found = row.failures.flatMap((f) =>
      f.violations.map((v) => `after write ${f.crashAt ?? "-"}: ${v}`),
    );
    assert.equal(row.runs, 3, `three crash points run (seed ${seed})`);
    assert.deepEqual(found, [], `invariant violations (seed ${seed})`);
  });
});
