// Direct etcd access through its JSON gateway, for tests that change storage behind the API server's
// back (deleting a key while it is down, compacting history so old resourceVersions expire).

export interface EtcdKv {
  url: string;
  /** Current store revision. */
  revision(): Promise<number>;
  deleteKey(key: string): Promise<void>;
  /** Compacts all history up to the current revision; watches from before it get 410 Gone. */
  compact(): Promise<void>;
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export function etcdKv(url: string): EtcdKv {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status}: ${text}`);
    return JSON.parse(text) as { header?: { revision?: string }; deleted?: string };
  };
  const kv: EtcdKv = {
    url,
    async revision() {
      const res = await post("/v3/kv/range", { key: b64("\0"), count_only: true });
      return Number(res.header?.revision ?? 0);
    },
    async deleteKey(key) {
      const res = await post("/v3/kv/deleterange", { key: b64(key) });
      if (Number(res.deleted ?? 0) === 0) throw new Error(`etcd: no key ${key}`);
    },
    async compact() {
      await post("/v3/kv/compaction", { revision: String(await kv.revision()), physical: true });
    },
  };
  return kv;
}
