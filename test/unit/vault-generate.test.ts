import assert from "node:assert/strict";
import { describe, it } from "node:test";
import bcrypt from "bcryptjs";
import {
  agePublicOf,
  createGenerator,
  cryptoRandom,
  deterministicRandom,
  type RandomSource,
  randomAlphanumeric,
} from "../../src/targets/vault/generate.js";

describe("vault generate: random values", () => {
  const generator = createGenerator({ bcryptCost: 4 });

  it("makes alphanumeric strings of the asked length", () => {
    for (const length of [1, 24, 4096]) {
      const value = generator.random(length);
      assert.equal(value.length, length);
      assert.match(value, /^[A-Za-z0-9]+$/);
    }
  });

  it("uses every one of the 62 characters, none markedly more often", () => {
    const counts = new Map<string, number>();
    for (const char of randomAlphanumeric(cryptoRandom, 62_000))
      counts.set(char, (counts.get(char) ?? 0) + 1);
    assert.equal(counts.size, 62);
    // 1000 expected per character; a modulo bias would push the first eight near 1250.
    for (const [char, count] of counts) assert.ok(count > 800 && count < 1200, `${char}: ${count}`);
  });

  it("drops bytes that would bias the alphabet", () => {
    // 248..255 are rejected; 0 and 61 map to the first and last characters.
    const bytes = [248, 255, 0, 61, 62];
    let index = 0;
    const source: RandomSource = {
      bytes: (count) => Uint8Array.from({ length: count }, () => bytes[index++ % bytes.length]!),
    };
    assert.equal(randomAlphanumeric(source, 3), "A9A");
  });

  it("makes lowercase hex of an even length", () => {
    const value = generator.hex(64);
    assert.match(value, /^[0-9a-f]{64}$/);
    assert.throws(() => generator.hex(3), RangeError);
  });

  it("makes version 4 UUIDs", () => {
    for (let i = 0; i < 20; i++) {
      assert.match(generator.uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it("repeats itself exactly under the same deterministic seed", () => {
    const a = createGenerator({ random: deterministicRandom("seed"), bcryptCost: 4 });
    const b = createGenerator({ random: deterministicRandom("seed"), bcryptCost: 4 });
    const c = createGenerator({ random: deterministicRandom("other"), bcryptCost: 4 });
    const draw = (g: typeof a) => [g.random(30), g.hex(16), g.uuid()];
    const first = draw(a);
    assert.deepEqual(draw(b), first);
    assert.notDeepEqual(draw(c), first);
  });
});

describe("vault generate: age", () => {
  const generator = createGenerator({ bcryptCost: 4 });

  it("makes an X25519 pair whose halves belong together", async () => {
    const pair = await generator.agePair();
    assert.match(pair.secret, /^AGE-SECRET-KEY-1[0-9A-Z]+$/);
    assert.match(pair.public, /^age1[0-9a-z]+$/);
    assert.equal(await generator.agePublicOf(pair.secret), pair.public);
    const other = await generator.agePair();
    assert.notEqual(other.secret, pair.secret);
  });

  it("derives nothing from text that is not an X25519 identity", async () => {
    assert.equal(await agePublicOf("not a key"), undefined);
    assert.equal(await agePublicOf("AGE-SECRET-KEY-1QQQQ"), undefined);
  });

  it("takes an injected identity source", async () => {
    const fixed = await createGenerator().agePair();
    const g = createGenerator({ newAgeIdentity: async () => fixed.secret });
    assert.deepEqual(await g.agePair(), fixed);
  });
});

describe("vault generate: bcrypt", () => {
  it("hashes at the configured cost and checks matches", async () => {
    const generator = createGenerator({ bcryptCost: 5 });
    const hash = await generator.bcryptHash("s3cret");
    assert.equal(bcrypt.getRounds(hash), 5);
    assert.match(hash, /^\$2b\$05\$/);
    assert.equal(await generator.bcryptMatches("s3cret", hash), true);
    assert.equal(await generator.bcryptMatches("other", hash), false);
    // Asked again after a positive answer is remembered: the memory must not blur values.
    assert.equal(await generator.bcryptMatches("s3cret", hash), true);
    assert.equal(await generator.bcryptMatches("other", hash), false);
    assert.equal(await generator.bcryptMatches("s3cret", "not a hash"), false);
  });

  it("remembers verified and self-made hashes so a resync does not pay for bcrypt again", async (t) => {
    const compare = t.mock.method(bcrypt, "compare");
    const generator = createGenerator({ bcryptCost: 4 });
    const made = await generator.bcryptHash("mine");
    assert.equal(await generator.bcryptMatches("mine", made), true);
    assert.equal(compare.mock.callCount(), 0);
    const foreign = bcrypt.hashSync("theirs", 4);
    assert.equal(await generator.bcryptMatches("theirs", foreign), true);
    assert.equal(await generator.bcryptMatches("theirs", foreign), true);
    assert.equal(compare.mock.callCount(), 1);
    assert.equal(await generator.bcryptMatches("changed", foreign), false);
    assert.equal(compare.mock.callCount(), 2);
    const forgetful = createGenerator({ bcryptCost: 4, bcryptMatchMemory: 0 });
    await forgetful.bcryptMatches("theirs", foreign);
    await forgetful.bcryptMatches("theirs", foreign);
    assert.equal(compare.mock.callCount(), 4);
  });

  it("defaults to cost 10", async () => {
    const hash = await createGenerator().bcryptHash("x");
    assert.equal(bcrypt.getRounds(hash), 10);
  });

  it("draws a fresh salt from the random source for each hash", async () => {
    const generator = createGenerator({ bcryptCost: 4 });
    assert.notEqual(await generator.bcryptHash("same"), await generator.bcryptHash("same"));
    const a = await createGenerator({ random: deterministicRandom("s"), bcryptCost: 4 }).bcryptHash("v");
    const b = await createGenerator({ random: deterministicRandom("s"), bcryptCost: 4 }).bcryptHash("v");
    assert.equal(a, b);
  });

  it("refuses a cost outside 4 to 31", () => {
    assert.throws(() => createGenerator({ bcryptCost: 3 }), /4 to 31/);
    assert.throws(() => createGenerator({ bcryptCost: 32 }), /4 to 31/);
  });
});
