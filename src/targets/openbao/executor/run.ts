/**
 * The executor: what runs inside a backup or restore Job. It logs in to OpenBao, then streams the
 * Raft snapshot between OpenBao and the object store without holding it (memory stays at about
 * partSize × concurrency whatever the snapshot size), and reports one result line.
 */
import { Transform, type TransformCallback } from "node:stream";
import { openObjectStore, readCredentials } from "../objectstore/index.js";
import { describeError, type ObjectStore } from "../objectstore/types.js";
import { type ExecutorJob, executorFiles } from "./contract.js";
import {
  BaoError,
  connection,
  failure,
  login,
  openSnapshot,
  readSmall,
  send,
  untilAnswering,
} from "./openbao.js";
import { Patience } from "./patience.js";
import type { ExecutorFailureReason, ExecutorResult } from "./result.js";

export interface ExecutorFiles {
  caFile?: string;
  tokenFile?: string;
  jwtFile?: string;
  credentialsDir?: string;
  webIdentityTokenFile?: string;
}

export interface RunOptions {
  /** Where the files are; default the Job's mount points (executorFiles). Tests on the host override. */
  files?: ExecutorFiles;
  /** Aborting (SIGTERM) stops the transfer and aborts the upload; the result says Interrupted. */
  signal?: AbortSignal;
  /** Progress, e.g. for the log: bytes moved so far. */
  onProgress?: (bytes: number) => void;
  /** A store already opened (tests, bench); default opened from the job. */
  store?: ObjectStore;
  /** Hears each failed attempt to reach OpenBao while the executor waits for it to answer. */
  onWaiting?: (why: string) => void;
  /** How long a backup or restore keeps trying an object store that does not answer (default STORE_WAIT_MS). */
  storeWaitMs?: number;
  /** Hears each attempt the object store did not answer, before the next one. */
  onStoreWaiting?: (why: string) => void;
}

/**
 * How long the executor keeps trying an object store that stopped answering (a restart, a network
 * blip): the same order as the wait for OpenBao to answer. A backup takes a fresh snapshot for each
 * try and uploads it under the same key; a failed upload leaves no object behind (the multipart
 * upload is aborted), so the key ends with at most one, complete. A restore tries to open the
 * download again, before anything is sent to OpenBao. The Job itself is still run once.
 */
export const STORE_WAIT_MS = 120_000;

/**
 * Socket errors and answers that mean the object store is not there right now, anywhere in an
 * error's cause chain; a refusal (403, a missing bucket) is not one and fails at once.
 */
const STORE_NOT_ANSWERING = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "TimeoutError",
  "RequestTimeout",
]);

export function storeNotAnswering(err: unknown): boolean {
  for (
    let e = err as
        | { code?: unknown; name?: unknown; cause?: unknown; $metadata?: { httpStatusCode?: number } }
        | undefined,
      depth = 0;
    e && depth < 8;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === "string" && STORE_NOT_ANSWERING.has(e.code)) return true;
    if (typeof e.name === "string" && STORE_NOT_ANSWERING.has(e.name)) return true;
    const status = e.$metadata?.httpStatusCode;
    if (status === 502 || status === 503 || status === 504) return true;
    if (Array.isArray((e as { errors?: unknown }).errors))
      if ((e as { errors: unknown[] }).errors.some(storeNotAnswering)) return true;
  }
  return false;
}

class UploadFailure extends Error {
  constructor(
    message: string,
    readonly notAnswering: boolean,
  ) {
    super(message);
  }
}

class Failure extends Error {
  constructor(
    readonly reason: ExecutorFailureReason,
    message: string,
  ) {
    super(message);
  }
}

/** Counts the bytes passing through, without buffering them. */
class Counter extends Transform {
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

export async function runExecutor(job: ExecutorJob, opts: RunOptions = {}): Promise<ExecutorResult> {
  const started = Date.now();
  const key = job.store.key;
  try {
    const size = job.operation === "backup" ? await backup(job, opts) : await restore(job, opts);
    return { ok: true, operation: job.operation, key, size, durationMs: Date.now() - started };
  } catch (err) {
    const reason: ExecutorFailureReason = opts.signal?.aborted
      ? "Interrupted"
      : err instanceof Failure
        ? err.reason
        : "InvalidInput";
    return { ok: false, operation: job.operation, key, error: describeError(err), reason };
  }
}

async function prepare(job: ExecutorJob, opts: RunOptions) {
  const files = opts.files ?? executorFiles(job);
  const conn = await connection(job.openbao.address, files.caFile).catch((err) => {
    throw new Failure("InvalidInput", `cannot read the OpenBao CA file: ${(err as Error).message}`);
  });
  // A Job can start before its cluster's Service has an endpoint (a restore into a cluster just
  // initialized, a backup during a leader change): wait for an answer before any real request.
  await untilAnswering(conn, { signal: opts.signal, onWaiting: opts.onWaiting }).catch((err) => {
    throw new Failure(job.operation === "backup" ? "SnapshotFailed" : "RestoreFailed", describeError(err));
  });
  const token = await login(conn, job.auth, files).catch((err) => {
    throw new Failure("AuthFailed", describeError(err));
  });
  if (job.store.roleArn && !files.webIdentityTokenFile && !opts.store)
    throw new Failure("InvalidInput", "target.roleArn: no web identity token file is mounted");
  const store =
    opts.store ??
    (await openObjectStore({
      ...job.store,
      partSize: job.store.partSize ?? 10 * 1024 * 1024,
      concurrency: job.store.concurrency ?? 3,
      credentials: await readCredentials(job.store.provider, files.credentialsDir),
      ...(job.store.roleArn && files.webIdentityTokenFile
        ? { webIdentity: { roleArn: job.store.roleArn, tokenFile: files.webIdentityTokenFile } }
        : {}),
    }).catch((err) => {
      throw new Failure("InvalidInput", describeError(err));
    }));
  return { conn, token, store };
}

/** The wait for an object store that does not answer, shared by both directions. */
function storePatience(opts: RunOptions): Patience {
  return new Patience({
    withinMs: opts.storeWaitMs ?? STORE_WAIT_MS,
    firstMs: 1000,
    maxMs: 10_000,
    signal: opts.signal,
    onWaiting: opts.onStoreWaiting,
  });
}

const gaveUp = (message: string, attempts: number, opts: RunOptions) =>
  `${message} (the object store did not answer over ${attempts} attempts in ${Math.round((opts.storeWaitMs ?? STORE_WAIT_MS) / 1000)} s)`;

async function backup(job: ExecutorJob, opts: RunOptions): Promise<number> {
  const { conn, token, store } = await prepare(job, opts);
  const patience = storePatience(opts);
  for (let attempt = 1; ; attempt++) {
    try {
      return await backupOnce(job, opts, conn, token, store);
    } catch (err) {
      if (!(err instanceof UploadFailure)) throw err;
      if (!err.notAnswering || opts.signal?.aborted) throw new Failure("UploadFailed", err.message);
      if (!(await patience.again(err.message)))
        throw new Failure("UploadFailed", gaveUp(err.message, attempt, opts));
    }
  }
}

/**
 * Opens the snapshot's download, trying again while the store does not answer: nothing has reached
 * OpenBao yet, so waiting out a store restart costs only time. A refusal (missing key, 403) fails at once.
 */
async function openDownload(job: ExecutorJob, opts: RunOptions, store: ObjectStore) {
  const patience = storePatience(opts);
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.download(job.store.key, { signal: opts.signal });
    } catch (err) {
      const message = describeError(err);
      if (!storeNotAnswering(err) || opts.signal?.aborted) throw new Failure("DownloadFailed", message);
      if (!(await patience.again(message)))
        throw new Failure("DownloadFailed", gaveUp(message, attempt, opts));
    }
  }
}

async function backupOnce(
  job: ExecutorJob,
  opts: RunOptions,
  conn: Awaited<ReturnType<typeof prepare>>["conn"],
  token: string,
  store: ObjectStore,
): Promise<number> {
  const res = await openSnapshot(conn, token, { signal: opts.signal, onWaiting: opts.onWaiting }).catch(
    (err) => {
      throw new Failure("SnapshotFailed", describeError(err));
    },
  );
  if (res instanceof BaoError) throw new Failure("SnapshotFailed", res.message);
  const counter = new Counter();
  let snapshotError: Error | undefined;
  // OpenBao closing the stream early (leader lost, server stopped) must fail the upload, not end it.
  const fail = (err: Error): void => {
    snapshotError = err;
    counter.destroy(err);
  };
  res.once("aborted", () => fail(new Error("OpenBao closed the snapshot stream early")));
  res.once("error", fail);
  res.pipe(counter);
  try {
    await store.upload(job.store.key, counter, {
      signal: opts.signal,
      onProgress: opts.onProgress,
    });
  } catch (err) {
    // Decide the cause before closing the snapshot stream: closing it ourselves is not OpenBao's failure.
    const cause = snapshotError;
    res.removeAllListeners("aborted");
    res.on("error", () => {});
    res.destroy();
    if (cause) throw new Failure("SnapshotFailed", `snapshot stream: ${cause.message}`);
    throw new UploadFailure(describeError(err), storeNotAnswering(err));
  }
  if (snapshotError) throw new Failure("SnapshotFailed", `snapshot stream: ${snapshotError.message}`);
  return counter.bytes;
}

/** OpenBao's answer when the snapshot's hash file was sealed by another seal than the running one. */
const SEAL_MISMATCH = /could not verify hash file/;

/**
 * `snapshot` checks that the snapshot's hash file opens with the running seal (the same static key,
 * KMS key or unseal keys); `snapshot-force` skips that check. Either way the restored data stays
 * sealed by the source's seal: the target must hold the source's key to open it after a restart.
 */
async function restore(job: ExecutorJob, opts: RunOptions): Promise<number> {
  const { conn, token, store } = await prepare(job, opts);
  const download = await openDownload(job, opts, store);
  const counter = new Counter();
  let downloadError: Error | undefined;
  download.body.once("error", (err) => {
    downloadError = err;
    counter.destroy(err);
  });
  download.body.pipe(counter);
  if (opts.onProgress) {
    const tick = setInterval(() => opts.onProgress?.(counter.bytes), 1000);
    counter.once("close", () => clearInterval(tick));
  }
  const path = job.force ? "sys/storage/raft/snapshot-force" : "sys/storage/raft/snapshot";
  let res: Awaited<ReturnType<typeof send>>;
  try {
    res = await send(conn, "POST", path, {
      token,
      body: counter,
      length: download.size,
      signal: opts.signal,
    });
  } catch (err) {
    if (downloadError) throw new Failure("DownloadFailed", describeError(downloadError));
    throw new Failure("RestoreFailed", describeError(err));
  }
  if (downloadError) throw new Failure("DownloadFailed", describeError(downloadError));
  if (res.statusCode !== 200 && res.statusCode !== 204) {
    const err = await failure(res, path.split("/").pop()!);
    // OpenBao checks the snapshot's sealed hash file with the running seal before it changes anything.
    throw new Failure(SEAL_MISMATCH.test(err.message) ? "SealMismatch" : "RestoreFailed", err.message);
  }
  await readSmall(res);
  if (download.size !== undefined && counter.bytes !== download.size)
    throw new Failure("DownloadFailed", `read ${counter.bytes} of ${download.size} bytes`);
  return counter.bytes;
}

export { BaoError };
