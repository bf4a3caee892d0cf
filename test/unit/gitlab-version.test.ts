import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GitLabVersion } from "../../src/apis/gitlabcore.js";
import {
  keptTarget,
  planUpgradePath,
  type Resolution,
  resolveTargetVersion,
  tracksRepository,
} from "../../src/targets/gitlab/version/index.js";

// A chart list with the shapes of a real index: several minors per major, patches out of order,
// a pre-release, a "v" prefix and junk an index might carry.
const INDEX = [
  "9.9.0",
  "9.10.0",
  "9.10.3",
  "9.11.0",
  "9.11.2",
  "10.0.0",
  "10.0.1",
  "10.1.0",
  "10.2.1",
  "10.2.0",
  "10.3.0",
  "10.3.4",
  "v10.4.0",
  "10.4.1",
  "10.5.0-rc1",
  "11.0.0",
  "not-a-version",
  "",
];

const resolve = (spec: GitLabVersion, deployed?: string, versionRefValue?: string): Resolution =>
  resolveTargetVersion({ spec, available: INDEX, deployed, versionRefValue });

const version = (r: Resolution): string => {
  assert.ok(r.ok, `expected a version, got ${JSON.stringify(r)}`);
  return r.version;
};

const failure = (r: Resolution) => {
  assert.ok(!r.ok, `expected a failure, got ${JSON.stringify(r)}`);
  return r;
};

describe("gitlab version: Static", () => {
  it("takes the literal, canonical, even when no list has it", () => {
    assert.equal(version(resolve({ type: "Static", version: "9.4.1" })), "9.4.1");
    assert.equal(version(resolve({ type: "Static", version: "v10.3.4" })), "10.3.4");
    assert.equal(version(resolve({ type: "Static", version: "10.5.0-rc1" })), "10.5.0-rc1");
  });

  it("refuses a literal below the deployed version, naming the field and the reason", () => {
    const r = failure(resolve({ type: "Static", version: "10.2.1" }, "10.3.0"));
    assert.equal(r.reason, "DowngradeRefused");
    assert.equal(r.field, "spec.version.version");
    assert.match(r.error, /10\.2\.1 is below the deployed chart version 10\.3\.0/);
    // The same version, and a newer one, are fine.
    assert.equal(version(resolve({ type: "Static", version: "10.3.0" }, "10.3.0")), "10.3.0");
    assert.equal(version(resolve({ type: "Static", version: "11.0.0" }, "10.3.0")), "11.0.0");
  });

  it("reads versionRef's value trimmed, and refuses a missing, empty or malformed one", () => {
    const spec: GitLabVersion = {
      type: "Static",
      versionRef: { kind: "ConfigMap", name: "platform-versions", key: "chartVersion" },
    };
    assert.equal(version(resolve(spec, undefined, "  10.3.4\n")), "10.3.4");
    const missing = failure(resolve(spec));
    assert.equal(missing.reason, "VersionUnresolved");
    assert.equal(missing.field, "spec.version.versionRef");
    assert.match(missing.error, /ConfigMap platform-versions key chartVersion does not exist/);
    assert.match(failure(resolve(spec, undefined, "   ")).error, /is empty/);
    const bad = failure(resolve(spec, undefined, `latest\u0000${"x".repeat(500)}`));
    assert.match(bad.error, /not a semantic version/);
    assert.ok(bad.error.length < 200, "a hostile value is not echoed whole");
    assert.ok(!bad.error.includes("\u0000"));
    // It behaves as a literal: below the deployed one is refused.
    assert.equal(failure(resolve(spec, "11.0.0", "10.4.1")).reason, "DowngradeRefused");
  });

  it("refuses both or neither of version and versionRef (the CRD does too)", () => {
    const both = {
      type: "Static",
      version: "1.0.0",
      versionRef: { name: "a", key: "b" },
    } as GitLabVersion;
    assert.equal(failure(resolve(both)).field, "spec.version");
    assert.equal(failure(resolve({ type: "Static" })).field, "spec.version");
    assert.equal(failure(resolve({ type: "Static", version: "ten" })).field, "spec.version.version");
  });

  it("follows no repository; every other type does", () => {
    assert.equal(tracksRepository({ type: "Static", version: "1.0.0" }), false);
    for (const type of ["Patch", "Latest", "Previous", "OldestSupported"] as const)
      assert.equal(tracksRepository({ type }), true);
  });
});

describe("gitlab version: tracking types", () => {
  it("Patch takes the newest patch of the minor, ignoring order, prefixes and pre-releases", () => {
    assert.equal(version(resolve({ type: "Patch", minor: "10.2" })), "10.2.1");
    assert.equal(version(resolve({ type: "Patch", minor: "10.4" })), "10.4.1");
    assert.equal(version(resolve({ type: "Patch", minor: "9.11" })), "9.11.2");
  });

  it("Patch of a minor the list lacks fails naming spec.version.minor", () => {
    const r = failure(resolve({ type: "Patch", minor: "10.5" }));
    assert.equal(r.reason, "VersionUnresolved");
    assert.equal(r.field, "spec.version.minor");
    assert.match(r.error, /no release of minor 10\.5/);
  });

  it("an instance ahead of its tracked minor keeps its own minor's patches", () => {
    assert.equal(version(resolve({ type: "Patch", minor: "10.2" }, "10.3.0")), "10.3.4");
    assert.equal(version(resolve({ type: "Previous", major: 10 }, "10.4.0")), "10.4.1");
    assert.equal(version(resolve({ type: "OldestSupported", major: 9 }, "10.0.0")), "10.0.1");
    const r = resolve({ type: "Patch", minor: "10.2" }, "10.3.0");
    assert.ok(r.ok);
    assert.match(r.detail, /ahead of 10\.2/);
  });

  it("never moves back within a minor when the list trails the deployed patch", () => {
    const r = failure(resolve({ type: "Patch", minor: "10.3" }, "10.3.9"));
    assert.equal(r.reason, "DowngradeRefused");
  });

  it("Latest takes the newest release, or the newest of a major", () => {
    assert.equal(version(resolve({ type: "Latest" })), "11.0.0");
    assert.equal(version(resolve({ type: "Latest", major: 10 })), "10.4.1");
    assert.equal(version(resolve({ type: "Latest", major: 9 })), "9.11.2");
    const none = failure(resolve({ type: "Latest", major: 12 }));
    assert.equal(none.field, "spec.version.major");
  });

  it("Previous and OldestSupported count minors down across majors, the next major's first counting", () => {
    // Major 10's window is 11.0, 10.4, 10.3, ...: 11.0 counts, so Previous is 10.4 and the oldest
    // supported (three minors: 11.0, 10.4, 10.3) is 10.3.
    assert.equal(version(resolve({ type: "Previous", major: 10 })), "10.4.1");
    assert.equal(version(resolve({ type: "OldestSupported", major: 10 })), "10.3.4");
    // Major 9 has no 10.x counted but 10.0: Previous 9.11, OldestSupported 9.10.
    assert.equal(version(resolve({ type: "Previous", major: 9 })), "9.11.2");
    assert.equal(version(resolve({ type: "OldestSupported", major: 9 })), "9.10.3");
  });

  it("a major with too few minors resolves to its first one", () => {
    assert.equal(version(resolve({ type: "Previous", major: 11 })), "11.0.0");
    assert.equal(version(resolve({ type: "OldestSupported", major: 11 })), "11.0.0");
    const two = ["12.0.0", "12.1.0", "12.1.1"];
    const r = resolveTargetVersion({ spec: { type: "OldestSupported", major: 12 }, available: two });
    assert.equal(version(r), "12.0.0");
  });

  it("without a major, counts across every major", () => {
    assert.equal(version(resolve({ type: "Previous" })), "10.4.1");
    assert.equal(version(resolve({ type: "OldestSupported" })), "10.3.4");
  });

  it("an empty or junk list fails with VersionUnresolved naming the source", () => {
    const r = resolveTargetVersion({
      spec: { type: "Latest" },
      available: ["junk", "1.0.0-beta"],
      sourceName: "the chart repository",
    });
    assert.ok(!r.ok);
    assert.equal(r.reason, "VersionUnresolved");
    assert.match(r.error, /the chart repository list no release/);
  });
});

describe("gitlab version: upgrade path", () => {
  it("steps one minor at a time through each minor's newest patch, ending on the target", () => {
    assert.deepEqual(planUpgradePath("10.1.0", "10.4.0", INDEX), {
      ok: true,
      steps: ["10.2.1", "10.3.4", "10.4.0"],
    });
  });

  it("crosses a major through the newest minor of the old one", () => {
    assert.deepEqual(planUpgradePath("9.10.0", "10.1.0", INDEX), {
      ok: true,
      steps: ["9.11.2", "10.0.1", "10.1.0"],
    });
  });

  it("a patch or the next minor is one step; the same version none", () => {
    assert.deepEqual(planUpgradePath("10.3.0", "10.3.4", INDEX), { ok: true, steps: ["10.3.4"] });
    assert.deepEqual(planUpgradePath("10.3.4", "10.4.1", INDEX), { ok: true, steps: ["10.4.1"] });
    assert.deepEqual(planUpgradePath("10.3.4", "v10.3.4", INDEX), { ok: true, steps: [] });
  });

  it("names every missing intermediate minor", () => {
    const r = planUpgradePath("10.0.0", "10.4.1", ["10.0.0", "10.2.0", "10.4.1"]);
    assert.ok(!r.ok);
    assert.equal(r.reason, "MissingIntermediateChart");
    assert.deepEqual(r.missing, ["10.1", "10.3"]);
    assert.match(r.error, /10\.1, 10\.3/);
  });

  it("a crossed major with no chart at all is missing too", () => {
    const r = planUpgradePath("9.11.0", "11.0.0", ["9.11.0", "11.0.0"]);
    assert.ok(!r.ok);
    assert.deepEqual(r.missing, ["10.x"]);
  });

  it("a target no source lists is VersionUnresolved naming it, not a missing intermediate chart", () => {
    const r = planUpgradePath("8.3.0", "12.0.0", ["8.3.0", "9.0.0", "9.9.1", "9.10.0"]);
    assert.ok(!r.ok);
    assert.equal(r.reason, "VersionUnresolved");
    assert.match(r.error, /12\.0\.0/);
    assert.deepEqual(r.missing, []);
  });

  it("lists missing minors in numeric order, never text order", () => {
    const r = planUpgradePath("8.3.0", "11.0.0", ["8.3.0", "9.9.1", "9.10.0", "11.0.0"]);
    assert.ok(!r.ok);
    assert.equal(r.reason, "MissingIntermediateChart");
    assert.deepEqual(r.missing, ["9.0", "9.1", "9.2", "9.3", "9.4", "9.5", "9.6", "9.7", "9.8", "10.x"]);
    assert.match(r.error, /minors 9\.0, 9\.1, .*9\.8, 10\.x between 8\.3\.0 and 11\.0\.0/);
  });

  it("refuses a downgrade and malformed versions", () => {
    const down = planUpgradePath("10.3.0", "10.2.1", INDEX);
    assert.ok(!down.ok);
    assert.equal(down.reason, "DowngradeRefused");
    const bad = planUpgradePath("10.3.0", "eleven", INDEX);
    assert.ok(!bad.ok);
    assert.equal(bad.reason, "VersionUnresolved");
  });

  it("refuses a hostile span quickly instead of building millions of steps", () => {
    const wide = planUpgradePath("0.0.0", "0.999999999.0", INDEX);
    const far = planUpgradePath("0.0.0", "999999999.0.0", INDEX);
    assert.ok(!wide.ok && !far.ok);
    assert.match(wide.error, /more than 500 minor steps/);
  });
});

describe("gitlab version: unattended upgrades (issue 44)", () => {
  it("without a major, the count runs across majors to install, then stays on the major the instance runs", () => {
    // Install: newest 11.0, previous 10.4, oldest supported 10.3.
    assert.equal(version(resolve({ type: "Latest" })), "11.0.0");
    assert.equal(version(resolve({ type: "Previous" })), "10.4.1");
    assert.equal(version(resolve({ type: "OldestSupported" })), "10.3.4");
    // Deployed on 9.x: the types count within major 9 (plus the next major's first minor).
    assert.equal(version(resolve({ type: "Latest" }, "9.10.3")), "9.11.2");
    assert.equal(version(resolve({ type: "Previous" }, "9.10.3")), "9.11.2");
    assert.equal(version(resolve({ type: "OldestSupported" }, "9.10.3")), "9.10.3");
    // The administrator sets the major: the instance may leave its own.
    assert.equal(version(resolve({ type: "Latest", major: 10 }, "9.11.2")), "10.4.1");
  });

  it("an upgrade in progress keeps its target, except on Static; a completed one takes the new selection", () => {
    const t = (type: GitLabVersion["type"], deployed: string | undefined, recorded: string | undefined) =>
      keptTarget({ type, selected: "10.4.1", deployed, recorded });
    assert.equal(t("Latest", "10.2.1", "10.3.4"), "10.3.4", "in progress: kept");
    assert.equal(t("Patch", "10.3.0", "10.3.4"), "10.3.4");
    assert.equal(t("Static", "10.2.1", "10.3.4"), "10.4.1", "Static takes its version at once");
    assert.equal(t("Latest", "10.3.4", "10.3.4"), "10.4.1", "completed: the new selection");
    assert.equal(t("Latest", undefined, "10.3.4"), "10.4.1", "nothing deployed: no upgrade in progress");
    assert.equal(t("Latest", "10.2.1", undefined), "10.4.1");
  });
});
