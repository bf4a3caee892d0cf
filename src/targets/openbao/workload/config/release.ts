/**
 * The OpenBao release a spec asks for, for settings OpenBao only understands from some release on.
 * The config refuses such a setting naming its field rather than let OpenBao fail at start.
 */
import { ConfigError } from "./errors.js";

export interface Release {
  major: number;
  minor: number;
  patch: number;
}

/** major.minor.patch of a version such as v2.5.1-rc1; undefined for anything else (the schema refuses it). */
export function releaseOf(version: string | undefined): Release | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version ?? "");
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : undefined;
}

export function atLeast(v: Release, min: Release): boolean {
  if (v.major !== min.major) return v.major > min.major;
  if (v.minor !== min.minor) return v.minor > min.minor;
  return v.patch >= min.patch;
}

/** Throws ConfigError on `field` when `version` is a release older than `min`; unknown versions pass. */
export function requireRelease(version: string | undefined, min: Release, field: string): void {
  const v = releaseOf(version);
  if (v && !atLeast(v, min))
    throw new ConfigError(
      field,
      `needs OpenBao ${min.major}.${min.minor}.${min.patch} or newer; spec.version is ${version}`,
    );
}
