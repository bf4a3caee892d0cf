// Version resolution and upgrade planning for GitLabCore: pure functions of the spec and chart lists.
export {
  DEFAULT_VERSION,
  keptTarget,
  type Resolution,
  type ResolveInput,
  resolveTargetVersion,
  SUPPORTED_MINORS,
  tracksRepository,
  type VersionFailureReason,
  versionSpecOf,
} from "./resolve.js";
export { MAX_STEPS, planUpgradePath, type UpgradePath } from "./upgrade-path.js";
export { canonical as canonicalVersion, releasedVersions } from "./versions.js";
