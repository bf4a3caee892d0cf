import { BackupReason } from "./prerequisites.js";

/** The events the backup controller records, by upstream's names where it has them. */
export const BackupEvent = {
  JobCreated: "BackupJobCreated",
  Succeeded: BackupReason.BackupSucceeded,
  Failed: BackupReason.BackupFailed,
  ManualTriggerAccepted: "BackupManualTriggerAccepted",
  RetentionApplied: "BackupRetentionApplied",
  RetentionFailed: "BackupRetentionFailed",
} as const;
