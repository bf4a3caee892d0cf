import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import semver from "semver";
import type { GitLabVersion } from "../../src/apis/gitlabcore.js";
import { planUpgradePath, resolveTargetVersion } from "../../src/targets/gitlab/version/index.js";

// Properties over random chart lists: resolution never moves an instance back, never throws, and
// stays within what its type selects; an upgrade path climbs one minor at a time to its target.

const version = fc
  .tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 5 }))
  .map(([a, b, c]) => `${a}.${b}.${c}`);
// Lists as an index may carry them: versions, prefixes, pre-releases and junk.
const listEntry = fc.oneof(
  { weight: 8, arbitrary: version },
  { weight: 1, arbitrary: version.map((v) => `v${v}`) },
  { weight: 1, arbitrary: version.map((v) => `${v}-rc1`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);
const list = fc.array(listEntry, { maxLength: 30 });
const versionSpec: fc.Arbitrary<GitLabVersion> = fc.oneof(
  version.map((v) => ({ type: "Static" as const, version: v })),
  fc
    .tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 6 }))
    .map(([a, b]) => ({ type: "Patch" as const, minor: `${a}.${b}` })),
  fc
    .option(fc.integer({ min: 0, max: 4 }), { nil: undefined })
    .map((major) => (major === undefined ? { type: "Latest" as const } : { type: "Latest" as const, major })),
  fc.integer({ min: 0, max: 4 }).map((major) => ({ type: "Previous" as const, major })),
  fc.integer({ min: 0, max: 4 }).map((major) => ({ type: "OldestSupported" as const, major })),
);

const released = (l: string[]) =>
  l.map((v) => semver.valid(v.trim())).filter((v): v is string => !!v && semver.prerelease(v) === null);

describe("gitlab version: properties", () => {
  it("resolution never throws, never goes below the deployed version, and picks from the list", () => {
    fc.assert(
      fc.property(versionSpec, list, fc.option(version, { nil: undefined }), (spec, available, deployed) => {
        const r = resolveTargetVersion({ spec, available, deployed });
        if (!r.ok) {
          assert.ok(r.field.startsWith("spec.version"), r.field);
          // A deployed version from the list is never refused by a tracking type: an instance ahead
          // of what its type selects keeps its own minor, whose newest patch is at least the deployed.
          if (spec.type !== "Static" && deployed && released(available).includes(deployed))
            assert.notEqual(r.reason, "DowngradeRefused", r.error);
          assert.ok(r.reason === "VersionUnresolved" || r.reason === "DowngradeRefused");
          return;
        }
        if (deployed) assert.ok(semver.gte(r.version, deployed), `${r.version} < ${deployed}`);
        if (spec.type !== "Static") {
          assert.ok(released(available).includes(r.version), `${r.version} is not in the list`);
          // The newest patch of its minor in the list.
          const sameMinor = released(available).filter(
            (v) => semver.major(v) === semver.major(r.version) && semver.minor(v) === semver.minor(r.version),
          );
          assert.equal(r.version, sameMinor.sort(semver.compare).at(-1));
        }
        if (spec.type === "Patch" && !deployed) assert.ok(r.version.startsWith(`${spec.minor}.`));
        if ((spec.type === "Previous" || spec.type === "OldestSupported") && !deployed)
          assert.equal(semver.major(r.version), spec.major, "stays within its major");
        if (spec.type === "Latest" && spec.major !== undefined && !deployed)
          assert.equal(semver.major(r.version), spec.major);
      }),
      { numRuns: 2000 },
    );
  });

  it("an upgrade path climbs one minor at a time, through newest patches, to the target", () => {
    fc.assert(
      fc.property(version, version, list, (from, to, available) => {
        const p = planUpgradePath(from, to, available);
        if (!p.ok) {
          if (p.reason === "MissingIntermediateChart") assert.ok(p.missing.length > 0);
          else if (p.reason === "VersionUnresolved")
            assert.ok(!available.some((v) => semver.valid(v.trim()) === to), `${to} is listed`);
          else assert.ok(semver.lt(to, from));
          return;
        }
        if (from === to) return assert.deepEqual(p.steps, []);
        assert.equal(p.steps.at(-1), to);
        let prev = from;
        const list = released(available);
        for (const step of p.steps) {
          assert.ok(semver.gt(step, prev), `${step} after ${prev}`);
          const [pm, pn, sm, sn] = [
            semver.major(prev),
            semver.minor(prev),
            semver.major(step),
            semver.minor(step),
          ];
          // Same major: the next minor (or a patch of the same one); next major: from its newest minor.
          if (sm === pm) assert.ok(sn - pn <= 1, `${prev} → ${step} skips a minor`);
          else {
            assert.equal(sn, 0, `${prev} → ${step} enters a major past its first minor`);
            const newestOfPrev = list.filter((v) => semver.major(v) === pm).map((v) => semver.minor(v));
            assert.ok(
              newestOfPrev.every((m) => m <= pn),
              `${prev} leaves major ${pm} before its newest minor`,
            );
          }
          if (step !== to) {
            const sameMinor = list.filter((v) => semver.major(v) === sm && semver.minor(v) === sn);
            assert.equal(
              step,
              sameMinor.sort(semver.compare).at(-1),
              "an intermediate step is its minor's newest",
            );
          }
          prev = step;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
