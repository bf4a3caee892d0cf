import type { Readable } from "node:stream";
import {
  AnonymousCredential,
  BlobServiceClient,
  type StoragePipelineOptions,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import {
  describeError,
  type ObjectInfo,
  type ObjectStore,
  type ObjectStoreConfig,
  ObjectStoreError,
  type UploadOptions,
} from "./types.js";

/**
 * Azure Blob Storage through its official SDK. Uploads stage blocks from the stream and commit the
 * block list only at the end: an interrupted upload commits nothing, so no blob appears (the staged
 * blocks are discarded by the service).
 */
export function azureStore(config: ObjectStoreConfig): ObjectStore {
  const creds = config.credentials.azure ?? {};
  const account = config.azureStorageAccount;
  const pipeline: StoragePipelineOptions = { retryOptions: { maxTries: 3 } };
  let service: BlobServiceClient;
  if (creds.connectionString) {
    service = BlobServiceClient.fromConnectionString(creds.connectionString, pipeline);
  } else {
    if (!account) throw new ObjectStoreError("config", config.bucket, "azure.storageAccount is required");
    // Azurite and other emulators put the account in the path; the real service in the host name.
    const base = (config.endpoint ?? `https://${account}.blob.core.windows.net`).replace(/\/+$/, "");
    const url = creds.sasToken ? `${base}?${creds.sasToken.replace(/^\?/, "")}` : base;
    const credential = creds.accountKey
      ? new StorageSharedKeyCredential(account, creds.accountKey)
      : new AnonymousCredential();
    service = new BlobServiceClient(url, credential, pipeline);
  }
  const container = service.getContainerClient(config.bucket);

  return {
    provider: "azure",
    async upload(key: string, body: Readable, opts: UploadOptions = {}) {
      let sent = 0;
      try {
        await container.getBlockBlobClient(key).uploadStream(body, config.partSize, config.concurrency, {
          abortSignal: opts.signal,
          blobHTTPHeaders: { blobContentType: "application/octet-stream" },
          onProgress: (p) => {
            sent = p.loadedBytes;
            opts.onProgress?.(sent);
          },
        });
      } catch (err) {
        body.destroy();
        throw new ObjectStoreError("upload", key, describeError(err), { cause: err });
      }
      return { size: sent };
    },

    async download(key: string, opts: { signal?: AbortSignal } = {}) {
      try {
        const res = await container.getBlobClient(key).download(0, undefined, { abortSignal: opts.signal });
        if (!res.readableStreamBody) throw new Error("the response has no body");
        return { body: res.readableStreamBody as Readable, size: res.contentLength };
      } catch (err) {
        throw new ObjectStoreError("download", key, describeError(err), { cause: err });
      }
    },

    async head(key: string): Promise<ObjectInfo | undefined> {
      try {
        const p = await container.getBlobClient(key).getProperties();
        return { key, size: p.contentLength ?? 0, lastModified: p.lastModified };
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) return undefined;
        throw new ObjectStoreError("head", key, describeError(err), { cause: err });
      }
    },

    async list(prefix: string): Promise<ObjectInfo[]> {
      const out: ObjectInfo[] = [];
      try {
        for await (const b of container.listBlobsFlat({ prefix }))
          out.push({
            key: b.name,
            size: b.properties.contentLength ?? 0,
            lastModified: b.properties.lastModified,
          });
      } catch (err) {
        throw new ObjectStoreError("list", prefix, describeError(err), { cause: err });
      }
      return out;
    },

    async delete(key: string) {
      try {
        await container.getBlobClient(key).deleteIfExists();
      } catch (err) {
        throw new ObjectStoreError("delete", key, describeError(err), { cause: err });
      }
    },
  };
}
