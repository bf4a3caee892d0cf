import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { exponentialDelay } from "../../src/runtime/backoff.js";
import { FAILURE_BASE_DELAY_MS, FAILURE_MAX_DELAY_MS } from "../../src/runtime/controller.js";
import { executePass } from "../../src/targets/openbao/adminops/upgrade/bluegreen/actions.js";
import { recordStepFailure } from "../../src/targets/openbao/adminops/upgrade/bluegreen/attempts.js";
import { raftView } from "../../src/targets/openbao/adminops/upgrade/bluegreen/observe.js";
import { planBlueGreen } from "../../src/targets/openbao/adminops/upgrade/bluegreen/plan.js";
import type {
  Plan,
  PlanSpec,
  PlanStatus,
} from "../../src/targets/openbao/adminops/upgrade/bluegreen/types.js";
import { type AutopilotState, RaftClient } from "../../src/targets/openbao/adminops/upgrade/raftops/index.js";
import { baoCall, baoHealth } from "../../src/testenv/baohttp.js";
import { type RaftNode, type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { waitUntil } from "../../src/testenv/wait.js";

// The blue-green state machine (plan + the executor's Raft pass) driven against a real mixed-version
// Raft cluster on loopback, without Kubernetes: the test plays the workload controller (it starts the
// green nodes when the plan enters DeployingGreen and stops the side Cleanup drops), everything else
// is the operator's code. Status lives only in a JSON copy between passes, as after a restart.

const OLD = "openbao/openbao:2.6.2";
const NEW = "openbao/openbao:2.7.2";

async function keepAlive<T>(p: Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 1000);
  try {
    return await p;
  } finally {
    clearInterval(timer);
  }
}

interface Harness {
  bao: RaftOpenBao;
  blue: RaftNode[];
  green: RaftNode[];
  status: PlanStatus;
  phases: string[];
  /** The requeue after a failed step: no pass before this time. */
  notBefore?: number;
}

async function readState(h: Harness): Promise<{ state?: AutopilotState; via?: RaftClient }> {
  for (const n of [...h.blue, ...h.green].filter((x) => x.pid() !== undefined)) {
    const via = new RaftClient({ address: n.addr, timeoutMs: 2_000 });
    try {
      return { state: await via.autopilotDetail(h.bao.rootToken), via };
    } catch {
      // a stopped or partitioned member: try the next one
    }
  }
  return {};
}

async function readyCount(nodes: RaftNode[]): Promise<number> {
  let n = 0;
  for (const x of nodes)
    if (x.pid() !== undefined && [200, 429].includes(await baoHealth(x.addr).catch(() => 0))) n++;
  return n;
}

/** One pass: observe, plan from a JSON copy of status, execute, persist. */
/** waitUntil with the phases walked so far in its timeout message (and the last pass error). */
async function drive(
  h: Harness,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  let last = "";
  try {
    await waitUntil(
      async () => {
        if (h.notBefore !== undefined && Date.now() < h.notBefore) return false;
        try {
          return await check();
        } catch (e) {
          last = String(e);
          throw e;
        }
      },
      { what, timeoutMs, intervalMs: 300 },
    );
  } catch (e) {
    throw new Error(
      `${String(e)}; phases ${h.phases.join(" → ")}; status ${JSON.stringify(h.status.blueGreen)}; last error ${last}`,
    );
  }
}

async function pass(
  h: Harness,
  spec: PlanSpec,
  ids = { operationID: "op-1", greenRevision: "g1", nonce: "nonce-1" },
): Promise<Plan> {
  const { state, via } = await readState(h);
  const sides = { blue: h.blue.map((n) => n.id), green: h.green.map((n) => n.id) };
  const persisted: PlanStatus = JSON.parse(JSON.stringify(h.status));
  const plan = planBlueGreen(
    spec,
    persisted,
    {
      now: new Date(),
      greenReady: await readyCount(h.green),
      blueReady: await readyCount(h.blue),
      raft: state ? raftView(state, sides) : undefined,
    },
    ids,
  );
  const phase = persisted.blueGreen?.phase ?? "Idle";
  let bg = plan.blueGreen ?? persisted.blueGreen;
  const failure = plan.halted
    ? undefined
    : await executePass(
        phase,
        plan.actions,
        { state, ops: via ? { client: via, token: h.bao.rootToken } : undefined },
        sides,
      );
  if (failure && bg) bg = recordStepFailure(bg, failure);
  h.status = {
    ...h.status,
    blueGreen: bg,
    breakGlass: plan.breakGlass ?? h.status.breakGlass,
    upgradeRequests: plan.upgradeRequests ?? h.status.upgradeRequests,
  };
  // As the runtime does with the manager's retry result: the AdminOps controller's failure backoff,
  // doubling from 5 s per failed pass in a row.
  if (failure)
    h.notBefore =
      Date.now() + exponentialDelay(bg?.jobFailureCount ?? 1, FAILURE_BASE_DELAY_MS, FAILURE_MAX_DELAY_MS);
  const now = h.status.blueGreen?.phase ?? "Idle";
  if (h.phases.at(-1) !== now) h.phases.push(now);
  return plan;
}

/** The workload controller's part: green nodes exist in DeployingGreen. */
async function playWorkload(h: Harness): Promise<void> {
  if (h.status.blueGreen?.phase === "DeployingGreen" && h.green.length === 0)
    for (let i = 0; i < 3; i++) h.green.push(await h.bao.addNode({ version: "2.7.2", nonVoter: true }));
}

const spec = (over: Partial<PlanSpec> = {}): PlanSpec => ({
  version: "2.7.2",
  image: NEW,
  replicas: 3,
  settings: { autoPromote: true, preUpgradeSnapshot: false, maxJobFailures: 3 },
  requests: {},
  ...over,
});

async function startBlue(): Promise<Harness> {
  const bao = await startRaftOpenBao({ nodes: 3, version: "2.6.2" });
  await baoCall(bao.addr, bao.rootToken, "POST", "sys/mounts/secret", {
    type: "kv",
    options: { version: "2" },
  });
  return {
    bao,
    blue: [...bao.nodes],
    green: [],
    status: { currentVersion: "2.6.2", currentImage: OLD },
    phases: [],
  };
}

/** Writes sequential keys through every live node in turn; counts what OpenBao acknowledged. */
function writer(h: Harness) {
  const acked: string[] = [];
  let failures = 0;
  let stop = false;
  const loop = (async () => {
    for (let i = 0; !stop; i++) {
      const nodes = [...h.blue, ...h.green].filter((n) => n.pid() !== undefined);
      const n = nodes[i % nodes.length];
      const key = `k${i}`;
      try {
        await baoCall(n!.addr, h.bao.rootToken, "POST", `secret/data/${key}`, { data: { v: key } });
        acked.push(key);
      } catch {
        failures++;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    acked,
    failures: () => failures,
    async stop() {
      stop = true;
      await loop;
    },
  };
}

describe("blue-green on a real Raft cluster: plan and executor without Kubernetes", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    if (h) await keepAlive(h.bao.stop());
    h = undefined;
  });

  it("3 voters 2.6.2 → 2.7.2: green takes over, blue is removed, no acknowledged write lost", async () => {
    h = await startBlue();
    const hh = h;
    const load = writer(hh);
    await drive(
      hh,
      "the blue-green upgrade to complete",
      async () => {
        const plan = await pass(hh, spec());
        await playWorkload(hh);
        return plan.completed === true;
      },
      180_000,
    );
    await load.stop();
    await keepAlive(Promise.all(hh.blue.map((n) => n.stop())));
    assert.deepEqual(hh.phases, [
      "DeployingGreen",
      "JoiningMesh",
      "Syncing",
      "Promoting",
      "DemotingBlue",
      "Cleanup",
      "Idle",
    ]);
    assert.equal(hh.status.blueGreen?.blueImage, NEW, "green is the serving revision");
    const { state } = await readState(hh);
    assert.deepEqual([...(state?.voters ?? [])].sort(), hh.green.map((n) => n.id).sort());
    for (const g of hh.green) assert.equal(state?.servers[g.id]?.version, "2.7.2");
    assert.ok(load.acked.length > 20, `only ${load.acked.length} writes acknowledged`);
    const reader = hh.green[0]!;
    for (const key of load.acked)
      await waitUntil(
        async () =>
          (await baoCall(reader.addr, hh.bao.rootToken, "GET", `secret/data/${key}`)).data.data.v === key,
        {
          what: `acknowledged write ${key} on green`,
          timeoutMs: 10_000,
        },
      );
    console.log(
      `blue-green on loopback: ${load.acked.length} writes acknowledged, ${load.failures()} refused, 0 lost`,
    );
  });

  it("green lost after it votes: rollback cannot repair consensus → break-glass; acknowledged, blue is restored", async () => {
    h = await startBlue();
    const hh = h;
    // Forward until green votes and blue is being demoted.
    await drive(
      hh,
      "DemotingBlue",
      async () => {
        await pass(hh, spec());
        await playWorkload(hh);
        return hh.status.blueGreen?.phase === "DemotingBlue";
      },
      120_000,
    );
    // Green dies with six voters configured: three blue alone are no quorum.
    await keepAlive(Promise.all(hh.green.map((n) => n.stop())));
    await drive(
      hh,
      "break-glass",
      async () => {
        await pass(hh, spec());
        return hh.status.breakGlass?.active === true;
      },
      180_000,
    );
    assert.ok(hh.phases.includes("RollingBack"), hh.phases.join(" → "));
    assert.equal(hh.status.breakGlass?.reason, "RollbackConsensusRepairFailed");
    assert.equal(hh.status.breakGlass?.nonce, "nonce-1");
    // Halted: passes change nothing until the acknowledgement.
    const frozen = JSON.stringify(hh.status);
    const halted = await pass(hh, spec());
    assert.deepEqual(halted.actions, []);
    assert.equal(JSON.stringify(hh.status), frozen);
    // The human repair: green's servers come back (quorum returns), then the acknowledgement.
    for (const n of hh.green) {
      await n.start();
      await n.unseal();
    }
    await drive(
      hh,
      "the rollback to finish after the acknowledgement",
      async () => {
        await pass(hh, spec({ breakGlassAck: "nonce-1" }));
        return hh.status.blueGreen?.phase === "Idle";
      },
      180_000,
    );
    assert.equal(hh.status.breakGlass?.active, false);
    assert.ok(hh.phases.includes("RollbackCleanup"), hh.phases.join(" → "));
    const { state } = await readState(hh);
    assert.deepEqual([...(state?.voters ?? [])].sort(), hh.blue.map((n) => n.id).sort());
    assert.deepEqual(state?.nonVoters ?? [], []);
    assert.ok(hh.blue.some((b) => b.id === state?.leader));
    assert.match(hh.status.blueGreen?.rollbackReason ?? "", /DemotingBlue/);
  });
});
