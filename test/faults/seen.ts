import { createHash } from "node:crypto";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";

/** One object as it was stored at some moment: which incarnation (uid) and, for a Secret, what it held. */
export interface SeenVersion {
  name: string;
  uid: string;
  /** sha256 of the Secret's data (values are compared, never kept or printed); "" for other kinds. */
  digest: string;
  /** Labels when first seen (a Job's component, say). */
  labels: Record<string, string>;
}

export interface SeenObjects {
  /** Every distinct (name, uid, digest) the API server reported since start, in order. */
  readonly versions: SeenVersion[];
  /** Distinct uids seen under `name`. */
  uids(name: string): string[];
  /** Distinct digests seen under `name`. */
  digests(name: string): string[];
  stop(): Promise<void>;
}

function digestOf(o: KubeObject): string {
  const data = (o as { data?: Record<string, string> }).data;
  if (!data) return "";
  const h = createHash("sha256");
  for (const k of Object.keys(data).sort()) h.update(`${k}\0${data[k]}\0`);
  return h.digest("hex");
}

/**
 * Every version of every `type` object in `ns` the API server stores from now on, by watch (list,
 * then watch from its resourceVersion, re-listed when the watch ends): an object that lived a
 * moment between two looks (a second root-token Secret replaced at once, a backup Job created
 * twice) is still counted. The harness's own view, independent of the operator under test.
 */
export function watchSeen(client: KubeClient, type: ResourceType, ns: string): SeenObjects {
  const versions: SeenVersion[] = [];
  const keys = new Set<string>();
  let stopped = false;
  let current: { abort(): void } | undefined;
  const take = (o: KubeObject) => {
    const v = {
      name: o.metadata.name!,
      uid: o.metadata.uid!,
      digest: digestOf(o),
      labels: { ...(o.metadata.labels ?? {}) },
    };
    const key = `${v.name}\0${v.uid}\0${v.digest}`;
    if (keys.has(key)) return;
    keys.add(key);
    versions.push(v);
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        const list = await client.list<KubeObject>(type, { namespace: ns });
        for (const o of list.items) take(o);
        const w = client.watch(
          type,
          { namespace: ns, resourceVersion: list.metadata?.resourceVersion, timeoutSeconds: 300 },
          (e) => {
            if (e.type === "ADDED" || e.type === "MODIFIED") take(e.object as KubeObject);
          },
        );
        current = w;
        await w.done;
      } catch {
        // The API server was away or the watch expired: list again after a breath.
        if (!stopped) await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();
  const distinct = (name: string, f: (v: SeenVersion) => string) => [
    ...new Set(versions.filter((v) => v.name === name).map(f)),
  ];
  return {
    versions,
    uids: (name) => distinct(name, (v) => v.uid),
    digests: (name) => distinct(name, (v) => v.digest),
    async stop() {
      stopped = true;
      current?.abort();
      await loop;
    },
  };
}
