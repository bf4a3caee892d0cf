/**
 * Backup executor benchmark (`npm run bench:backup`): a real OpenBao Raft node filled with
 * incompressible KV data, backed up by the executor process (run as a Job runs it, with a small heap)
 * into the gofakes3 S3 server on loopback, then restored into a fresh node. Prints the snapshot size,
 * upload and restore throughput, and the executor's peak RSS (its own getrusage maxrss).
 * BENCH_SNAPSHOT_MB (default 300) sizes the snapshot, BENCH_HEAP_MB (default 64) the executor's heap.
 */
import { randomBytes } from "node:crypto";
import type { ExecutorJob } from "../src/targets/openbao/executor/contract.js";
import { baoCall } from "../src/testenv/baohttp.js";
import { type RaftOpenBao, startRaftOpenBao } from "../src/testenv/baoraft.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../src/testenv/objectstores.js";
import { runExecutorProcess } from "../test/support/executor.js";

const MiB = 1024 * 1024;
const targetMb = Number(process.env["BENCH_SNAPSHOT_MB"] ?? 300);
const heapMb = Number(process.env["BENCH_HEAP_MB"] ?? 64);
const say = (l: string) => process.stderr.write(`[bench] ${l}\n`);

async function fill(bao: RaftOpenBao, bytes: number): Promise<void> {
  const value = 600 * 1024;
  const count = Math.ceil(bytes / value);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await baoCall(bao.addr, bao.rootToken, "POST", `secret/data/bench/${i}`, {
        data: { v: randomBytes(value).toString("base64") },
      });
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

async function main(): Promise<void> {
  const [bao, s3] = await Promise.all([
    startRaftOpenBao({ nodes: 1 }),
    startS3Server({ buckets: ["bench"] }),
  ]);
  const fresh = await startRaftOpenBao({ nodes: 1 });
  try {
    await baoCall(bao.addr, bao.rootToken, "POST", "sys/mounts/secret", {
      type: "kv",
      options: { version: "2" },
    });
    say(`writing ~${targetMb} MiB of KV data`);
    await fill(bao, targetMb * MiB);
    const store = {
      provider: "s3" as const,
      bucket: "bench",
      key: "bench/large.snap",
      endpoint: s3.endpoint,
      usePathStyle: true,
    };
    const base = { auth: { method: "token" as const, secretName: "-" }, store };
    const backupJob: ExecutorJob = { ...base, operation: "backup", openbao: { address: bao.addr } };
    const creds = { token: bao.rootToken, credentials: { ...S3_TEST_CREDENTIALS } };
    const backup = await runExecutorProcess(backupJob, creds, { maxOldSpaceMb: heapMb }).done;
    if (!backup.result?.ok) throw new Error(`backup failed: ${backup.stderr}`);
    const restoreJob: ExecutorJob = {
      ...base,
      operation: "restore",
      openbao: { address: fresh.addr },
      force: true,
    };
    const restore = await runExecutorProcess(
      restoreJob,
      { ...creds, token: fresh.rootToken },
      { maxOldSpaceMb: heapMb },
    ).done;
    if (!restore.result?.ok) throw new Error(`restore failed: ${restore.stderr}`);
    const size = backup.result.size;
    const rate = (ms: number) => `${(size / MiB / (ms / 1000)).toFixed(1)} MiB/s`;
    console.log(`snapshot size: ${(size / MiB).toFixed(1)} MiB`);
    console.log(`executor heap limit: ${heapMb} MiB (--max-old-space-size)`);
    console.log(
      `backup (OpenBao -> S3, partSize 10 MiB x 3): ${(backup.result.durationMs / 1000).toFixed(1)} s, ${rate(backup.result.durationMs)}, executor peak RSS ${((backup.peakRssKb ?? 0) / 1024).toFixed(0)} MiB`,
    );
    console.log(
      `restore (S3 -> OpenBao snapshot-force): ${(restore.result.durationMs / 1000).toFixed(1)} s, ${rate(restore.result.durationMs)}, executor peak RSS ${((restore.peakRssKb ?? 0) / 1024).toFixed(0)} MiB`,
    );
  } finally {
    await Promise.all([bao.stop(), s3.stop(), fresh.stop()]);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
