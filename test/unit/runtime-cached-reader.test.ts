import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, SECRET } from "../../src/runtime/builtin-types.js";
import { CachedReader, type ReadableCache } from "../../src/runtime/cached-reader.js";
import { KubeClient } from "../../src/runtime/client.js";
import { matchesLabels, parseLabelSelector, selectorWithin } from "../../src/runtime/labels.js";
import { silentLogger } from "../../src/runtime/log.js";
import { registry } from "../../src/runtime/metrics.js";
import { type KubeObject, objectKey, type ResourceType } from "../../src/runtime/types.js";

// The reader decides, per read, whether a cache can answer it; when none can, the request goes to
// the API server. The "server" here is the test's own loopback recorder: it counts what reaches it
// and answers as the API server would (404 for an unknown name, the object for a known one).

const STORAGECLASS: ResourceType = {
  group: "storage.k8s.io",
  version: "v1",
  kind: "StorageClass",
  plural: "storageclasses",
  namespaced: false,
};

/** What an Informer offers the reader, over a fixed set of objects. */
function cache(
  type: ResourceType,
  objects: KubeObject[],
  opts: {
    namespaces?: string[];
    labelSelector?: string;
    fieldSelector?: string;
    managedFields?: boolean;
    synced?: boolean;
  } = {},
): ReadableCache & { store: Map<string, KubeObject> } {
  const store = new Map(objects.map((o) => [objectKey(o), o]));
  return {
    type,
    store,
    hasSynced: opts.synced ?? true,
    ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
    ...(opts.fieldSelector ? { fieldSelector: opts.fieldSelector } : {}),
    metadataOnly: false,
    keepsManagedFields: opts.managedFields ?? false,
    covers: (ns) =>
      !type.namespaced || !opts.namespaces || (ns !== undefined && opts.namespaces.includes(ns)),
    get: (key) => store.get(key),
    list: (ns) => [...store.values()].filter((o) => ns === undefined || o.metadata.namespace === ns),
  };
}

const obj = (
  name: string,
  namespace: string | undefined,
  labels: Record<string, string> = {},
  rv = "1",
): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, ...(namespace ? { namespace } : {}), labels, resourceVersion: rv },
});

describe("label selectors", () => {
  it("match as the API server does: =, ==, !=, in, notin, exists, !exists", () => {
    const l = { app: "bao", tier: "server" };
    const m = (s: string) => matchesLabels(parseLabelSelector(s), l);
    assert.equal(m(""), true);
    assert.equal(m("app=bao"), true);
    assert.equal(m("app==bao,tier=server"), true);
    assert.equal(m("app=vault"), false);
    assert.equal(m("app!=vault"), true);
    assert.equal(m("missing!=x"), true);
    assert.equal(m("tier in (server, replica)"), true);
    assert.equal(m("tier notin (server)"), false);
    assert.equal(m("app"), true);
    assert.equal(m("!app"), false);
    assert.equal(m("!missing,app in (bao)"), true);
  });

  it("refuse what is not a selector, naming the part", () => {
    assert.throws(() => parseLabelSelector("a=b,=c"), /"a=b,=c"/);
  });

  it("tell a narrower selector from a wider one", () => {
    const p = parseLabelSelector;
    assert.equal(selectorWithin(p("a=1,b=2"), p("a=1")), true);
    assert.equal(selectorWithin(p("a=1"), p("a")), true, "a=1 implies that a exists");
    assert.equal(selectorWithin(p("a=1"), p("a=1,b=2")), false);
    assert.equal(selectorWithin(p(""), p("a")), false);
    assert.equal(selectorWithin(p("b=2"), p("")), true);
  });
});

describe("CachedReader", () => {
  let server: Server;
  let client: KubeClient;
  const requests: string[] = [];
  /** Objects the recorder serves by path. */
  const live = new Map<string, KubeObject>();

  before(async () => {
    let rv = 100;
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = (req.url ?? "").split("?")[0]!;
        requests.push(`${req.method} ${req.url}`);
        res.setHeader("content-type", "application/json");
        if (req.method === "POST") {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as KubeObject;
          body.metadata.resourceVersion = String(++rv);
          live.set(`${path}/${body.metadata.name}`, body);
          res.end(JSON.stringify(body));
          return;
        }
        const found = live.get(path);
        if (req.method === "GET" && found) {
          res.end(JSON.stringify(found));
          return;
        }
        if (req.method === "GET" && /\/(secrets|configmaps|storageclasses)$/.test(path)) {
          res.end(JSON.stringify({ kind: "List", metadata: {}, items: [] }));
          return;
        }
        res.statusCode = 404;
        res.end(JSON.stringify({ kind: "Status", code: 404, reason: "NotFound", message: "not found" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    client = new KubeClient({
      server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      source: "test",
      requestAuth: async () => ({}),
    });
  });
  after(() => {
    client.close();
    server.closeAllConnections();
    server.close();
  });

  /** cached_reader_live_reads_total by "verb resource reason". */
  const liveReads = async (): Promise<Record<string, number>> => {
    const out: Record<string, number> = {};
    for (const line of (await registry.metrics()).split("\n")) {
      const m = /^cached_reader_live_reads_total\{([^}]*)\} (\d+)/.exec(line);
      if (!m) continue;
      const label = (l: string) => new RegExp(`${l}="([^"]*)"`).exec(m[1]!)?.[1];
      out[`${label("verb")} ${label("resource")} ${label("reason")}`] = Number(m[2]);
    }
    return out;
  };
  const grewBy = (before: Record<string, number>, after: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(after)
        .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
        .filter(([, d]) => d > 0),
    );

  const counted = async <T>(f: () => Promise<T>): Promise<{ value: T; requests: string[] }> => {
    const from = requests.length;
    const value = await f();
    return { value, requests: requests.slice(from) };
  };

  it("answers gets and lists of a watched namespace from the cache; a miss is absence, not a request", async () => {
    const secrets = cache(
      SECRET,
      [obj("a", "ns1", { app: "bao" }), obj("b", "ns1", { app: "vault" }), obj("c", "ns2")],
      {
        namespaces: ["ns1", "ns2"],
      },
    );
    const reader = new CachedReader(client, () => [secrets], silentLogger());
    const readsBefore = await liveReads();
    try {
      const hit = await counted(() => reader.get(SECRET, "a", "ns1"));
      assert.equal(hit.value?.metadata.name, "a");
      const miss = await counted(() => reader.get(SECRET, "nope", "ns1"));
      assert.equal(miss.value, undefined);
      const listed = await counted(() => reader.list(SECRET, { namespace: "ns1", labelSelector: "app=bao" }));
      assert.deepEqual(
        listed.value.map((o) => o.metadata.name),
        ["a"],
      );
      const all = await counted(() => reader.list(SECRET, { namespace: "ns1" }));
      assert.deepEqual(all.value.map((o) => o.metadata.name).sort(), ["a", "b"]);
      assert.deepEqual([...hit.requests, ...miss.requests, ...listed.requests, ...all.requests], []);
      assert.deepEqual(grewBy(readsBefore, await liveReads()), {}, "cache answers are not live reads");
    } finally {
      reader.close();
    }
  });

  it("reads live outside the cache's namespaces, for kinds nobody watches, and before the cache synced", async () => {
    const secrets = cache(SECRET, [obj("a", "ns1")], { namespaces: ["ns1"] });
    const unsynced = cache(CONFIGMAP, [], { synced: false });
    const reader = new CachedReader(client, () => [secrets, unsynced], silentLogger());
    const readsBefore = await liveReads();
    try {
      const other = await counted(() => reader.get(SECRET, "a", "elsewhere"));
      assert.equal(other.value, undefined);
      assert.deepEqual(other.requests, ["GET /api/v1/namespaces/elsewhere/secrets/a"]);
      const everywhere = await counted(() => reader.list(SECRET, {}));
      assert.deepEqual(everywhere.requests, ["GET /api/v1/secrets"]);
      const cm = await counted(() => reader.get(CONFIGMAP, "x", "ns1"));
      assert.deepEqual(cm.requests, ["GET /api/v1/namespaces/ns1/configmaps/x"]);
      const sc = await counted(() => reader.list(STORAGECLASS));
      assert.deepEqual(sc.requests, ["GET /apis/storage.k8s.io/v1/storageclasses"]);
      // Each is counted once, by what was read and why, so a settled target's live reads can be found.
      assert.deepEqual(grewBy(readsBefore, await liveReads()), {
        "get secrets uncovered": 1,
        "list secrets uncovered": 1,
        "get configmaps uncovered": 1,
        "list storageclasses uncovered": 1,
      });
    } finally {
      reader.close();
    }
  });

  it("uses a label-selected cache only for what it selects", async () => {
    const owned = cache(SECRET, [obj("mine", "ns1", { "openbao.org/cluster": "bao" })], {
      namespaces: ["ns1"],
      labelSelector: "openbao.org/cluster",
    });
    const reader = new CachedReader(client, () => [owned], silentLogger());
    try {
      // A narrower list is served (and filtered); a wider one cannot be.
      const narrow = await counted(() =>
        reader.list(SECRET, { namespace: "ns1", labelSelector: "openbao.org/cluster=bao" }),
      );
      assert.deepEqual(
        narrow.value.map((o) => o.metadata.name),
        ["mine"],
      );
      assert.deepEqual(narrow.requests, []);
      const other = await counted(() =>
        reader.list(SECRET, { namespace: "ns1", labelSelector: "openbao.org/cluster=other" }),
      );
      assert.deepEqual(other.value, []);
      assert.deepEqual(other.requests, []);
      const wide = await counted(() => reader.list(SECRET, { namespace: "ns1" }));
      assert.equal(wide.requests.length, 1);
      // A get: only when the caller knows the object carries the selected labels.
      const unknown = await counted(() => reader.get(SECRET, "absent", "ns1"));
      assert.equal(
        unknown.requests.length,
        1,
        "a miss of a selecting cache says nothing of unlabelled objects",
      );
      const labelled = await counted(() =>
        reader.get(SECRET, "absent", "ns1", { labels: { "openbao.org/cluster": "bao" } }),
      );
      assert.equal(labelled.value, undefined);
      assert.deepEqual(labelled.requests, []);
    } finally {
      reader.close();
    }
  });

  it("answers a get by name from a cache that selects that one name, and asks managedFields of the cache", async () => {
    const one = cache(SECRET, [obj("kubernetes", "default")], {
      namespaces: ["default"],
      fieldSelector: "metadata.name=kubernetes",
    });
    const reader = new CachedReader(client, () => [one], silentLogger());
    try {
      const hit = await counted(() => reader.get(SECRET, "kubernetes", "default"));
      assert.equal(hit.value?.metadata.name, "kubernetes");
      assert.deepEqual(hit.requests, []);
      const otherName = await counted(() => reader.get(SECRET, "other", "default"));
      assert.equal(otherName.requests.length, 1);
      const fields = await counted(() =>
        reader.get(SECRET, "kubernetes", "default", { managedFields: true }),
      );
      assert.equal(fields.requests.length, 1, "a slimmed cache cannot answer for managedFields");
    } finally {
      reader.close();
    }
  });

  it("reads its own new write back from the API server until the cache has it, then from the cache", async () => {
    const secrets = cache(SECRET, [], { namespaces: ["ns1"] });
    const reader = new CachedReader(client, () => [secrets], silentLogger());
    const readsBefore = await liveReads();
    try {
      const made = await client.create(SECRET, obj("fresh", "ns1"));
      const before = await counted(() => reader.get(SECRET, "fresh", "ns1"));
      assert.equal(before.value?.metadata.name, "fresh", "a write of this process is seen at once");
      assert.equal(before.requests.length, 1);
      const listed = await counted(() => reader.list(SECRET, { namespace: "ns1" }));
      assert.equal(listed.requests.length, 1, "a list that could hold the write is live too");
      // The watch delivers it: from now on the cache answers.
      secrets.store.set("ns1/fresh", made);
      const afterwards = await counted(() => reader.get(SECRET, "fresh", "ns1"));
      assert.equal(afterwards.value?.metadata.resourceVersion, made.metadata.resourceVersion);
      assert.deepEqual(afterwards.requests, []);
      const again = await counted(() => reader.list(SECRET, { namespace: "ns1" }));
      assert.deepEqual(again.requests, []);
      assert.deepEqual(grewBy(readsBefore, await liveReads()), {
        "get secrets own-write": 1,
        "list secrets own-write": 1,
      });
    } finally {
      reader.close();
    }
  });

  it("takes a later version in the cache (another writer after ours) as showing its write; an older one not", async () => {
    const secrets = cache(SECRET, [], { namespaces: ["ns1"] });
    const reader = new CachedReader(client, () => [secrets], silentLogger());
    try {
      const made = await client.create(SECRET, obj("contested", "ns1"));
      const rv = BigInt(made.metadata.resourceVersion!);
      // The watch is behind: it still shows the version before ours.
      secrets.store.set("ns1/contested", {
        ...made,
        metadata: { ...made.metadata, resourceVersion: String(rv - 1n) },
      });
      const behind = await counted(() => reader.get(SECRET, "contested", "ns1"));
      assert.equal(behind.requests.length, 1, "an older version does not show our write");
      // Someone wrote after us (a controller's status, a label); the watch delivers that version, never ours.
      secrets.store.set("ns1/contested", {
        ...made,
        metadata: { ...made.metadata, resourceVersion: String(rv + 3n) },
      });
      const later = await counted(() => reader.get(SECRET, "contested", "ns1"));
      assert.equal(later.value?.metadata.resourceVersion, String(rv + 3n));
      assert.deepEqual(later.requests, [], "a later version holds our write");
      const listed = await counted(() => reader.list(SECRET, { namespace: "ns1" }));
      assert.deepEqual(listed.requests, []);
    } finally {
      reader.close();
    }
  });

  it("forgets a write the cache never showed after its memory expires", async () => {
    let now = 0;
    const secrets = cache(SECRET, [], { namespaces: ["ns2"] });
    const reader = new CachedReader(client, () => [secrets], silentLogger(), {
      writeMemoryMs: 1_000,
      now: () => now,
    });
    try {
      await client.create(SECRET, obj("lost", "ns2"));
      assert.equal((await counted(() => reader.get(SECRET, "lost", "ns2"))).requests.length, 1);
      now = 5_000;
      const later = await counted(() => reader.get(SECRET, "lost", "ns2"));
      assert.equal(later.value, undefined);
      assert.deepEqual(later.requests, []);
    } finally {
      reader.close();
    }
  });
});
