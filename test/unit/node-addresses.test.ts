import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_NODES, nodeAddresses } from "../../src/testenv/node/addresses.js";
import { claimOrder } from "../../src/testenv/node/registry.js";

describe("node addresses", () => {
  it("gives every node number disjoint ranges and its own host names", () => {
    const seen = new Set<string>();
    for (let i = 0; i < MAX_NODES; i++) {
      const a = nodeAddresses(i);
      for (const value of [
        a.hostIp,
        a.nodeIp,
        a.podCidr,
        a.serviceCidr,
        a.hostVeth,
        a.nodeVeth,
        a.cgroupRoot,
      ]) {
        assert.ok(!seen.has(value), `${value} is used twice`);
        seen.add(value);
      }
      // Interface names are limited to 15 characters by the kernel.
      assert.ok(a.hostVeth.length <= 15 && a.nodeVeth.length <= 15);
      // The /30: network .4i, host .4i+1, node .4i+2, broadcast .4i+3.
      assert.equal(Number(a.hostIp.split(".")[3]) % 4, 1);
      assert.equal(Number(a.nodeIp.split(".")[3]), Number(a.hostIp.split(".")[3]) + 1);
      assert.ok(a.kubernetesServiceIp.startsWith(a.serviceCidr.replace(/0\/24$/, "")));
      assert.ok(a.dnsServiceIp.startsWith(a.serviceCidr.replace(/0\/24$/, "")));
    }
  });

  it("refuses a number outside the range, naming it", () => {
    assert.throws(() => nodeAddresses(MAX_NODES), /node index must be an integer in 0\.\.63, got 64/);
    assert.throws(() => nodeAddresses(-1), /got -1/);
    assert.throws(() => nodeAddresses(1.5), /got 1.5/);
  });
});

describe("node numbers: the order they are claimed in", () => {
  it("tries the lowest numbers first and one released a moment ago last", () => {
    assert.deepEqual(
      claimOrder(5, () => false),
      [0, 1, 2, 3, 4],
    );
    assert.deepEqual(
      claimOrder(5, (i) => i === 0 || i === 3),
      [1, 2, 4, 0, 3],
    );
    assert.deepEqual(
      claimOrder(2, () => true),
      [0, 1],
      "all resting: still every number, lowest first",
    );
  });
});
