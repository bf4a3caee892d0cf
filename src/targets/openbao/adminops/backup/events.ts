import { OpenBaoClusterReason as R } from "../../../../apis/openbaocluster-names.js";

/** The events the backup controller records, by upstream's names where it has them. */
export const BackupEvent = {
  JobCreated: R.BackupJobCreated,
  Succeeded: R.BackupSucceeded,
  Failed: R.BackupFailed,
  ManualTriggerAccepted: R.BackupManualTriggerAccepted,
  RetentionApplied: R.BackupRetentionApplied,
  RetentionFailed: R.BackupRetentionFailed,
} as const;
