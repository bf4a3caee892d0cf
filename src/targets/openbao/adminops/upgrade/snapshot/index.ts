export {
  ensurePreUpgradeSnapshot,
  type PreUpgradeSnapshotDeps,
  PreUpgradeSnapshotEvent,
  type PreUpgradeSnapshotOptions,
  type PreUpgradeSnapshotOutcome,
  preUpgradeSnapshotPort,
} from "./ensure.js";
export { planSnapshot, snapshotJobIdentity, snapshotRequested } from "./plan.js";
