/**
 * Operation lifecycle: lock identity, acquire / renew / release / takeover, contention text, and
 * the status planes (who writes which part of OpenBaoCluster.status). It decides nothing
 * about backups, upgrades or restores; the domain code calls it.
 */
export * from "./adminops-pass.js";
export * from "./adminops-plane.js";
export { type CasOptions, type CasResult, casStatus, isFieldManagerConflict, LostRacesError } from "./cas.js";
export * from "./contention.js";
export * from "./lock.js";
export * from "./lock-store.js";
export * from "./planes.js";
