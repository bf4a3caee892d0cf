/**
 * How a backup or restore Job reaches its object store, as upstream 0.5 tells it in
 * BackupConfigurationReady and RestoreConfigurationReady: with the credentials Secret the target
 * names, with a workload identity the target configures explicitly, or with whatever the provider's
 * default credential chain finds (ambient). Pure; both conditions say the same thing the same way.
 */
import type { BackupTarget } from "../../../apis/openbaocluster.js";

export type StoreIdentity = "secret" | "workload" | "ambient";

export function storeIdentity(target: BackupTarget | undefined): StoreIdentity {
  if (target?.credentialsSecretRef?.name?.trim()) return "secret";
  const wi = target?.workloadIdentity;
  const explicit =
    !!target?.roleArn?.trim() ||
    Object.keys(wi?.serviceAccountAnnotations ?? {}).length > 0 ||
    Object.keys(wi?.podLabels ?? {}).length > 0;
  return explicit ? "workload" : "ambient";
}

/** The sentence saying how the store is reached, for a Job running as `serviceAccount`. */
export function storeIdentityMessage(target: BackupTarget | undefined, serviceAccount: string): string {
  switch (storeIdentity(target)) {
    case "secret":
      return `the store credentials are in Secret ${target?.credentialsSecretRef?.name?.trim()}`;
    case "workload":
      return "the store is reached with the workload identity the spec configures (target.roleArn or target.workloadIdentity)";
    case "ambient":
      return `no store credentials are configured, so the Job relies on the provider's default credential chain for ServiceAccount ${serviceAccount}`;
  }
}
