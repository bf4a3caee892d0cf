import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sharedNode } from "../../src/testenv/node/shared.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { campaign, type RunResult, runOnce } from "../faults/campaign.js";
import { gitLabCoreLifecycle } from "../faults/gitlabcore.js";
import { openBaoLifecycle, ROOT_TOKEN_STORED, SYS_INIT_ANSWERED } from "../faults/openbao.js";
import { vaultSeedLifecycle } from "../faults/vaultseed.js";
import { clientFor } from "../support/kube.js";

// A seeded sample of the fault campaign (`npm run faults` runs it whole): a different seed each run,
// printed so that a failure replays with `npm run faults -- --seed N --lifecycle <name> --sample 3`.
const seed = Number(process.env["FAULTS_SEED"] ?? Date.now() % 1_000_000);
const say = (line: string) => console.log(`[faults] ${line}`);

describe("fault campaign sample", () => {
  it("VaultSeed (10 paths): killed after sampled writes, the lifecycle ends as without faults", async () => {
    say(`seed ${seed} (replay: npm run faults -- --seed ${seed} --lifecycle vault --paths 10 --sample 3)`);
    const client = clientFor(sharedEnv().kubeconfigPath);
    const { row } = await campaign(vaultSeedLifecycle(10), { client, all: false, sample: 3, seed, say });
    const found = row.failures.flatMap((f) =>
      f.violations.map((v) => `after write ${f.crashAt ?? "-"}: ${v}`),
    );
    assert.equal(row.runs, 3, `three crash points run (seed ${seed})`);
    assert.deepEqual(found, [], `invariant violations (seed ${seed})`);
  });

  let gitlabBaseline: RunResult | undefined;

  it("GitLabCore (fixture chart, hooks): killed after sampled writes, the lifecycle ends as without faults", async () => {
    say(`seed ${seed} (replay: npm run faults -- --seed ${seed} --lifecycle gitlab --sample 3)`);
    const client = clientFor(sharedEnv().kubeconfigPath);
    const { row, baseline } = await campaign(gitLabCoreLifecycle(), {
      client,
      all: false,
      sample: 3,
      seed,
      say,
    });
    gitlabBaseline = baseline;
    assert.ok(baseline.checkpoints, `the run without faults finished: ${baseline.violations.join("; ")}`);
    const found = row.failures.flatMap((f) =>
      f.violations.map((v) => `after write ${f.crashAt ?? "-"}: ${v}`),
    );
    assert.equal(row.runs, 3, `three crash points run (seed ${seed})`);
    assert.deepEqual(found, [], `invariant violations (seed ${seed})`);
  });

  // Found by the campaign: hook-succeeded hooks were deleted before status recorded the run as
  // succeeded, so a restarted operator ran them all again (status.hookRun.succeeded now comes first).
  it("GitLabCore: killed right after its first hook-succeeded deletion, no hook runs twice", async () => {
    const base = gitlabBaseline;
    assert.ok(base?.checkpoints, "the run without faults of the test above");
    // The install's shared-secrets Job, deleted once every pre-install hook succeeded.
    const n =
      base.writes.findIndex((w) => w.method === "DELETE" && /\/jobs\/gl-shared-secrets$/.test(w.path)) + 1;
    assert.ok(n > 0, "the run without faults deleted the shared-secrets hook Job");
    const client = clientFor(sharedEnv().kubeconfigPath);
    const r = await runOnce(
      gitLabCoreLifecycle(),
      { client, all: false, sample: 1, seed, say },
      n,
      base.checkpoints,
    );
    assert.ok(r.reached, `write ${n} was reached`);
    assert.deepEqual(r.violations, [], `after write ${n}`);
  });

  // OpenBao on the local node, one crash point (the campaign's --openbao runs the rest): the
  // operator killed right after it stored the root token, before status says initialized. The
  // next process must find OpenBao initialized and keep that token: one root token and one seal
  // key ever stored, the canary written with that token readable, everything gone after delete.
  it("OpenBao (1 voter, node): killed right after the root token is stored, it is initialized once", async () => {
    const client = clientFor((await sharedNode()).kubeconfigPath);
    const r = await runOnce(
      openBaoLifecycle({ voters: 1, backup: false, upgrade: false }),
      { client, all: false, sample: 1, seed, say },
      ROOT_TOKEN_STORED,
    );
    say(`OpenBao: killed after write ${r.crashAt} of ${r.writes.length} in ${r.seconds.toFixed(1)} s`);
    assert.ok(r.reached, `the operator was killed ${ROOT_TOKEN_STORED.name}`);
    assert.deepEqual(r.violations, [], r.operatorTail?.split("\n").slice(-20).join("\n"));
  });

  // The OpenBao half of the write order (--bao-writes): killed right after OpenBao answered sys/init,
  // before the operator read the answer. The root token is lost (the window docs/openbaocluster.md
  // names as the one that cannot be closed); what must hold is that the next process does not
  // initialize again (one sys/init answered 200, none sent after) and says so (RootTokenMissing).
  it("OpenBao (3 voters, node): killed right after OpenBao answers sys/init, it is not initialized again", async () => {
    const client = clientFor((await sharedNode()).kubeconfigPath);
    const r = await runOnce(
      openBaoLifecycle({ voters: 3, backup: false, upgrade: false, baoWrites: true }),
      { client, all: false, sample: 1, seed, say },
      SYS_INIT_ANSWERED,
    );
    say(`OpenBao: killed after write ${r.crashAt} of ${r.writes.length} in ${r.seconds.toFixed(1)} s`);
    assert.ok(r.reached, `the operator was killed ${SYS_INIT_ANSWERED.name}`);
    assert.deepEqual(
      r.writes.filter((w) => w.backend === "bao" && w.path === "/v1/sys/init").map((w) => w.status),
      [200],
      "one sys/init, answered 200, over both processes",
    );
    assert.equal(r.violations.length, 1, r.violations.join("\n"));
    assert.match(
      r.violations[0]!,
      /root token lost in the documented window .*sys\/init answered 200 once; RootTokenMissing event recorded/,
    );
  });
});
