// Chart version arithmetic shared by resolution and upgrade planning: parsing the lists a chart
// repository or the bundled charts give us, grouping them by minor, and picking the newest patch.
import semver from "semver";

/** A minor line such as 10.3, the unit GitLab upgrades step through. */
export interface Minor {
  major: number;
  minor: number;
}

/** The canonical form (`10.3.1`) of a version string, or undefined when it is not a semantic version. */
export function canonical(raw: string): string | undefined {
  if (typeof raw !== "string" || raw.length > 64) return undefined;
  return semver.valid(raw.trim(), { loose: false }) ?? undefined;
}

export const minorOf = (version: string): Minor => ({
  major: semver.major(version),
  minor: semver.minor(version),
});

export const minorLabel = (m: Minor): string => `${m.major}.${m.minor}`;

export const compareMinors = (a: Minor, b: Minor): number => a.major - b.major || a.minor - b.minor;

export const sameMinor = (a: Minor, b: Minor): boolean => compareMinors(a, b) === 0;

/**
 * The released versions in `available`, canonical, deduplicated and sorted oldest first. Entries that
 * are not semantic versions are skipped (an index may carry anything), and so are pre-releases: only a
 * Static version may name one.
 */
export function releasedVersions(available: readonly string[]): string[] {
  const out = new Set<string>();
  for (const raw of available) {
    const v = canonical(raw);
    if (v !== undefined && semver.prerelease(v) === null) out.add(v);
  }
  return [...out].sort(semver.compare);
}

/** The distinct minors of sorted released versions, oldest first. */
export function minorsOf(versions: readonly string[]): Minor[] {
  const out: Minor[] = [];
  for (const v of versions) {
    const m = minorOf(v);
    const last = out[out.length - 1];
    if (!last || !sameMinor(last, m)) out.push(m);
  }
  return out;
}

/** The newest released version of a minor, or undefined when the list has none. */
export function newestPatch(versions: readonly string[], m: Minor): string | undefined {
  let best: string | undefined;
  for (const v of versions) if (sameMinor(minorOf(v), m)) best = v; // sorted: the last one wins
  return best;
}

/** Parses `10.3` (as spec.version.minor carries it). */
export function parseMinor(raw: string): Minor | undefined {
  const m = /^(\d{1,9})\.(\d{1,9})$/.exec(raw.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

export const lessThan = (a: string, b: string): boolean => semver.lt(a, b);
