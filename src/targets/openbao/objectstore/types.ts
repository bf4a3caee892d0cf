/**
 * One interface over the object stores snapshots go to. The executor streams through it; the
 * controllers use list/delete (retention) and head (restore validation). Providers live next to
 * this file, one each, and are loaded only when chosen (their SDKs are large).
 */
import type { Readable } from "node:stream";
import type { BackupProvider } from "../../../apis/openbaocluster.js";

export interface ObjectInfo {
  key: string;
  size: number;
  lastModified?: Date;
}

export interface UploadOptions {
  /** Aborting rejects the upload and removes every part already sent: no object is left behind. */
  signal?: AbortSignal;
  /** Called as bytes are accepted by the store (for progress and throughput). */
  onProgress?: (bytesSent: number) => void;
}

export interface ObjectStore {
  readonly provider: BackupProvider;
  /**
   * Streams `body` into `key`, reading it no faster than the store accepts (backpressure), holding at
   * most partSize × concurrency bytes. On any failure the multipart upload is aborted and the error
   * is thrown: the object does not exist afterwards. Resolves with the bytes written.
   */
  upload(key: string, body: Readable, opts?: UploadOptions): Promise<{ size: number }>;
  /** A stream of the object's bytes, and its size when the store says it. */
  download(key: string, opts?: { signal?: AbortSignal }): Promise<{ body: Readable; size?: number }>;
  /** The object's size and time, or undefined when it does not exist. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Every object under the prefix (all pages). */
  list(prefix: string): Promise<ObjectInfo[]>;
  /** Deletes the object; deleting a missing object is not an error. */
  delete(key: string): Promise<void>;
}

/** Connection settings, the store half of the executor contract with credentials already read. */
export interface ObjectStoreConfig {
  provider: BackupProvider;
  bucket: string;
  endpoint?: string;
  region?: string;
  usePathStyle?: boolean;
  insecureSkipVerify?: boolean;
  partSize: number;
  concurrency: number;
  azureStorageAccount?: string;
  gcsProject?: string;
  credentials: StoreCredentials;
  /** S3: assume this role with the token in this file (web identity) instead of static keys. */
  webIdentity?: { roleArn: string; tokenFile: string };
}

/** Secret values read from files. Never logged: errors name the field, not the value. */
export interface StoreCredentials {
  s3?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  azure?: { accountKey?: string; sasToken?: string; connectionString?: string };
  gcs?: { serviceAccountJson?: string };
  /** PEM CA bundle for the endpoint's TLS certificate. */
  caCert?: string;
}

/** A store operation failed; the message says which operation and key, never a credential. */
export class ObjectStoreError extends Error {
  constructor(
    readonly operation: "upload" | "download" | "head" | "list" | "delete" | "config",
    readonly key: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${operation} ${key}: ${message}`, options);
    this.name = "ObjectStoreError";
  }
}

/** An error's message without anything that looks like a credential echoed back by a server. */
export function describeError(err: unknown): string {
  const e = err as { name?: string; message?: string; Code?: string; code?: string; statusCode?: number };
  const parts = [e?.name && e.name !== "Error" ? e.name : undefined, e?.message ?? String(err)];
  return parts
    .filter(Boolean)
    .join(": ")
    .replace(/(signature|credential|sig|sv|se|sp|token|key)=[^&\s"]+/gi, "$1=<redacted>")
    .slice(0, 500);
}
