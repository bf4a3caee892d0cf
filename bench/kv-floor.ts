import { randomBytes, randomUUID } from "node:crypto";

/**
 * The floor a first seed is measured against: a plain client doing the vault target's own per-path
 * sequence for a new path — read (not found), data write with check-and-set 0, metadata write —
 * at the same concurrency, against the same OpenBao. What OpenBao itself can take, so a seed's time
 * is reported as a ratio to it rather than as a bare number that moves with the machine.
 */
export async function kvFloorSeconds(opts: {
  addr: string;
  token: string;
  /** `<mount>/<prefix>`: paths `<prefix>/p000000`…, none existing before. */
  prefix: string;
  paths: number;
  concurrency: number;
}): Promise<number> {
  const [mount, ...rest] = opts.prefix.split("/");
  const under = rest.join("/");
  const headers = { "X-Vault-Token": opts.token, "Content-Type": "application/json" };
  const call = async (method: string, path: string, body?: unknown, okStatus: number[] = [200, 204]) => {
    const res = await fetch(`${opts.addr}/v1/${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    await res.arrayBuffer();
    if (!okStatus.includes(res.status)) throw new Error(`${method} ${path}: HTTP ${res.status}`);
  };
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.paths) {
        const p = `${under}/p${String(next++).padStart(6, "0")}`;
        await call("GET", `${mount}/data/${p}`, undefined, [404]);
        await call("POST", `${mount}/data/${p}`, {
          data: {
            user: "svc",
            password: randomBytes(24).toString("base64url").slice(0, 32),
            apiKey: randomBytes(20).toString("hex"),
            id: randomUUID(),
            webhook: "",
          },
          options: { cas: 0 },
        });
        await call("POST", `${mount}/metadata/${p}`, {
          custom_metadata: { "ohmlab.fr/owner": "floor/bench" },
        });
      }
    }),
  );
  return (performance.now() - started) / 1000;
}
