/**
 * The listeners' TLS policy: version bounds and the key exchange groups (OpenBao 2.7's
 * tls_key_exchange_preferences, which is how a cluster requires hybrid post-quantum key exchange).
 * The same attributes go on the API listener and on the metrics-only listener, so a scraper cannot
 * reach OpenBao with less than the API clients must offer. Cluster traffic (port 8201) is OpenBao's
 * own and is not touched.
 */
import {
  CLASSICAL_KEY_EXCHANGE_GROUPS,
  TLS_KEY_EXCHANGE_GROUPS,
  TLS_VERSIONS,
} from "../../../../apis/openbaocluster-names.js";
import { ConfigError } from "./errors.js";
import type { HclValue } from "./hcl.js";
import { atLeast, releaseOf } from "./release.js";
import type { SpecView } from "./spec-view.js";

const FIELD = "configuration.listener";
const KEY_EXCHANGE_SINCE = { major: 2, minor: 7, patch: 0 };

/**
 * OpenBao's attributes for the policy, or none when no policy field is set. Throws ConfigError naming
 * the field for what OpenBao would refuse or what would lock every client out: a policy without TLS,
 * bounds the wrong way round, unknown or repeated groups, hybrid-only groups that TLS 1.2 cannot
 * negotiate, and key exchange groups on a release (asked for, or still running) before 2.7.0.
 */
export function listenerTlsPolicy(
  spec: SpecView,
  runningVersion?: string,
): Record<string, HclValue | undefined> {
  const listener = spec.configuration?.listener;
  const min = listener?.tlsMinVersion;
  const max = listener?.tlsMaxVersion;
  const groups = listener?.tlsKeyExchangePreferences;
  if (min === undefined && max === undefined && groups === undefined) return {};
  if (spec.tls?.enabled === false || listener?.tlsDisable === true)
    throw new ConfigError(
      FIELD,
      "a TLS policy needs TLS: spec.tls.enabled true and listener.tlsDisable not true",
    );
  for (const [name, value] of [
    ["tlsMinVersion", min],
    ["tlsMaxVersion", max],
  ] as const)
    if (value !== undefined && !(TLS_VERSIONS as readonly string[]).includes(value))
      throw new ConfigError(
        `${FIELD}.${name}`,
        `${JSON.stringify(value)} is not one of ${TLS_VERSIONS.join(", ")}`,
      );
  if (min === "tls13" && max === "tls12")
    throw new ConfigError(`${FIELD}.tlsMaxVersion`, "must be greater than or equal to tlsMinVersion");
  if (groups !== undefined) checkGroups(groups, min, spec.version, runningVersion);
  return {
    tls_min_version: min,
    tls_max_version: max,
    tls_key_exchange_preferences: groups === undefined ? undefined : [...groups],
  };
}

function checkGroups(
  groups: readonly string[],
  min: string | undefined,
  version: string | undefined,
  runningVersion: string | undefined,
): void {
  const field = `${FIELD}.tlsKeyExchangePreferences`;
  if (groups.length === 0 || groups.length > TLS_KEY_EXCHANGE_GROUPS.length)
    throw new ConfigError(field, `needs 1 to ${TLS_KEY_EXCHANGE_GROUPS.length} groups`);
  const seen = new Set<string>();
  groups.forEach((g, i) => {
    if (!(TLS_KEY_EXCHANGE_GROUPS as readonly string[]).includes(g))
      throw new ConfigError(
        `${field}[${i}]`,
        `${JSON.stringify(g)} is not one of ${TLS_KEY_EXCHANGE_GROUPS.join(", ")}`,
      );
    if (seen.has(g)) throw new ConfigError(`${field}[${i}]`, `${g} is listed twice`);
    seen.add(g);
  });
  // TLS 1.2 has no hybrid groups: a listener offering nothing else could not complete a 1.2 handshake.
  if (!groups.some((g) => CLASSICAL_KEY_EXCHANGE_GROUPS.includes(g)) && min !== "tls13")
    throw new ConfigError(
      `${FIELD}.tlsMinVersion`,
      "must be tls13 when tlsKeyExchangePreferences lists only hybrid post-quantum groups",
    );
  for (const [what, v] of [
    ["spec.version", version],
    ["status.currentVersion (the running release)", runningVersion],
  ] as const) {
    if (v !== undefined && v !== "" && !keyExchangeSupported(v))
      throw new ConfigError(
        field,
        `needs OpenBao 2.7.0 or newer; ${what} is ${v}: complete the upgrade before choosing key exchange groups`,
      );
  }
}

/** 2.7.0 or newer; a pre-release of 2.7.0 itself comes before 2.7.0 (semver), one of a later release after it. */
export function keyExchangeSupported(version: string): boolean {
  const release = releaseOf(version);
  if (!release) return true; // not a version: the schema and the version check say so
  if (!atLeast(release, KEY_EXCHANGE_SINCE)) return false;
  const exactly = release.major === 2 && release.minor === 7 && release.patch === 0;
  return !(exactly && /^v?\d+\.\d+\.\d+-/.test(version));
}
