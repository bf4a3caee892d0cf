import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseFaultArgs, parsePoints } from "../faults/args.js";
import { writesOf } from "../faults/lifecycle.js";
import type { RecordedWrite } from "../faults/write-proxy.js";

const writes: RecordedWrite[] = Array.from({ length: 10 }, (_, i) => ({
  seq: i + 1,
  backend: "kube",
  method: "PATCH",
  path: `/w/${i + 1}`,
  status: 200,
}));
const phases = [
  { name: "create", firstWrite: 1 },
  { name: "restore", firstWrite: 4 },
  { name: "delete", firstWrite: 8 },
];

describe("fault campaign: phases", () => {
  it("a phase's writes run from its mark to the next one; the last phase to the end", () => {
    assert.deepEqual(
      writesOf("restore", phases, writes).map((w) => w.seq),
      [4, 5, 6, 7],
    );
    assert.deepEqual(
      writesOf("delete", phases, writes).map((w) => w.seq),
      [8, 9, 10],
    );
  });

  it("a phase that was never marked has no writes", () => {
    assert.deepEqual(writesOf("scale", phases, writes), []);
  });

  it("a phase marked with no write before the next mark has none", () => {
    const empty = [
      ...phases.slice(0, 2),
      { name: "upgrade", firstWrite: 8 },
      { name: "delete", firstWrite: 8 },
    ];
    assert.deepEqual(writesOf("upgrade", empty, writes), []);
  });

  it("--phase and --skip are parsed; a phase that cannot be skipped is refused by name", () => {
    const a = parseFaultArgs(["--openbao", "--phase", "restore", "--skip", "upgrade", "--skip", "scale"], 1);
    assert.equal(a.phase, "restore");
    assert.deepEqual(a.skip, ["upgrade", "scale"]);
    assert.throws(
      () => parseFaultArgs(["--skip", "create"], 1),
      /--skip: must be one of backup, upgrade, restore, scale/,
    );
    assert.throws(() => parseFaultArgs(["--phase"], 1), /--phase: give a phase name/);
  });

  it("--points takes single points and ranges, sorted and each once; a bad list is refused by the flag's name", () => {
    assert.deepEqual(parsePoints("9,26-29,27"), [9, 26, 27, 28, 29]);
    assert.deepEqual(parseFaultArgs(["--points", "3"], 1).points, [3]);
    for (const bad of ["", "0", "5-3", "a", "1,,2", "2-"])
      assert.throws(() => parsePoints(bad), /--points: give crash points as N, N-M/, bad);
  });

  it("--bluegreen and --skip backup are parsed", () => {
    const a = parseFaultArgs(["--openbao", "--bluegreen", "--skip", "backup"], 1);
    assert.equal(a.blueGreen, true);
    assert.deepEqual(a.skip, ["backup"]);
    assert.equal(parseFaultArgs([], 1).blueGreen, false);
  });

  it("--scale-to N sets the scale phase's other size (1: scale in first); none keeps the default", () => {
    assert.equal(parseFaultArgs(["--openbao", "--scale-to", "1"], 1).scaleTo, 1);
    assert.equal(parseFaultArgs([], 1).scaleTo, undefined);
    for (const bad of ["0", "x", undefined])
      assert.throws(
        () => parseFaultArgs(["--scale-to", ...(bad === undefined ? [] : [bad])], 1),
        /--scale-to: must be a whole number of at least 1/,
      );
  });
});
