import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as age from "age-encryption";
import { generateX25519Identity, identityToRecipient } from "../../src/targets/vault/age-x25519.js";

// The age-encryption package is the reference here: the pairs made with node's X25519 must be
// the ones it makes and reads, down to encrypting with one half and decrypting with the other.
describe("vault age X25519 pairs with node's crypto", () => {
  it("derives the recipient age-encryption derives, for its identities and for ours", async () => {
    for (let i = 0; i < 20; i++) {
      const theirs = await age.generateX25519Identity();
      assert.equal(identityToRecipient(theirs), await age.identityToRecipient(theirs));
      const ours = generateX25519Identity();
      assert.match(ours, /^AGE-SECRET-KEY-1[0-9A-Z]{58}$/);
      assert.equal(identityToRecipient(ours), await age.identityToRecipient(ours));
    }
  });

  it("makes a pair age-encryption encrypts to and decrypts with", async () => {
    const secret = generateX25519Identity();
    const e = new age.Encrypter();
    e.addRecipient(identityToRecipient(secret));
    const sealed = await e.encrypt("a value");
    const d = new age.Decrypter();
    d.addIdentity(secret);
    assert.equal(await d.decrypt(sealed, "text"), "a value");
  });

  it("refuses what is not an X25519 identity: another prefix, a bad checksum, mixed case", () => {
    const secret = generateX25519Identity();
    const last = secret.at(-1) === "Q" ? "P" : "Q";
    assert.throws(() => identityToRecipient(identityToRecipient(secret)), /not an age X25519 identity/);
    assert.throws(() => identityToRecipient(`${secret.slice(0, -1)}${last}`), /bad checksum/);
    assert.throws(
      () => identityToRecipient(`${secret.slice(0, 20)}${secret.slice(20).toLowerCase()}`),
      /mixed case/,
    );
    assert.throws(() => identityToRecipient("AGE-SECRET-KEY-1QQQQ"));
  });
});
