import { Agent as HttpsAgent } from "node:https";
import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from "@aws-sdk/client-s3";
import { fromTokenFile } from "@aws-sdk/credential-provider-web-identity";
import { Upload } from "@aws-sdk/lib-storage";
import {
  describeError,
  type ObjectInfo,
  type ObjectStore,
  type ObjectStoreConfig,
  ObjectStoreError,
  type UploadOptions,
} from "./types.js";

/**
 * Credentials from AssumeRoleWithWebIdentity with the projected token, refreshed by the SDK before
 * they expire (the file is read again at each exchange, so the kubelet's renewed token is used).
 * AWS's own STS for AWS endpoints; an S3-compatible server (MinIO, Ceph RGW) answers STS at its S3
 * endpoint, which is where its role ARNs live.
 */
function webIdentityCredentials(config: ObjectStoreConfig) {
  const { roleArn, tokenFile } = config.webIdentity!;
  const region = config.region ?? "us-east-1";
  const host = config.endpoint ? new URL(config.endpoint).hostname : "";
  const ownSts = host !== "" && !host.endsWith(".amazonaws.com");
  return fromTokenFile({
    roleArn,
    webIdentityTokenFile: tokenFile,
    roleSessionName: "openbao-executor",
    clientConfig: ownSts ? { region, endpoint: config.endpoint } : { region },
  });
}

/** S3 and S3-compatible servers through the AWS SDK v3; multipart uploads through lib-storage. */
export function s3Store(config: ObjectStoreConfig): ObjectStore {
  const creds = config.credentials.s3;
  const agent =
    config.insecureSkipVerify || config.credentials.caCert
      ? new HttpsAgent({
          rejectUnauthorized: !config.insecureSkipVerify,
          ca: config.credentials.caCert,
          keepAlive: true,
        })
      : undefined;
  const client = new S3Client({
    region: config.region ?? "us-east-1",
    endpoint: config.endpoint,
    forcePathStyle: config.usePathStyle ?? false,
    // Without static keys: the web identity the Job was given, else the SDK's default chain
    // (instance role, env).
    credentials: creds ?? (config.webIdentity ? webIdentityCredentials(config) : undefined),
    requestHandler: agent ? { httpsAgent: agent } : undefined,
    // Newer SDKs add CRC checksums to every upload; many S3-compatible servers reject or ignore them.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: 3,
  });
  const Bucket = config.bucket;

  return {
    provider: "s3",
    async upload(key: string, body: Readable, opts: UploadOptions = {}) {
      const upload = new Upload({
        client,
        params: { Bucket, Key: key, Body: body, ContentType: "application/octet-stream" },
        partSize: config.partSize,
        queueSize: config.concurrency,
        // On failure lib-storage sends AbortMultipartUpload, so no parts (and no object) stay behind.
        leavePartsOnError: false,
      });
      let sent = 0;
      upload.on("httpUploadProgress", (p) => {
        sent = p.loaded ?? sent;
        opts.onProgress?.(sent);
      });
      const onAbort = () => void upload.abort().catch(() => {});
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      try {
        if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
        await upload.done();
      } catch (err) {
        body.destroy();
        throw new ObjectStoreError("upload", key, describeError(err), { cause: err });
      } finally {
        opts.signal?.removeEventListener("abort", onAbort);
      }
      const info = await this.head(key);
      return { size: info?.size ?? sent };
    },

    async download(key: string, opts: { signal?: AbortSignal } = {}) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }), {
          abortSignal: opts.signal,
        });
        if (!out.Body) throw new Error("the response has no body");
        return { body: out.Body as Readable, size: out.ContentLength };
      } catch (err) {
        throw new ObjectStoreError("download", key, describeError(err), { cause: err });
      }
    },

    async head(key: string): Promise<ObjectInfo | undefined> {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return { key, size: out.ContentLength ?? 0, lastModified: out.LastModified };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new ObjectStoreError("head", key, describeError(err), { cause: err });
      }
    },

    async list(prefix: string): Promise<ObjectInfo[]> {
      const out: ObjectInfo[] = [];
      let token: string | undefined;
      try {
        do {
          const page = await client.send(
            new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }),
          );
          for (const o of page.Contents ?? [])
            if (o.Key) out.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified });
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      } catch (err) {
        throw new ObjectStoreError("list", prefix, describeError(err), { cause: err });
      }
      return out;
    },

    async delete(key: string) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      } catch (err) {
        if (isNotFound(err)) return;
        throw new ObjectStoreError("delete", key, describeError(err), { cause: err });
      }
    },
  };
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NotFound" || e?.name === "NoSuchKey" || e?.$metadata?.httpStatusCode === 404;
}
