export {
  ensurePreUpgradeSnapshot,
  PreUpgradeBackupFailed,
  type PreUpgradeSnapshotDeps,
  PreUpgradeSnapshotEvent,
  type PreUpgradeSnapshotOptions,
  type PreUpgradeSnapshotOutcome,
  preUpgradeSnapshotPort,
} from "./ensure.js";
export { planSnapshot, snapshotJobName, snapshotRequested } from "./plan.js";
