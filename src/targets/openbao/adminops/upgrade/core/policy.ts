/**
 * Version and image policy, pure: given what the spec asks for and what runs, is there an upgrade to
 * do, and may it start. Each refusal has upstream's reason and a message naming the field; nothing
 * here reads the cluster, so the same answer comes from a unit test and from the controller.
 */
import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../../apis/openbaocluster-names.js";
import { imageProblem } from "../../../validate/image.js";
import { parseVersion, type Version } from "../../../validate/values.js";

export interface VersionFacts {
  /** spec.version as written. */
  specVersion: string;
  /** spec.image, when set (otherwise the image is derived from the version). */
  specImage?: string;
  /** status.currentVersion: what OpenBao reports running; undefined before it was observed. */
  currentVersion?: string;
}

export type VersionDecision =
  /** Nothing to roll out: the running version is the one asked for (or not known yet). */
  | { kind: "none"; reason: typeof R.NoUpgradeNeeded; message: string }
  /** An upgrade from `from` to `to` may start. */
  | { kind: "upgrade"; from: string; to: string }
  /** Asked for but refused; nothing changes until the spec changes. */
  | { kind: "refused"; reason: OpenBaoClusterReasonType; message: string };

/** Without the leading v and any build metadata: the form status and comparisons use. */
export function normalizeVersion(v: string): string {
  return v.replace(/^v/, "").replace(/\+.*$/, "");
}

/**
 * Orders two versions by semantic-version precedence: numbers first, then a release ranks above its
 * pre-releases, pre-release identifiers compared numerically when both are numbers. Build metadata
 * does not count.
 */
export function compareVersions(a: Version, b: Version): number {
  for (const k of ["major", "minor", "patch"] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  const pa = preRelease(a);
  const pb = preRelease(b);
  if (pa.length === 0 || pb.length === 0) return pa.length === pb.length ? 0 : pa.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const nx = /^\d+$/.test(x) ? Number(x) : undefined;
    const ny = /^\d+$/.test(y) ? Number(y) : undefined;
    if (nx !== undefined && ny !== undefined) return nx < ny ? -1 : 1;
    if (nx !== undefined) return -1;
    if (ny !== undefined) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function preRelease(v: Version): string[] {
  const m = /^-([^+]*)/.exec(v.rest);
  return m?.[1] ? m[1].split(".") : [];
}

/** The decision for one pass. Downgrades are refused: Raft data written by a newer OpenBao may not open. */
export function decideVersion(f: VersionFacts): VersionDecision {
  const want = parseVersion(f.specVersion);
  if (!want)
    return {
      kind: "refused",
      reason: R.InvalidVersion,
      message: `spec.version "${f.specVersion}" is not a semantic version such as 2.7.2`,
    };
  if (f.specImage !== undefined) {
    const problem = imageProblem(f.specImage, f.specVersion);
    // The same reason the workload's validation gives the same mistake.
    if (problem) return { kind: "refused", reason: R.InvalidSpec, message: `spec.image: ${problem}` };
  }
  if (f.currentVersion === undefined)
    return {
      kind: "none",
      reason: R.NoUpgradeNeeded,
      message: "no running version observed yet (status.currentVersion); nothing to upgrade from",
    };
  const running = parseVersion(f.currentVersion);
  if (!running)
    return {
      kind: "refused",
      reason: R.InvalidVersion,
      message: `status.currentVersion "${f.currentVersion}" is not a semantic version; cannot order it against spec.version`,
    };
  const order = compareVersions(want, running);
  const to = normalizeVersion(f.specVersion);
  const from = normalizeVersion(f.currentVersion);
  if (order === 0)
    return { kind: "none", reason: R.NoUpgradeNeeded, message: `version ${from} is running already` };
  if (order < 0)
    return {
      kind: "refused",
      reason: R.DowngradeBlocked,
      message: `spec.version ${to} is older than the running ${from}; downgrades are refused (set spec.version back to ${from} or higher)`,
    };
  return { kind: "upgrade", from, to };
}

/** True when the two strings name the same version (v prefix and build metadata aside). */
export function sameVersionText(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return normalizeVersion(a) === normalizeVersion(b);
  return compareVersions(pa, pb) === 0;
}
