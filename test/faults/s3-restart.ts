import { Readable } from "node:stream";
import { openObjectStore } from "../../src/targets/openbao/objectstore/index.js";
import {
  type LocalObjectStore,
  S3_TEST_CREDENTIALS,
  type S3ServerOptions,
  startS3Server,
} from "../../src/testenv/objectstores.js";

// The campaign's S3 server is gofakes3 in memory: stopped, it forgets every object. A real store
// restarted keeps them, and a restore outage needs the backup still there when the store is back,
// so the harness reads every object before the stop and puts them back once it runs again.

type Options = S3ServerOptions & { buckets: string[] };

const storeAt = (s3: LocalObjectStore, bucket: string) =>
  openObjectStore({
    provider: "s3",
    bucket,
    endpoint: s3.endpoint,
    usePathStyle: true,
    partSize: 5 * 1024 * 1024,
    concurrency: 2,
    credentials: { s3: { ...S3_TEST_CREDENTIALS } },
  });

export interface KeptObject {
  bucket: string;
  key: string;
  bytes: Buffer;
}

/** Every object of the server's buckets, read whole (the campaign's snapshots are a few KiB). */
async function readAll(s3: LocalObjectStore, buckets: string[]): Promise<KeptObject[]> {
  const out: KeptObject[] = [];
  for (const bucket of buckets) {
    const store = await storeAt(s3, bucket);
    for (const o of await store.list("")) {
      const { body } = await store.download(o.key);
      out.push({ bucket, key: o.key, bytes: Buffer.concat(await body.toArray()) });
    }
  }
  return out;
}

/** Stops the server, keeping what it held; `start` brings it back on its port with those objects. */
export async function stopKeeping(s3: LocalObjectStore, opts: Options) {
  const kept = await readAll(s3, opts.buckets);
  await s3.stop();
  return {
    kept: kept.map((k) => k.key),
    async start(): Promise<LocalObjectStore> {
      const again = await startS3Server({ ...opts, port: s3.port });
      for (const k of kept) await (await storeAt(again, k.bucket)).upload(k.key, Readable.from([k.bytes]));
      return again;
    },
  };
}
