import type { BackupProvider } from "../../../../apis/openbaocluster.js";
import { CredentialFiles, DEFAULT_CONCURRENCY, DEFAULT_PART_SIZE } from "../../executor/contract.js";
import type { StoreCredentials } from "../../objectstore/types.js";
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
    credentials: credentialsOf(provider, files),
  });
  return {
    list: (prefix) => store.list(prefix),
    delete: (key) => store.delete(key),
  };
};

function credentialsOf(
  provider: BackupProvider,
  files: Record<string, Buffer> | undefined,
): StoreCredentials {
  if (!files) return {};
  const text = (name: string) => files[name]?.toString("utf8").trim() || undefined;
  const caCert = text(CredentialFiles[provider].caCert);
  if (provider === "s3") {
    const k = CredentialFiles.s3;
    const accessKeyId = text(k.accessKeyId);
    const secretAccessKey = text(k.secretAccessKey);
    if ((accessKeyId === undefined) !== (secretAccessKey === undefined))
      throw new Error(
        `credentials Secret: ${accessKeyId === undefined ? k.accessKeyId : k.secretAccessKey} is missing (both ${k.accessKeyId} and ${k.secretAccessKey} are needed)`,
      );
    return {
      caCert,
      s3:
        accessKeyId && secretAccessKey
          ? { accessKeyId, secretAccessKey, sessionToken: text(k.sessionToken) }
          : undefined,
    };
  }
  if (provider === "azure") {
    const k = CredentialFiles.azure;
    return {
      caCert,
      azure: {
        accountKey: text(k.accountKey),
        sasToken: text(k.sasToken),
        connectionString: text(k.connectionString),
      },
    };
  }
  return { caCert, gcs: { serviceAccountJson: text(CredentialFiles.gcs.serviceAccountJson) } };
}
