import { GitLabCoreReason } from "../../../apis/gitlabcore-names.js";
// The chart versions an upgrade steps through. GitLab upgrades one minor at a time, so every minor
// between the deployed one and the target is a step, run with the newest patch of that minor (whose
// hooks and migrations then run in turn); the last step is the target itself. A major is left only
// from its newest minor, so the path takes every minor of the majors it crosses that the list has.
import {
  canonical,
  compareMinors,
  lessThan,
  type Minor,
  minorLabel,
  minorOf,
  newestPatch,
  releasedVersions,
} from "./versions.js";

/** More steps than this is not an upgrade anyone means; refusing keeps hostile input cheap. */
export const MAX_STEPS = 500;

export type UpgradePath =
  | {
      ok: true;
      /** In order; empty when nothing changes. The last one is `to`. */
      steps: string[];
    }
  | {
      ok: false;
      reason:
        | typeof GitLabCoreReason.MissingIntermediateChart
        | typeof GitLabCoreReason.DowngradeRefused
        | typeof GitLabCoreReason.VersionUnresolved;
      error: string;
      /** The minors no chart is available for, as `10.3`. */
      missing: string[];
    };

export function planUpgradePath(from: string, to: string, available: readonly string[]): UpgradePath {
  const start = canonical(from);
  const end = canonical(to);
  if (!start || !end)
    return {
      ok: false,
      reason: GitLabCoreReason.VersionUnresolved,
      error: `${!start ? "deployed" : "target"} version is not a semantic version`,
      missing: [],
    };
  if (start === end) return { ok: true, steps: [] };
  if (lessThan(end, start))
    return {
      ok: false,
      reason: GitLabCoreReason.DowngradeRefused,
      error: `${end} is below the deployed chart version ${start}; downgrades are refused`,
      missing: [],
    };

  const versions = releasedVersions(available);
  const a = minorOf(start);
  const b = minorOf(end);
  const missing: string[] = [];
  const between = b.major - a.major > MAX_STEPS ? undefined : minorsBetween(a, b, versions, missing);
  if (!between || between.length > MAX_STEPS)
    return {
      ok: false,
      reason: GitLabCoreReason.VersionUnresolved,
      error: `${start} to ${end} is more than ${MAX_STEPS} minor steps`,
      missing: [],
    };
  // A target no source lists cannot be had at all, whatever lies between: say so, naming it, rather
  // than listing every minor up to it as missing.
  if (!available.some((v) => canonical(v) === end))
    return {
      ok: false,
      reason: GitLabCoreReason.VersionUnresolved,
      error: `chart version ${end} is in no chart source${versions.length ? ` (the newest listed is ${versions[versions.length - 1]})` : ""}`,
      missing: [],
    };
  const steps: string[] = [];
  for (const m of between) {
    const v = newestPatch(versions, m);
    if (v) steps.push(v);
    else missing.push(minorLabel(m));
  }
  if (missing.length > 0) {
    missing.sort(byMinor);
    return {
      ok: false,
      reason: GitLabCoreReason.MissingIntermediateChart,
      error: `no chart for minor${missing.length > 1 ? "s" : ""} ${missing.join(", ")} between ${start} and ${end}: an upgrade steps one minor at a time`,
      missing,
    };
  }
  steps.push(end);
  return { ok: true, steps };
}

/** Orders `10.3` and `10.x` labels by number (9.0 before 10.x before 10.10), a whole major after its minors. */
function byMinor(a: string, b: string): number {
  const [am = "", an = ""] = a.split(".");
  const [bm = "", bn = ""] = b.split(".");
  const minor = (n: string) => (n === "x" ? Number.POSITIVE_INFINITY : Number(n));
  return Number(am) - Number(bm) || minor(an) - minor(bn);
}

/**
 * Minors strictly between a and b. Within a major minors are contiguous; where a major ends is only
 * known from the list, so the newest listed minor of a crossed major closes it. A crossed major with
 * no release at all is reported as `N.x` in `missing`.
 */
function minorsBetween(a: Minor, b: Minor, versions: string[], missing: string[]): Minor[] {
  if (compareMinors(a, b) >= 0) return [];
  const out: Minor[] = [];
  const lastMinorOf = (major: number): number | undefined => {
    let last: number | undefined;
    for (const v of versions) {
      const m = minorOf(v);
      if (m.major === major) last = m.minor;
    }
    return last;
  };
  for (let major = a.major; major <= b.major; major++) {
    const first = major === a.major ? a.minor + 1 : 0;
    let last: number;
    if (major === b.major) last = b.minor - 1;
    else {
      const listed = lastMinorOf(major);
      if (listed === undefined) {
        if (major !== a.major) missing.push(`${major}.x`);
        continue;
      }
      last = listed;
    }
    for (let minor = first; minor <= last; minor++) {
      out.push({ major, minor });
      if (out.length > MAX_STEPS) return out; // the caller refuses it
    }
  }
  return out;
}
