import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { connect, createServer } from "node:net";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import type { ExecutorJob } from "../../src/targets/openbao/executor/contract.js";
import { connection, untilAnswering } from "../../src/targets/openbao/executor/openbao.js";
import { openObjectStore } from "../../src/targets/openbao/objectstore/index.js";
import type { ObjectStore } from "../../src/targets/openbao/objectstore/types.js";
import { baoCall, baoHealth } from "../../src/testenv/baohttp.js";
import { type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import {
  AZURITE_ACCOUNT,
  type LocalObjectStore,
  S3_TEST_CREDENTIALS,
  startAzurite,
  startGcsServer,
  startS3Server,
} from "../../src/testenv/objectstores.js";
import { freePort } from "../../src/testenv/ports.js";
import { reopenRestoredNode, runExecutorProcess } from "../support/executor.js";

// The executor against real parts: real OpenBao Raft nodes, a real S3-compatible server (gofakes3)
// and Azurite, the executor run as its own process the way the Job runs it.

const BUCKET = "snapshots";
const MiB = 1024 * 1024;
const known = { username: "app", password: "s3cr3t-value" };

async function writeKv(bao: RaftOpenBao, path: string, data: Record<string, string>): Promise<void> {
  await baoCall(bao.addr, bao.rootToken, "POST", `secret/data/${path}`, { data });
}
async function readKv(addr: string, token: string, path: string): Promise<Record<string, string>> {
  return (await baoCall(addr, token, "GET", `secret/data/${path}`)).data.data;
}
async function mountKv(bao: RaftOpenBao): Promise<void> {
  await baoCall(bao.addr, bao.rootToken, "POST", "sys/mounts/secret", {
    type: "kv",
    options: { version: "2" },
  });
  // A new KV v2 mount answers "Upgrading from non-versioned to versioned data" for a moment; a read
  // that gets any other answer (a 404 for the absent path included) means it is ready.
  for (let i = 0; ; i++) {
    try {
      await baoCall(bao.addr, bao.rootToken, "GET", "secret/data/mount-ready-probe");
      return;
    } catch (e) {
      if (!String(e).includes("Upgrading from non-versioned")) return;
      if (i >= 300) throw new Error(`the KV v2 mount stayed in its upgrade for 60 s: ${e}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function job(
  operation: "backup" | "restore",
  bao: { addr: string },
  store: Partial<ExecutorJob["store"]> & Pick<ExecutorJob["store"], "provider" | "key">,
): ExecutorJob {
  return {
    operation,
    openbao: { address: bao.addr },
    auth: { method: "token", secretName: "unused-on-the-host" },
    store: { bucket: BUCKET, partSize: 5 * MiB, concurrency: 2, usePathStyle: true, ...store },
    force: operation === "restore" ? true : undefined,
  };
}

describe("openbao executor: backup and restore through real object stores", () => {
  let source: RaftOpenBao;
  let s3: LocalObjectStore;
  let azurite: LocalObjectStore;
  let gcs: LocalObjectStore;
  const stores: Record<string, { store: ObjectStore; endpoint: string; creds: Record<string, string> }> = {};

  before(async () => {
    [source, s3, azurite, gcs] = await Promise.all([
      startRaftOpenBao({ nodes: 1 }),
      startS3Server({ buckets: [BUCKET] }),
      startAzurite(),
      startGcsServer({ buckets: [BUCKET] }),
    ]);
    await mountKv(source);
    await writeKv(source, "app/db", known);
    stores["s3"] = {
      endpoint: s3.endpoint,
      creds: { ...S3_TEST_CREDENTIALS },
      store: await openObjectStore({
        provider: "s3",
        bucket: BUCKET,
        endpoint: s3.endpoint,
        usePathStyle: true,
        partSize: 5 * MiB,
        concurrency: 2,
        credentials: { s3: { ...S3_TEST_CREDENTIALS } },
      }),
    };
    const azureStore = await openObjectStore({
      provider: "azure",
      bucket: BUCKET,
      endpoint: azurite.endpoint,
      azureStorageAccount: AZURITE_ACCOUNT.name,
      partSize: 5 * MiB,
      concurrency: 2,
      credentials: { azure: { accountKey: AZURITE_ACCOUNT.key } },
    });
    // Azurite starts empty: the container is the bucket the operator is given, created here as an admin would.
    const { BlobServiceClient, StorageSharedKeyCredential } = await import("@azure/storage-blob");
    await new BlobServiceClient(
      azurite.endpoint,
      new StorageSharedKeyCredential(AZURITE_ACCOUNT.name, AZURITE_ACCOUNT.key),
    )
      .getContainerClient(BUCKET)
      .createIfNotExists();
    stores["azure"] = {
      endpoint: azurite.endpoint,
      creds: { accountKey: AZURITE_ACCOUNT.key },
      store: azureStore,
    };
    stores["gcs"] = {
      endpoint: gcs.endpoint,
      creds: {},
      store: await openObjectStore({
        provider: "gcs",
        bucket: BUCKET,
        endpoint: gcs.endpoint,
        gcsProject: "test",
        partSize: 5 * MiB,
        concurrency: 2,
        credentials: {},
      }),
    };
  });

  after(async () => {
    await Promise.all([source?.stop(), s3?.stop(), azurite?.stop(), gcs?.stop()]);
  });

  for (const provider of ["s3", "azure", "gcs"] as const) {
    it(`${provider}: backs up, and a fresh OpenBao restored from the object has the data back`, async () => {
      const { endpoint, creds, store } = stores[provider]!;
      const key = `ns/bao/${provider}-${Date.now()}.snap`;
      const extra =
        provider === "azure"
          ? { azureStorageAccount: AZURITE_ACCOUNT.name }
          : provider === "gcs"
            ? { gcsProject: "test" }
            : {};
      const backup = await runExecutorProcess(job("backup", source, { provider, key, endpoint, ...extra }), {
        token: source.rootToken,
        credentials: creds,
      }).done;
      assert.equal(backup.code, 0, backup.stderr);
      assert.ok(backup.result?.ok, backup.stderr);
      const head = await store.head(key);
      assert.ok(head, "the object exists");
      assert.equal(backup.result.ok && backup.result.size, head.size, "the reported size is the object's");
      assert.ok(head.size > 1000);

      const fresh = await startRaftOpenBao({ nodes: 1 });
      try {
        await mountKv(fresh);
        await baoCall(fresh.addr, fresh.rootToken, "POST", "secret/data/app/db", {
          data: { username: "other" },
        });
        const restore = await runExecutorProcess(
          job("restore", fresh, { provider, key, endpoint, ...extra }),
          {
            token: fresh.rootToken,
            credentials: creds,
          },
        ).done;
        assert.equal(restore.code, 0, restore.stderr);
        assert.ok(restore.result?.ok && restore.result.size === head.size, restore.stderr);
        await reopenRestoredNode(fresh, source.unsealKey);
        assert.deepEqual(await readKv(fresh.addr, source.rootToken, "app/db"), known);
      } finally {
        await fresh.stop();
      }
    });
  }

  it("s3: without force, another cluster's snapshot is refused as SealMismatch and nothing changes", async () => {
    const key = `ns/bao/seal-${Date.now()}.snap`;
    const s3job = (operation: "backup" | "restore", bao: { addr: string }) =>
      job(operation, bao, { provider: "s3", key, endpoint: s3.endpoint });
    const backup = await runExecutorProcess(s3job("backup", source), {
      token: source.rootToken,
      credentials: { ...S3_TEST_CREDENTIALS },
    }).done;
    assert.ok(backup.result?.ok, backup.stderr);
    const fresh = await startRaftOpenBao({ nodes: 1 });
    try {
      await mountKv(fresh);
      await baoCall(fresh.addr, fresh.rootToken, "POST", "secret/data/app/db", {
        data: { username: "other" },
      });
      const res = await runExecutorProcess(
        { ...s3job("restore", fresh), force: false },
        { token: fresh.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
      ).done;
      assert.equal(res.code, 1, res.stderr);
      assert.ok(res.result && !res.result.ok);
      assert.equal(res.result.reason, "SealMismatch");
      assert.match(res.result.error, /could not verify hash file/);
      // Refused before anything was applied: the fresh node serves its own data with its own token.
      assert.equal(await baoHealth(fresh.addr), 200);
      assert.deepEqual(await readKv(fresh.addr, fresh.rootToken, "app/db"), { username: "other" });
    } finally {
      await fresh.stop();
    }
  });

  it("s3: a Job that starts before OpenBao answers waits for it, then backs up", async () => {
    // The address a Job is given can refuse connections for a while (a Service whose endpoint is
    // not published yet): nothing listens on the port until the executor says it is waiting.
    const port = await freePort();
    const key = `ns/bao/late-${Date.now()}.snap`;
    const run = runExecutorProcess(
      job("backup", { addr: `http://127.0.0.1:${port}` }, { provider: "s3", key, endpoint: s3.endpoint }),
      { token: source.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
    );
    await Promise.race([
      run.waiting,
      run.done.then((r) => assert.fail(`the executor ended without waiting: ${r.stderr}`)),
    ]);
    const target = new URL(source.addr);
    const forwarder = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => forwarder.listen(port, "127.0.0.1", resolve));
    try {
      const res = await run.done;
      assert.equal(res.code, 0, res.stderr);
      assert.ok(res.result?.ok, res.stderr);
      assert.match(res.stderr, /waiting for OpenBao to answer: .*ECONNREFUSED/);
      assert.ok(await stores["s3"]!.store.head(key), "the snapshot was uploaded once OpenBao answered");
    } finally {
      await new Promise((resolve) => forwarder.close(resolve));
    }
  });

  it("s3: Raft not ready for a snapshot yet (a cluster just formed): the backup asks again, then succeeds", async () => {
    // OpenBao's answer (seen in CI on a cluster seconds old) until Raft has applied its latest
    // configuration entry. A proxy in front of the real node gives it twice, then lets the request through.
    const notReady = {
      errors: [
        "1 error occurred:\n\t* raft error when taking snapshot: cannot take snapshot now, wait until the configuration entry at 49 has been applied (have applied 48)\n\n",
      ],
    };
    let refusals = 0;
    const target = new URL(source.addr);
    const proxy = createHttpServer((req, res) => {
      if (req.url === "/v1/sys/storage/raft/snapshot" && refusals < 2) {
        refusals++;
        req.resume();
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify(notReady));
        return;
      }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => proxy.listen(port, "127.0.0.1", resolve));
    try {
      const key = `ns/bao/not-ready-${Date.now()}.snap`;
      const res = await runExecutorProcess(
        job("backup", { addr: `http://127.0.0.1:${port}` }, { provider: "s3", key, endpoint: s3.endpoint }),
        { token: source.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
      ).done;
      assert.equal(res.code, 0, res.stderr);
      assert.ok(res.result?.ok, res.stderr);
      assert.equal(refusals, 2);
      assert.equal((res.stderr.match(/cannot take snapshot now/g) ?? []).length, 2, res.stderr);
      assert.ok(await stores["s3"]!.store.head(key), "the snapshot was uploaded once Raft could take it");
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("an address that never answers fails after the wait, naming the address and the last error", async () => {
    const port = await freePort();
    const heard: string[] = [];
    await assert.rejects(
      untilAnswering(await connection(`http://127.0.0.1:${port}`), {
        withinMs: 1500,
        onWaiting: (why) => heard.push(why),
      }),
      (err: Error) => {
        assert.match(
          err.message,
          new RegExp(`did not answer at http://127.0.0.1:${port} within 2 s: .*ECONNREFUSED`),
        );
        return true;
      },
    );
    assert.ok(heard.length >= 2, `retried with pauses, heard ${heard.length}`);
    // A node that answers at all, here the source, ends the wait at once.
    await untilAnswering(await connection(source.addr), { withinMs: 1500 });
  });

  it("s3: a wrong key fails the restore with a clear reason, and no secret in the message", async () => {
    const res = await runExecutorProcess(
      job("restore", source, { provider: "s3", key: "missing.snap", endpoint: s3.endpoint }),
      { token: source.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
    ).done;
    assert.equal(res.code, 1);
    assert.ok(res.result && !res.result.ok);
    assert.equal(res.result.reason, "DownloadFailed");
    assert.match(res.result.error, /missing\.snap/);
    for (const secret of [source.rootToken, S3_TEST_CREDENTIALS.secretAccessKey])
      assert.ok(!res.stderr.includes(secret) && !res.result.error.includes(secret));
  });

  it("s3: the object store down when a restore opens its download: the restore waits for it, then completes; never back: DownloadFailed after the wait", {
    timeout: 240_000,
  }, async () => {
    const flaky = await startS3Server({ buckets: [BUCKET] });
    const key = "ns/bao/restore-waits.snap";
    const s3At = (endpoint: string) =>
      openObjectStore({
        provider: "s3",
        bucket: BUCKET,
        endpoint,
        usePathStyle: true,
        partSize: 5 * MiB,
        concurrency: 2,
        credentials: { s3: { ...S3_TEST_CREDENTIALS } },
      });
    const backup = await runExecutorProcess(
      job("backup", source, { provider: "s3", key, endpoint: flaky.endpoint }),
      { token: source.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
    ).done;
    assert.ok(backup.result?.ok, backup.stderr);
    const download = await (await s3At(flaky.endpoint)).download(key);
    const bytes = Buffer.concat(await download.body.toArray());
    await flaky.stop();

    const fresh = await startRaftOpenBao({ nodes: 1 });
    let again: LocalObjectStore | undefined;
    try {
      await mountKv(fresh);
      await baoCall(fresh.addr, fresh.rootToken, "POST", "secret/data/app/db", {
        data: { username: "other" },
      });
      // Never back within a short wait: the restore fails naming the store's silence, OpenBao untouched.
      const gone = await runExecutorProcess(
        job("restore", fresh, { provider: "s3", key, endpoint: flaky.endpoint }),
        { token: fresh.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
        { storeWaitSeconds: 3 },
      ).done;
      assert.equal(gone.code, 1, gone.stderr);
      assert.ok(gone.result && !gone.result.ok);
      assert.equal(gone.result.reason, "DownloadFailed");
      assert.match(gone.result.error, /the object store did not answer over \d+ attempts in 3 s/);
      assert.deepEqual(await readKv(fresh.addr, fresh.rootToken, "app/db"), { username: "other" });

      // Back with its objects once the executor said it waits: the same restore completes.
      const run = runExecutorProcess(
        job("restore", fresh, { provider: "s3", key, endpoint: flaky.endpoint }),
        {
          token: fresh.rootToken,
          credentials: { ...S3_TEST_CREDENTIALS },
        },
      );
      await run.storeWaiting;
      again = await startS3Server({ buckets: [BUCKET], port: flaky.port });
      await (await s3At(again.endpoint)).upload(key, Readable.from([bytes]));
      const res = await run.done;
      assert.equal(res.code, 0, res.stderr);
      assert.ok(res.result?.ok && res.result.size === bytes.length, res.stderr);
      assert.match(res.stderr, /the object store did not answer, trying again/);
      await reopenRestoredNode(fresh, source.unsealKey);
      assert.deepEqual(await readKv(fresh.addr, source.rootToken, "app/db"), known);
    } finally {
      await Promise.all([fresh.stop(), again?.stop()]);
    }
  });

  describe("interrupted uploads leave no object", () => {
    before(async () => {
      // Incompressible values so the snapshot spans several 5 MiB parts.
      for (let i = 0; i < 40; i++)
        await writeKv(source, `bulk/${i}`, { v: randomBytes(600 * 1024).toString("base64") });
    });

    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      it(`s3: the executor ${signal === "SIGTERM" ? "terminated (the Job deleted)" : "killed"} mid-upload`, async () => {
        const key = `ns/bao/interrupted-${signal}.snap`;
        const run = runExecutorProcess(
          job("backup", source, { provider: "s3", key, endpoint: s3.endpoint }),
          {
            token: source.rootToken,
            credentials: { ...S3_TEST_CREDENTIALS },
          },
        );
        await run.progressed;
        run.kill(signal);
        const res = await run.done;
        if (signal === "SIGTERM") {
          assert.equal(res.code, 1, res.stderr);
          assert.ok(res.result && !res.result.ok);
          assert.equal(res.result.reason, "Interrupted");
        } else assert.equal(res.signal, "SIGKILL");
        const left = await stores["s3"]!.store.list("ns/bao/interrupted-");
        assert.deepEqual(
          left.map((o) => o.key),
          [],
        );
      });
    }

    it("s3: the object store stopped mid-upload and never back fails the backup with UploadFailed once its wait is over", async () => {
      const flaky = await startS3Server({ buckets: [BUCKET] });
      const run = runExecutorProcess(
        job("backup", source, { provider: "s3", key: "ns/bao/flaky.snap", endpoint: flaky.endpoint }),
        { token: source.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
        { storeWaitSeconds: 4 },
      );
      await run.progressed;
      await flaky.stop();
      const res = await run.done;
      assert.equal(res.code, 1, res.stderr);
      assert.ok(res.result && !res.result.ok);
      assert.equal(res.result.reason, "UploadFailed");
      assert.match(res.result.error, /ns\/bao\/flaky\.snap/);
      assert.match(res.result.error, /the object store did not answer over \d+ attempts in 4 s/);
    });

    it("s3: the object store stopped mid-upload and started again: the backup tries again and completes", {
      timeout: 180_000,
    }, async () => {
      const flaky = await startS3Server({ buckets: [BUCKET] });
      const key = "ns/bao/back-again.snap";
      const run = runExecutorProcess(
        job("backup", source, { provider: "s3", key, endpoint: flaky.endpoint }),
        { token: source.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
      );
      await run.progressed;
      await flaky.stop();
      // Started again on its port (empty, as a restarted in-memory server) once the executor said it waits.
      await run.storeWaiting;
      const again = await startS3Server({ buckets: [BUCKET], port: flaky.port });
      try {
        const res = await run.done;
        assert.equal(res.code, 0, res.stderr);
        assert.ok(res.result?.ok, res.stderr);
        const store = await openObjectStore({
          provider: "s3",
          bucket: BUCKET,
          endpoint: again.endpoint,
          usePathStyle: true,
          partSize: 5 * MiB,
          concurrency: 2,
          credentials: { s3: { ...S3_TEST_CREDENTIALS } },
        });
        const objects = await store.list("ns/bao/back-again");
        assert.deepEqual(
          objects.map((o) => [o.key, o.size]),
          [[key, res.result.size]],
          "one complete object under the key",
        );
      } finally {
        await again.stop();
      }
    });
  });

  it("s3: memory stays flat while streaming a snapshot several times larger than the executor's heap", async () => {
    const heapMb = 64;
    const targetMb = Number(process.env["EXECUTOR_TEST_SNAPSHOT_MB"] ?? 200);
    await fillTo(source, targetMb * MiB);
    const key = "ns/bao/large.snap";
    const res = await runExecutorProcess(
      job("backup", source, { provider: "s3", key, endpoint: s3.endpoint }),
      { token: source.rootToken, credentials: { ...S3_TEST_CREDENTIALS } },
      { maxOldSpaceMb: heapMb },
    ).done;
    assert.equal(res.code, 0, res.stderr);
    assert.ok(res.result?.ok);
    const size = res.result.size;
    const peakMb = (res.peakRssKb ?? Number.POSITIVE_INFINITY) / 1024;
    console.log(
      `snapshot ${(size / MiB).toFixed(0)} MiB streamed in ${(res.result.durationMs / 1000).toFixed(1)} s with a ${heapMb} MiB heap, executor peak RSS ${peakMb.toFixed(0)} MiB`,
    );
    assert.ok(size > 3 * heapMb * MiB, `the snapshot (${size} bytes) is several times the heap`);
    // Node's own baseline plus the SDKs is ~100 MiB; parts in flight add partSize × (concurrency + 1).
    assert.ok(peakMb < 200, `peak RSS ${peakMb.toFixed(0)} MiB stays well under the snapshot size`);
    assert.equal((await stores["s3"]!.store.head(key))?.size, size);
  });
});

/** Writes incompressible values until the Raft snapshot would be about `bytes` large. */
async function fillTo(bao: RaftOpenBao, bytes: number): Promise<void> {
  const value = 600 * 1024;
  const count = Math.ceil(bytes / value);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await writeKv(bao, `large/${i}`, { v: randomBytes(value).toString("base64") });
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}
