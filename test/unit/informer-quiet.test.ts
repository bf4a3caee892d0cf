import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { LIMIT_RANGE } from "../../src/runtime/builtin-types.js";
import type { KubeClient, Watch, WatchOptions } from "../../src/runtime/client.js";
import { Informer } from "../../src/runtime/informer.js";
import { createLogger } from "../../src/runtime/log.js";

// What an informer does with a watch that has nothing to say, against a client whose answers the
// test sets: the connection answers a ping, cannot be pinged (HTTP/1.1), or is dead; and, once the
// silence is long enough, whether the server has reached the watch's resourceVersion. A quiet
// period is 2 × bookmarkIntervalMs = 40 ms here. Each case waits for the calls it counts, never
// for a fixed time.

interface Script {
  alive: boolean | undefined;
  reached?: boolean;
}

function fakeClient(script: Script) {
  const calls = { lists: 0, watchRvs: [] as (string | undefined)[], pings: 0, probes: [] as string[] };
  let rv = 10;
  const client = {
    async list() {
      calls.lists++;
      return { metadata: { resourceVersion: String(rv) }, items: [] };
    },
    watch(_type: unknown, opts: WatchOptions): Watch {
      calls.watchRvs.push(opts.resourceVersion);
      let end!: () => void;
      const done = new Promise<void>((r) => {
        end = r;
      });
      return {
        done,
        abort: () => end(),
        async connectionAlive() {
          calls.pings++;
          return script.alive;
        },
      };
    },
    async reachedResourceVersion(_type: unknown, _ns: unknown, version: string) {
      calls.probes.push(version);
      // A server behind us until the relist: the next list answers a version it has.
      if (script.reached === false) rv = 5;
      return script.reached ?? true;
    },
  };
  return { client: client as unknown as KubeClient, calls };
}

function recordingLog() {
  const lines: { level: string; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { log: createLogger({ level: "debug", stream: sink }), lines };
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function informerOn(client: KubeClient, log: ReturnType<typeof recordingLog>["log"], staleAfterMs?: number) {
  return new Informer(client, LIMIT_RANGE, {
    namespaces: ["ns"],
    log,
    bookmarkIntervalMs: 20,
    backoffMinMs: 1,
    backoffMaxMs: 5,
    ...(staleAfterMs === undefined ? {} : { staleAfterMs }),
  });
}

const aboveDebug = (lines: { level: string }[]) => lines.filter((l) => l.level !== "debug");

describe("informer: quiet watches", () => {
  it("keeps a quiet watch whose connection answers: no list, no new watch, nothing above debug", async () => {
    const { client, calls } = fakeClient({ alive: true });
    const rec = recordingLog();
    const inf = informerOn(client, rec.log);
    inf.start();
    try {
      await until(() => calls.pings >= 3, "three quiet periods judged");
      assert.equal(calls.lists, 1);
      assert.deepEqual(calls.watchRvs, ["10"]);
      assert.deepEqual(calls.probes, []);
      assert.deepEqual(aboveDebug(rec.lines), []);
      assert.ok(rec.lines.filter((l) => l.msg === "watch quiet").length >= 3);
    } finally {
      await inf.stop();
    }
  });

  it("opens a quiet watch again from its resourceVersion where its connection cannot be pinged", async () => {
    const { client, calls } = fakeClient({ alive: undefined });
    const rec = recordingLog();
    const inf = informerOn(client, rec.log);
    inf.start();
    try {
      await until(() => calls.watchRvs.length >= 3, "three watches");
      assert.equal(calls.lists, 1, "never listed again");
      assert.deepEqual(calls.watchRvs.slice(0, 3), ["10", "10", "10"]);
      assert.deepEqual(aboveDebug(rec.lines), []);
    } finally {
      await inf.stop();
    }
  });

  it("resumes from its resourceVersion after a dead connection, and says so at warn", async () => {
    const { client, calls } = fakeClient({ alive: false });
    const rec = recordingLog();
    const inf = informerOn(client, rec.log);
    inf.start();
    try {
      await until(() => calls.watchRvs.length >= 2, "a second watch");
      assert.equal(calls.lists, 1, "a dead connection is no reason to list");
      assert.equal(calls.watchRvs[1], "10");
      assert.ok(rec.lines.some((l) => l.level === "warn" && l.msg === "list/watch failed; retrying"));
    } finally {
      await inf.stop();
    }
  });

  it("after staleAfterMs asks whether the server reached its resourceVersion, and keeps the watch when it has", async () => {
    const { client, calls } = fakeClient({ alive: true, reached: true });
    const rec = recordingLog();
    // Stale after one quiet period: a check, then the silence counts again from the answer.
    const inf = informerOn(client, rec.log, 30);
    inf.start();
    try {
      await until(() => calls.probes.length >= 2, "two freshness checks");
      assert.equal(calls.lists, 1);
      assert.deepEqual(calls.watchRvs, ["10"]);
      assert.deepEqual(calls.probes.slice(0, 2), ["10", "10"]);
      assert.deepEqual(aboveDebug(rec.lines), []);
    } finally {
      await inf.stop();
    }
  });

  it("lists again when the server has not reached the watch's resourceVersion, and warns", async () => {
    const { client, calls } = fakeClient({ alive: true, reached: false });
    const rec = recordingLog();
    const inf = informerOn(client, rec.log, 30);
    inf.start();
    try {
      await until(() => calls.lists >= 2, "a relist");
      await until(() => calls.watchRvs.length >= 2, "the watch from the new list");
      assert.equal(calls.watchRvs[1], "5", "watches from what the server has");
      const warned = rec.lines.filter((l) => l.level === "warn");
      assert.ok(warned.length >= 1 && /has not reached/.test(warned[0]!.msg));
    } finally {
      await inf.stop();
    }
  });
});
