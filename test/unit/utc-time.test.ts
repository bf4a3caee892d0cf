import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { httpDate, isoMicros, isoSeconds, isoTime } from "../../src/runtime/utc-time.js";

// Times across the years a timestamp can carry, with the edges of months, leap days and
// milliseconds below 10 and 100, compared with the Date methods they replace.
function times(): number[] {
  const out = [
    0,
    -1,
    951_782_400_000,
    1_709_164_800_999,
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(0, 0, 1),
  ];
  out.push(Date.UTC(1, 0, 1, 0, 0, 0, 5), Date.UTC(99, 0, 1, 0, 0, 0, 50), Date.UTC(999, 5, 30, 12, 0, 0, 7));
  let seed = 7;
  for (let i = 0; i < 20_000; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    out.push(Math.floor((seed / 2 ** 31) * 253_402_300_799_999));
  }
  return out;
}

describe("UTC timestamps without Date's string methods", () => {
  it("give what toISOString and toUTCString give, for a number and for a Date", () => {
    for (const t of times()) {
      const d = new Date(t);
      assert.equal(isoTime(t), d.toISOString(), String(t));
      assert.equal(isoTime(d), d.toISOString(), String(t));
      assert.equal(isoSeconds(d), d.toISOString().replace(/\.\d+Z$/, "Z"), String(t));
      assert.equal(isoMicros(d), d.toISOString().replace("Z", "000Z"), String(t));
      assert.equal(httpDate(t), d.toUTCString(), String(t));
    }
  });

  it("fall back to the Date methods outside years 0–9999, and throw what they throw on an invalid time", () => {
    const far = Date.UTC(12_345, 0, 2, 3, 4, 5, 6);
    assert.equal(isoTime(far), new Date(far).toISOString());
    assert.equal(isoSeconds(far), "+012345-01-02T03:04:05Z");
    assert.equal(httpDate(far), new Date(far).toUTCString());
    const before = Date.UTC(-5, 0, 1);
    assert.equal(isoTime(before), new Date(before).toISOString());
    assert.throws(() => isoTime(Number.NaN), RangeError);
    assert.throws(() => isoSeconds(new Date("not a date")), RangeError);
    assert.throws(() => httpDate(Number.NaN), RangeError);
  });
});
