/**
 * Opens the object store a config names. Each provider's SDK is imported only when chosen, so the
 * operator process (which only lists and deletes) and an executor for one provider do not load all three.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { credentialFileNames, credentialsFrom } from "./credentials.js";
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

/** Reads the credentials a provider needs from the mounted Secret folder (see credentialsFrom). */
export async function readCredentials(
  provider: ObjectStoreConfig["provider"],
  dir?: string,
): Promise<StoreCredentials> {
  if (!dir) return {};
  const found = new Map<string, string | undefined>();
  for (const name of credentialFileNames(provider)) found.set(name, await optionalFile(dir, name));
  return credentialsFrom(provider, (name) => found.get(name));
}
