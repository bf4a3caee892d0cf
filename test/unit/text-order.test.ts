import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { collate, collateNumeric } from "../../src/runtime/text-order.js";

// Random strings over the characters collate handles (and a few it hands to localeCompare), with
// the pairs that tell code-unit order from ICU's: case, "_" against letters and digits, prefixes.
function pairs(alphabet: string, n: number): [string, string][] {
  let seed = 11;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const word = () =>
    Array.from(
      { length: 1 + Math.floor(next() * 6) },
      () => alphabet[Math.floor(next() * alphabet.length)],
    ).join("");
  const out: [string, string][] = [];
  for (let i = 0; i < n; i++) out.push([word(), word()]);
  return out;
}

const sign = (n: number) => Math.sign(n);

describe("collate: localeCompare's order without ICU", () => {
  it("orders ASCII names, punctuation and case as localeCompare does", () => {
    for (const [a, b] of pairs("aAbByZz0129_-:./", 50_000))
      assert.equal(collate(a, b), sign(a.localeCompare(b)), `${a} vs ${b}`);
    for (const [a, b] of [
      ["SOFTHSM2_CONF", "SOFTHSM_PIN"],
      ["a", "B"],
      ["a", "A"],
      ["pod-10", "pod-9"],
      ["", "x"],
    ] as const)
      assert.equal(collate(a, b), sign(a.localeCompare(b)), `${a} vs ${b}`);
  });

  it("hands other strings to localeCompare", () => {
    for (const [a, b] of pairs("aeé ü+Z_1", 5_000))
      assert.equal(collate(a, b), sign(a.localeCompare(b)), `${a} vs ${b}`);
  });

  it("keeps the order of every seal variable the StatefulSet lists", () => {
    const names = [
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_SESSION_TOKEN",
      "AZURE_AD_RESOURCE",
      "AZURE_CLIENT_ID",
      "AZURE_CLIENT_SECRET",
      "AZURE_ENVIRONMENT",
      "AZURE_TENANT_ID",
      "BAO_HSM_PIN",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "LD_LIBRARY_PATH",
      "VAULT_TOKEN",
    ];
    assert.deepEqual(
      [...names].sort(collate),
      [...names].sort((a, b) => a.localeCompare(b)),
    );
  });
});

describe("collateNumeric: localeCompare's numeric order without ICU", () => {
  it("orders runs of digits by value, the rest as collate", () => {
    for (const [a, b] of pairs("aB-_1029", 50_000))
      assert.equal(collateNumeric(a, b), sign(a.localeCompare(b, "en", { numeric: true })), `${a} vs ${b}`);
    const pods = ["bao-10", "bao-2", "bao-1", "bao-0", "bao-11", "bao-100"];
    assert.deepEqual([...pods].sort(collateNumeric), [
      "bao-0",
      "bao-1",
      "bao-2",
      "bao-10",
      "bao-11",
      "bao-100",
    ]);
  });
});
