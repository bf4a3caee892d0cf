// Chart versions as the index and the charts directory spell them. Enough of semver for ordering
// and for keeping hostile strings out of file names and URLs.
const SEMVER = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]{1,64}))?(?:\+([0-9A-Za-z.-]{1,64}))?$/;

export interface ParsedVersion {
  major: number;
  minor: number;
  patch: number;
  prerelease?: string;
}

export function parseVersion(v: string): ParsedVersion | undefined {
  const m = SEMVER.exec(v);
  if (!m) return undefined;
  const parsed: ParsedVersion = { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
  if (m[4]) parsed.prerelease = m[4];
  return parsed;
}

export function isChartVersion(v: string): boolean {
  return parseVersion(v) !== undefined;
}

/** Semver order (a prerelease sorts before its release; prereleases compare as text). */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  const d = x.major - y.major || x.minor - y.minor || x.patch - y.patch;
  if (d !== 0) return d;
  if (x.prerelease === y.prerelease) return 0;
  if (x.prerelease === undefined) return 1;
  if (y.prerelease === undefined) return -1;
  return x.prerelease < y.prerelease ? -1 : 1;
}

/** Sorted, without duplicates (v-prefixed and plain spellings of one version count once). */
export function sortVersions(versions: Iterable<string>): string[] {
  const byCanonical = new Map<string, string>();
  for (const v of versions) {
    const key = v.replace(/^v/, "");
    if (!byCanonical.has(key)) byCanonical.set(key, key);
  }
  return [...byCanonical.values()].sort(compareVersions);
}
