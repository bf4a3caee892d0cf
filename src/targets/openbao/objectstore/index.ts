/**
 * Opens the object store a config names. Each provider's SDK is imported only when chosen, so the
 * operator process (which only lists and deletes) and an executor for one provider do not load all three.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CredentialFiles } from "../executor/contract.js";
import type { ObjectStore, ObjectStoreConfig, StoreCredentials } from "./types.js";

export * from "./types.js";

export async function openObjectStore(config: ObjectStoreConfig): Promise<ObjectStore> {
  switch (config.provider) {
    case "s3":
      return (await import("./s3.js")).s3Store(config);
    case "azure":
      return (await import("./azure.js")).azureStore(config);
    case "gcs":
      return (await import("./gcs.js")).gcsStore(config);
  }
}

async function optionalFile(dir: string, name: string): Promise<string | undefined> {
  try {
    return (await readFile(join(dir, name), "utf8")).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read credentials file ${name}: ${(err as NodeJS.ErrnoException).code}`);
  }
}

/**
 * Reads the credentials a provider needs from a mounted Secret folder. A half-given pair (an access
 * key without its secret) is an error naming the missing key; nothing at all means "use the default chain".
 */
export async function readCredentials(
  provider: ObjectStoreConfig["provider"],
  dir?: string,
): Promise<StoreCredentials> {
  if (!dir) return {};
  const caCert = await optionalFile(dir, CredentialFiles[provider].caCert);
  if (provider === "s3") {
    const k = CredentialFiles.s3;
    const accessKeyId = await optionalFile(dir, k.accessKeyId);
    const secretAccessKey = await optionalFile(dir, k.secretAccessKey);
    const sessionToken = await optionalFile(dir, k.sessionToken);
    if ((accessKeyId === undefined) !== (secretAccessKey === undefined))
      throw new Error(
        `credentials Secret: ${accessKeyId === undefined ? k.accessKeyId : k.secretAccessKey} is missing (both ${k.accessKeyId} and ${k.secretAccessKey} are needed)`,
      );
    return {
      caCert,
      s3: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, sessionToken } : undefined,
    };
  }
  if (provider === "azure") {
    const k = CredentialFiles.azure;
    return {
      caCert,
      azure: {
        accountKey: await optionalFile(dir, k.accountKey),
        sasToken: await optionalFile(dir, k.sasToken),
        connectionString: await optionalFile(dir, k.connectionString),
      },
    };
  }
  return {
    caCert,
    gcs: { serviceAccountJson: await optionalFile(dir, CredentialFiles.gcs.serviceAccountJson) },
  };
}
