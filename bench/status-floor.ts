import type { KubeClient } from "../src/runtime/client.js";
import type { ResourceType } from "../src/runtime/types.js";

/**
 * The API server's side of a first seed: `n` objects given their first status by a plain client,
 * one server-side apply each, `concurrency` at once — what the operator's one status write per new
 * object costs at least. The objects are created first (not timed) in a namespace of their own, so
 * the seeded ones are left as they are.
 */
export async function statusFloorSeconds(opts: {
  client: KubeClient;
  type: ResourceType;
  namespace: string;
  n: number;
  concurrency: number;
  /** The object's spec and its first status, as the operator would write it. */
  object: (i: number) => { spec: Record<string, unknown>; status: Record<string, unknown> };
  /** Called as the timed part begins (after the untimed creates), e.g. to sample CPU from there. */
  onStart?: () => void;
}): Promise<number> {
  const { client, type, namespace: ns, n, concurrency } = opts;
  const name = (i: number) => `f${String(i).padStart(6, "0")}`;
  const apiVersion = `${type.group}/${type.version}`;
  const each = async (f: (i: number) => Promise<unknown>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) await f(next++);
      }),
    );
  };
  await each((i) =>
    client.create(type, {
      apiVersion,
      kind: type.kind,
      metadata: { name: name(i), namespace: ns },
      spec: opts.object(i).spec,
    }),
  );
  opts.onStart?.();
  const started = performance.now();
  await each((i) =>
    client.applyStatus(
      type,
      {
        apiVersion,
        kind: type.kind,
        metadata: { name: name(i), namespace: ns },
        status: opts.object(i).status,
      },
      { fieldManager: "bench-status-floor", force: true },
    ),
  );
  return (performance.now() - started) / 1000;
}
