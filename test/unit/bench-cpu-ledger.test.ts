import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { cores, type PhaseCpu, SELF, treeCpuSeconds } from "../../bench/cpu-ledger.js";
import { APISERVER, ETCD, OPENBAO, OPERATOR, PHASE, seedBounds } from "../../bench/cpu-report.js";

// A child that spends `seconds` of its own CPU (not wall time), says so, then waits for stdin to
// close. The tests ask /proc for 0.25 of its 0.3 s: /proc counts whole clock ticks.
const BURN = `const s=Number(process.argv[1]);const t=()=>{const u=process.cpuUsage();return (u.user+u.system)/1e6};
while(t()<s){}process.stdout.write("burnt\\n");process.stdin.resume();process.stdin.on("end",()=>process.exit(0));`;

describe("bench CPU ledger", () => {
  it("counts a forked child's CPU under its wrapper, while it runs", async () => {
    // sh forks node (it does not exec: a second command follows), as a wrapper may.
    const sh = spawn("sh", ["-c", `"${process.execPath}" -e '${BURN}' 0.3; true`], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const exited = once(sh, "exit");
    let out = "";
    sh.stdout!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    const deadline = Date.now() + 60_000;
    while (!out.includes("burnt")) {
      assert.ok(Date.now() < deadline, "the child did not burn its CPU within 60 s");
      await once(sh.stdout!, "data");
    }
    const live = treeCpuSeconds(sh.pid!);
    assert.ok(live >= 0.25, `live child counted: ${live} CPU-s`);
    sh.stdin!.end();
    await exited;
  });

  it("reads a reaped child's CPU from cutime/cstime", async () => {
    // The parent reaps the burner, then waits on its own stdin: the child's CPU is in its cutime.
    const parent = spawn(
      process.execPath,
      [
        "-e",
        `const {spawnSync}=require("node:child_process");spawnSync(process.execPath,["-e",${JSON.stringify(
          BURN.replace('process.stdin.resume();process.stdin.on("end",()=>process.exit(0));', ""),
        )},"0.3"],{stdio:"ignore"});process.stdout.write("reaped\\n");process.stdin.resume();process.stdin.on("end",()=>process.exit(0));`,
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const exited = once(parent, "exit");
    let out = "";
    parent.stdout!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    const deadline = Date.now() + 60_000;
    while (!out.includes("reaped")) {
      assert.ok(Date.now() < deadline, "the child was not reaped within 60 s");
      await once(parent.stdout!, "data");
    }
    const cpu = treeCpuSeconds(parent.pid!);
    parent.stdin!.end();
    await exited;
    assert.ok(cpu >= 0.25, `reaped child counted: ${cpu} CPU-s`);
  });

  it("bounds the seed by its processes' CPU over the cores, with and without the operator", () => {
    const phase = (name: string, wall: number, cpu: Record<string, number>, host = 0): PhaseCpu => ({
      phase: name,
      wall,
      cpu,
      host,
      loadavg: "",
    });
    const b = seedBounds([
      phase(PHASE.floorBefore, 10, { [OPENBAO]: 10, [SELF]: 4 }),
      phase(PHASE.seed, 40, { [OPERATOR]: 20, [OPENBAO]: 16, [APISERVER]: 30, [ETCD]: 4, [SELF]: 1 }, 80),
      phase(PHASE.floorAfter, 12, { [OPENBAO]: 14, [SELF]: 6 }),
      phase(PHASE.statusFloor, 15, { [APISERVER]: 24, [ETCD]: 3 }),
    ])!;
    assert.equal(b.all, 70 / cores);
    assert.equal(b.servers, 50 / cores);
    assert.equal(b.required, (12 + 27) / cores);
    assert.equal(b.seedCpu, 70);
    assert.equal(b.floorCpu, 17);
    assert.equal(b.hostBusy, 80 / (40 * cores));
  });
});
