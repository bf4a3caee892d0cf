import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ChartPullError, crc24, dearmor } from "../../src/targets/gitlab/charts/index.js";
import { packetTags } from "../../src/targets/gitlab/charts/keyring.js";

// DYNAMIC_CHART_KEYRING's decoding: armored blocks to the binary keyring helm's verifier reads, and
// the packet walk that tells public keys from secret ones. Real gpg keys are in gitlab-charts.test.ts.

/** An armored block of `data`, as gpg writes one (a header line, a blank line, the body, the checksum). */
function armor(data: Buffer, kind = "PUBLIC KEY BLOCK", checksum = crc24(data)): string {
  const crc = Buffer.alloc(3);
  crc.writeUIntBE(checksum, 0, 3);
  const body = data.toString("base64").replace(/(.{64})/g, "$1\n");
  return `-----BEGIN PGP ${kind}-----\nComment: test\n\n${body}\n=${crc.toString("base64")}\n-----END PGP ${kind}-----\n`;
}

/** Old-format packet (tag, one-byte length) and new-format packet (tag, one-byte length). */
const oldPacket = (tag: number, body: number[]) => Buffer.from([0x80 | (tag << 2), body.length, ...body]);
const newPacket = (tag: number, body: number[]) => Buffer.from([0xc0 | tag, body.length, ...body]);

describe("gitlab chart keyring decoding", () => {
  it("CRC-24 starts from OpenPGP's initial value", () => {
    assert.equal(crc24(Buffer.alloc(0)), 0xb704ce);
    assert.notEqual(crc24(Buffer.from("a")), crc24(Buffer.from("b")));
  });

  it("decodes several armored blocks in order, headers and checksums read", () => {
    const a = Buffer.concat([oldPacket(6, [1, 2, 3]), newPacket(13, [4])]);
    const b = newPacket(6, [9, 9]);
    const blocks = dearmor(`junk before\n${armor(a)}\n${armor(b)}`, "ring");
    assert.deepEqual(blocks, [a, b]);
    assert.deepEqual(packetTags(Buffer.concat(blocks), "ring"), [6, 13, 6]);
  });

  it("refuses a damaged checksum, a block without its end, and a private key block, naming the block", () => {
    const data = oldPacket(6, [1, 2, 3]);
    const refused = (text: string, reason: RegExp) =>
      assert.throws(
        () => dearmor(text, "DYNAMIC_CHART_KEYRING k.asc"),
        (e: unknown) => e instanceof ChartPullError && reason.test(e.message),
      );
    refused(armor(data, "PUBLIC KEY BLOCK", crc24(data) ^ 1), /k\.asc: block 1 does not match its checksum/);
    refused(armor(data).replace(/-----END[^\n]*\n/, ""), /block 1 has no END line/);
    refused(`${armor(data)}${armor(data, "PRIVATE KEY BLOCK")}`, /block 2 is a PGP private key block/);
    refused(armor(data).replace("\n=", "\n!!!!\n="), /block 1 is not valid base64/);
  });

  it("walks old- and new-format packets, and refuses one that runs past the end", () => {
    assert.deepEqual(packetTags(Buffer.concat([oldPacket(5, [1]), newPacket(7, [2])]), "r"), [5, 7]);
    assert.throws(() => packetTags(Buffer.from([0x98, 10, 1]), "r"), /r: truncated/);
    assert.throws(() => packetTags(Buffer.from("not a key"), "r"), /r: not an OpenPGP keyring/);
  });
});
