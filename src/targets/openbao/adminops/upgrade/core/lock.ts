import { type LockIdentity, upgradeHolder } from "../../../opslifecycle/index.js";

/**
 * The lock identity of an upgrade: one per starting version, so the same attempt (a pass after a
 * restart, a retry, a newer target chosen mid-roll) keeps the same holder, and the next upgrade
 * (which starts from another version, downgrades being refused) gets a new one.
 */
export function upgradeLock(cluster: string, fromVersion: string): LockIdentity {
  return { operation: "Upgrade", holder: upgradeHolder(cluster, `from-${fromVersion}`) };
}

/** True for a lock any upgrade of `cluster` holds (for cleaning up after a crash). */
export const isUpgradeLock = (cluster: string, holder: string | undefined): boolean =>
  !!holder && holder.startsWith(upgradeHolder(cluster, ""));
