// Turning spec.version into the chart version to run (status.targetVersion). Pure: the caller reads
// the chart list (repository index or bundled charts) and the versionRef ConfigMap, and passes them in.
//
// Rules (spec 001 "Version", and the spec README's GitLabCore facts):
// - Static takes a literal (`version`) or the trimmed value of a ConfigMap key (`versionRef`); it
//   need not be in `available` (the chart source says whether it can be had), but it is refused when
//   below the deployed version.
// - Patch follows the newest patch of a minor; Latest the newest release (of a major, when given);
//   Previous and OldestSupported count minors down from the newest release: GitLab supports the
//   current minor and the two before it, so Previous is one minor back and OldestSupported two. With a
//   major, the count runs over that major's minors plus the first minor of the next major (a new major
//   shifts the window), and stays within the major: a major with too few minors gives its first one.
// - A tracking type never moves an instance back: one ahead of the minor its type selects keeps
//   taking the patches of its own minor.
// - No spec.version is Latest. Latest, Previous and OldestSupported without a major count across
//   every major only to install; a deployed instance then stays on the major it runs, so a new major
//   is taken only when the administrator sets or raises spec.version.major (GitLab's "Unattended
//   upgrades" spec).
// - An upgrade in progress keeps its target (unless Static): see keptTarget.
import type { GitLabCoreSpec, GitLabVersion } from "../../../apis/gitlabcore.js";
import { GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import {
  canonical,
  compareMinors,
  lessThan,
  type Minor,
  minorLabel,
  minorOf,
  minorsOf,
  newestPatch,
  parseMinor,
  releasedVersions,
} from "./versions.js";

/** Minors GitLab supports at once: the current one and the two before it (security backports). */
export const SUPPORTED_MINORS = 3;

export type VersionFailureReason = typeof R.VersionUnresolved | typeof R.DowngradeRefused;

export interface ResolveInput {
  spec: GitLabVersion;
  /** Chart versions that can be had: the repository index, or the bundled charts. */
  available: readonly string[];
  /** The chart version applied last (status.version), when there is one. */
  deployed?: string | undefined;
  /** The value of the versionRef ConfigMap key; undefined when the ConfigMap or the key is missing. */
  versionRefValue?: string | undefined;
  /** Where `available` came from, for messages ("the chart repository", "the bundled charts"). */
  sourceName?: string;
}

export type Resolution =
  | {
      ok: true;
      version: string;
      /** Why this version, for logs and events. */
      detail: string;
    }
  | {
      ok: false;
      reason: VersionFailureReason;
      /** The spec field at fault, such as `spec.version.minor`. */
      field: string;
      error: string;
    };

/** What an object without spec.version follows. */
export const DEFAULT_VERSION: GitLabVersion = Object.freeze({ type: "Latest" });

/** spec.version, or Latest when unset. The default is never written into the spec. */
export const versionSpecOf = (spec: Pick<GitLabCoreSpec, "version"> | undefined): GitLabVersion =>
  spec?.version ?? DEFAULT_VERSION;

/**
 * The target of this pass, given what the type selects now (`selected`): an upgrade in progress
 * (a recorded target above the deployed version) keeps its target until it completes, and the newer
 * selection waits (reported as status.availableVersion); a Static version is taken at once.
 */
export function keptTarget(input: {
  type: GitLabVersion["type"];
  selected: string;
  deployed?: string | undefined;
  recorded?: string | undefined;
}): string {
  const { type, selected } = input;
  const deployed = input.deployed === undefined ? undefined : canonical(input.deployed);
  const recorded = input.recorded === undefined ? undefined : canonical(input.recorded);
  if (type === "Static" || !deployed || !recorded) return selected;
  return lessThan(deployed, recorded) ? recorded : selected;
}

/** Whether the type follows a chart list (a failed resolution may clear when the list changes). */
export const tracksRepository = (spec: GitLabVersion): boolean => spec.type !== "Static";

const fail = (reason: VersionFailureReason, field: string, error: string): Resolution => ({
  ok: false,
  reason,
  field,
  error,
});

// ConfigMap content is not secret, but it is free text: keep what is echoed short and printable.
const shown = (raw: string): string => {
  const flat = raw.replace(/[^\x20-\x7e]/g, "?");
  return JSON.stringify(flat.length > 64 ? `${flat.slice(0, 64)}...` : flat);
};

export function resolveTargetVersion(input: ResolveInput): Resolution {
  const spec = input.spec;
  const deployed = input.deployed === undefined ? undefined : canonical(input.deployed);
  switch (spec.type) {
    case "Static":
      return resolveStatic(input, deployed);
    case "Patch":
    case "Latest":
    case "Previous":
    case "OldestSupported":
      return resolveTracking(input, deployed);
    default:
      return fail(
        R.VersionUnresolved,
        "spec.version.type",
        `unknown version type ${shown(String((spec as { type: unknown }).type))}`,
      );
  }
}

function resolveStatic(input: ResolveInput, deployed: string | undefined): Resolution {
  const { spec } = input;
  let version: string | undefined;
  let field: string;
  let from: string;
  if (spec.version !== undefined && spec.versionRef === undefined) {
    field = "spec.version.version";
    version = canonical(spec.version);
    if (!version) return fail(R.VersionUnresolved, field, `${shown(spec.version)} is not a semantic version`);
    from = "spec.version.version";
  } else if (spec.versionRef !== undefined && spec.version === undefined) {
    field = "spec.version.versionRef";
    const ref = `ConfigMap ${spec.versionRef.name} key ${spec.versionRef.key}`;
    const raw = input.versionRefValue;
    if (raw === undefined) return fail(R.VersionUnresolved, field, `${ref} does not exist`);
    if (raw.trim() === "") return fail(R.VersionUnresolved, field, `${ref} is empty`);
    version = canonical(raw);
    if (!version)
      return fail(R.VersionUnresolved, field, `${ref} holds ${shown(raw.trim())}, not a semantic version`);
    from = ref;
  } else {
    return fail(
      R.VersionUnresolved,
      "spec.version",
      "type Static takes exactly one of version and versionRef",
    );
  }
  if (deployed && lessThan(version, deployed))
    return fail(
      R.DowngradeRefused,
      field,
      `${version} is below the deployed chart version ${deployed}; downgrades are refused`,
    );
  return { ok: true, version, detail: `${version} from ${from}` };
}

function resolveTracking(input: ResolveInput, deployed: string | undefined): Resolution {
  const { spec } = input;
  const source = input.sourceName ?? "the available charts";
  const versions = releasedVersions(input.available);
  if (versions.length === 0) return fail(R.VersionUnresolved, "spec.version", `${source} list no release`);

  // Without a major, a deployed instance stays on the major it runs (counted as if set to it).
  const follow = spec.major === undefined && deployed ? minorOf(deployed).major : undefined;
  const picked = pickMinor(spec, versions, source, follow);
  if ("error" in picked) return fail(R.VersionUnresolved, picked.field, picked.error);
  let minor = picked.minor;
  let why = picked.why;

  if (deployed && compareMinors(minorOf(deployed), minor) > 0) {
    minor = minorOf(deployed);
    why = `the deployed ${deployed} is ahead of ${minorLabel(picked.minor)} (${picked.why}), so it keeps its own minor`;
  }
  const version = newestPatch(versions, minor);
  if (!version)
    return fail(
      R.VersionUnresolved,
      spec.type === "Patch" ? "spec.version.minor" : "spec.version",
      `${source} have no release of minor ${minorLabel(minor)}`,
    );
  if (deployed && lessThan(version, deployed))
    return fail(
      R.DowngradeRefused,
      "spec.version",
      `the newest release ${source} have for ${minorLabel(minor)} is ${version}, below the deployed chart version ${deployed}; downgrades are refused`,
    );
  return { ok: true, version, detail: `${version}: ${why}` };
}

type Picked = { minor: Minor; why: string } | { field: string; error: string };

function pickMinor(spec: GitLabVersion, versions: string[], source: string, follow?: number): Picked {
  const all = minorsOf(versions); // oldest first
  if (spec.type === "Patch") {
    const minor = spec.minor === undefined ? undefined : parseMinor(spec.minor);
    if (!minor) return { field: "spec.version.minor", error: "type Patch needs minor as MAJOR.MINOR" };
    return { minor, why: `newest patch of ${minorLabel(minor)}` };
  }
  const major = spec.major ?? follow;
  if (major !== undefined && !all.some((m) => m.major === major))
    return {
      field: "spec.version.major",
      error: `${source} have no release of major ${major}${spec.major === undefined ? ", the major the instance runs" : ""}`,
    };

  if (spec.type === "Latest") {
    const pool = major === undefined ? all : all.filter((m) => m.major === major);
    return {
      minor: pool[pool.length - 1]!,
      why: major === undefined ? "newest release" : `newest of ${major}${ofRunning(spec, major)}`,
    };
  }
  if (spec.type !== "Previous" && spec.type !== "OldestSupported")
    return { field: "spec.version.type", error: `type ${spec.type} selects no minor` };

  const back = spec.type === "Previous" ? 1 : SUPPORTED_MINORS - 1;
  let window: Minor[];
  if (major === undefined) window = all;
  else {
    const own = all.filter((m) => m.major === major);
    const nextFirst = all.find((m) => m.major > major);
    window = nextFirst && nextFirst.major === major + 1 ? [...own, nextFirst] : own;
  }
  const newestFirst = [...window].reverse();
  const counted = newestFirst[back];
  const label = spec.type === "Previous" ? "previous minor" : "oldest supported minor";
  if (major === undefined) {
    const minor = counted ?? all[0]!;
    return { minor, why: `${label} across every major` };
  }
  // Stay within the major: too few minors (or a count landing outside it) gives its first minor.
  if (!counted || counted.major !== major) {
    const first = all.find((m) => m.major === major)!;
    return {
      minor: first,
      why: `${label} of ${major}${ofRunning(spec, major)}: the major has too few minors, so its first`,
    };
  }
  return { minor: counted, why: `${label} of ${major}${ofRunning(spec, major)}` };
}

const ofRunning = (spec: GitLabVersion, major: number): string =>
  spec.major === undefined
    ? ` (the major the instance runs; set spec.version.major above ${major} to leave it)`
    : "";
