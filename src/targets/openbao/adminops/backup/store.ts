import type { BackupProvider } from "../../../../apis/openbaocluster.js";
import { DEFAULT_CONCURRENCY, DEFAULT_PART_SIZE } from "../../executor/contract.js";
import { credentialsFromFiles } from "../../objectstore/credentials.js";
import type { SnapshotStoreFactory } from "./ports.js";

/**
 * The object stores retention lists and deletes in: the executor's own providers (objectstore/), so
 * listing sees exactly the keys the executor wrote. The credentials come from the same Secret the Job
 * mounts, read here under the same file names; they stay in memory for the call and are never logged.
 */
export const defaultSnapshotStores: SnapshotStoreFactory = async (target, files) => {
  const { openObjectStore } = await import("../../objectstore/index.js");
  const provider = (target.provider ?? "s3") as BackupProvider;
  const store = await openObjectStore({
    provider,
    bucket: provider === "azure" && target.azure?.container ? target.azure.container : target.bucket,
    endpoint: target.endpoint,
    region: target.region ?? (provider === "s3" ? "us-east-1" : undefined),
    usePathStyle: target.usePathStyle,
    insecureSkipVerify: target.insecureSkipVerify,
    partSize: target.partSize ?? DEFAULT_PART_SIZE,
    concurrency: target.concurrency ?? DEFAULT_CONCURRENCY,
    azureStorageAccount: target.azure?.storageAccount,
    gcsProject: target.gcs?.project,
    credentials: credentialsFromFiles(provider, files),
  });
  return {
    list: (prefix) => store.list(prefix),
    delete: (key) => store.delete(key),
  };
};
