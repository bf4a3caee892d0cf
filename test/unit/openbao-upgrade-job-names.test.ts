import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import {
  blueGreenSnapshotJobName,
  hashedUpgradeJobName,
  MAX_JOB_NAME,
  rollingSnapshotJobName,
  validationHookJobName,
} from "../../src/targets/openbao/adminops/upgrade/job-names.js";

// Upstream's names for the Jobs an upgrade runs (dc-tec/openbao-operator: internal/upgrade/job.go,
// bluegreen/job.go, bluegreen/hooks.go, rolling/snapshot_job.go). The expected hashes are computed
// here from the payload spelled out by hand, so a change of field order or separator fails.

const hex10 = (payload: string) => createHash("sha256").update(payload).digest("hex").slice(0, 10);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe("upgrade Job names (upstream's)", () => {
  it("upgrade rule: <base>-<10 hex of sha256(payload)>, lower-cased, '_' as '-'", () => {
    assert.equal(
      hashedUpgradeJobName("upgrade-Bao-Some_Action", "p"),
      `upgrade-bao-some-action-${hex10("p")}`,
    );
    // The hash is over the payload as given, not the cleaned base.
    assert.notEqual(hashedUpgradeJobName("upgrade-a", "X"), hashedUpgradeJobName("upgrade-a", "x"));
  });

  it("upgrade rule: a long base is cut to fit 63 characters, no dash before the hash's own", () => {
    const base = `upgrade-${"c".repeat(51)}-preupgrade-snapshot`;
    const n = hashedUpgradeJobName(base, "p");
    assert.equal(n.length, MAX_JOB_NAME);
    assert.equal(n, `${base.slice(0, 52)}-${hex10("p")}`);
    // A cut that ends on a dash drops it: 52 characters of this base end in "-".
    const dashy = hashedUpgradeJobName(`${"a".repeat(51)}-bbbbbbbbbbbbbbbbb`, "p");
    assert.equal(dashy, `${"a".repeat(51)}-${hex10("p")}`);
    assert.match(dashy, DNS_LABEL);
  });

  it("blue-green snapshot: upgrade-<c>-preupgrade-snapshot-<hash of c|pre-upgrade-snapshot|current|version|image|replicas|blue>", () => {
    const inputs = {
      cluster: "bao",
      currentVersion: "2.6.2",
      version: "2.7.2",
      image: "",
      replicas: 3,
      blueRevision: "",
    };
    const n = blueGreenSnapshotJobName(inputs);
    assert.equal(n, `upgrade-bao-preupgrade-snapshot-${hex10("bao|pre-upgrade-snapshot|2.6.2|2.7.2||3|")}`);
    // Each input counts: another blue revision, image or replica count is another Job.
    for (const over of [{ blueRevision: "2-6-2-ab12c" }, { image: "openbao/openbao:2.7.2" }, { replicas: 5 }])
      assert.notEqual(blueGreenSnapshotJobName({ ...inputs, ...over }), n);
    const long = blueGreenSnapshotJobName({ ...inputs, cluster: "x".repeat(60) });
    assert.ok(long.length <= MAX_JOB_NAME, long);
    assert.match(long, DNS_LABEL);
  });

  it("rolling snapshot: pre-upgrade-backup-<c>-gen<generation>, bounded, distinct for long names", () => {
    assert.equal(rollingSnapshotJobName("bao", 7), "pre-upgrade-backup-bao-gen7");
    assert.notEqual(rollingSnapshotJobName("bao", 7), rollingSnapshotJobName("bao", 8));
    const a = rollingSnapshotJobName(`${"x".repeat(50)}a`, 12);
    const b = rollingSnapshotJobName(`${"x".repeat(50)}b`, 12);
    assert.ok(a.length <= MAX_JOB_NAME && b.length <= MAX_JOB_NAME, `${a} ${b}`);
    assert.notEqual(a, b);
    assert.match(a, /^pre-upgrade-backup-x+-[0-9a-f]{6}-gen12$/);
    // The longest cluster name that fits keeps upstream's exact form.
    const fits = "y".repeat(MAX_JOB_NAME - "pre-upgrade-backup--gen12".length);
    assert.equal(rollingSnapshotJobName(fits, 12), `pre-upgrade-backup-${fits}-gen12`);
  });

  it("pre-promotion hook: <c>-validation-hook, the same for every attempt, bounded", () => {
    assert.equal(validationHookJobName("gbao"), "gbao-validation-hook");
    const long = validationHookJobName("z".repeat(63));
    assert.ok(long.length <= MAX_JOB_NAME, long);
    assert.match(long, /^z+-[0-9a-f]{6}-validation-hook$/);
  });
});
